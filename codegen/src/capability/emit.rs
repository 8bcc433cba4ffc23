//! [`CapabilityDecl`] → tokens: the MCP tool descriptor, the canonical descriptor, the
//! input validator and the type-erased registry entry.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::args::Literal;
use crate::ir::{CapabilityDecl, Input, InstanceArg, Param, PreconditionKind, TaskSupport, ToolKindDecl};
use crate::schema::{literal_json, object_members};
use crate::template::{json_string, Hole, Template};
use crate::validator::{object_rules, object_validator};
use trails_pattern::CanonicalField as Field;

/// The MCP `annotations`, derived from the declaration (`runtime/guide/07-wire-contract.md`). Undeclared side effects
/// get MCP's own conservative defaults, stated explicitly.
pub fn annotations(decl: &CapabilityDecl) -> String {
    let (read_only, destructive, open_world) = match &decl.side_effects {
        Some(e) => {
            (e.writes.is_empty() && !e.deletes && !e.overwrites, e.deletes || e.overwrites, !e.external.is_empty())
        }
        None => (false, true, true),
    };
    format!(
        "{{\"readOnlyHint\":{read_only},\"destructiveHint\":{destructive},\"idempotentHint\":{},\"openWorldHint\":{open_world}}}",
        decl.idempotent
    )
}

fn manifest_uri(id: &str) -> String {
    format!("/.well-known/capabilities#{id}")
}

/// The `tools/list` entry.
pub fn descriptor(decl: &CapabilityDecl) -> Template {
    let mut t = Template::new();
    t.text("{\"name\":").string(&decl.name);
    // MCP's key (the canonical descriptor's has the same name, by no rule).
    t.text(",\"description\":").string(&decl.description);
    t.text(",\"inputSchema\":{");
    match &decl.input {
        Input::Shape { ty } => {
            // The type's description too: for a node type, its compound-uniqueness note (which
            // no JSON Schema keyword can state) belongs where the input is written.
            t.hole(Hole::DescriptionMember((**ty).clone()));
            t.hole(Hole::SchemaMembers((**ty).clone()));
        }
        Input::Params(object) => {
            t.append(&object_members(object, None));
        }
    }
    t.text("}");
    t.hole(Hole::OutputSchemaMember(decl.return_type.clone()));
    t.text(",\"annotations\":").text(&annotations(decl));
    t.text(",\"_meta\":{\"trails\":{");
    let mut meta = vec![format!(
        "\"kind\":{}",
        json_string(match decl.kind {
            ToolKindDecl::Runtime => "runtime",
            ToolKindDecl::Meta { .. } => "meta",
        })
    )];
    // The canonical id: the name is a projection of it (`.` → `_`), the id is what the
    // manifest, OpenAPI and `/invoke` use.
    meta.push(format!("\"id\":{}", json_string(&decl.id)));
    meta.push(format!("\"scope\":{}", json_string(decl.scope.as_str())));
    if let ToolKindDecl::Meta { namespace, op } = &decl.kind {
        meta.push(format!("\"namespace\":{}", namespace.as_deref().map(json_string).unwrap_or_else(|| "null".into())));
        meta.push(format!("\"op\":{}", json_string(op)));
    }
    meta.push(format!("\"version\":{}", json_string(&decl.version)));
    meta.push(format!("\"idempotent\":{}", decl.idempotent));
    // Only when they say something: a capability that supersedes another, or one that is not
    // (or no longer) stable.
    if let Some(prior) = &decl.deprecates {
        meta.push(format!("\"deprecates\":{}", json_string(prior)));
    }
    if decl.version_status != "stable" {
        meta.push(format!("\"version_status\":{}", json_string(&decl.version_status)));
    }
    if let Some(question) = &decl.confirm {
        meta.push(format!("\"confirm\":{}", json_string(question)));
    }
    if decl.task != TaskSupport::Forbidden {
        meta.push(format!("\"task\":{}", json_string(decl.task.as_str())));
    }
    meta.push(format!("\"manifest_uri\":{}", json_string(&manifest_uri(&decl.id))));
    t.text(&meta.join(",")).text("}}}");
    t
}

/// A precondition's `parameters` object, as published and as its evaluation reports it.
pub(super) fn precondition_parameters(kind: &PreconditionKind) -> Template {
    let mut t = Template::new();
    let instance = |t: &mut Template, instance: &InstanceArg| {
        t.text("{\"node_type\":\"").hole(Hole::NodeLabel(path_type(&instance.node_type))).text("\",\"key\":");
        t.string(&instance.key.0);
    };
    match kind {
        PreconditionKind::InstanceExists(arg) | PreconditionKind::InstanceAbsent(arg) => {
            instance(&mut t, arg);
            t.text("}");
        }
        PreconditionKind::FieldIn { instance: arg, field, values, equals } => {
            instance(&mut t, arg);
            t.text(",\"field\":").string(&field.0);
            match (equals, values.as_slice()) {
                (true, [value]) => t.text(",\"value\":").text(&literal_json(value)),
                _ => {
                    t.text(&format!(",\"values\":[{}]", values.iter().map(literal_json).collect::<Vec<_>>().join(",")))
                }
            };
            t.text("}");
        }
        PreconditionKind::Check(path) => {
            let name = path.segments.last().map(|segment| segment.ident.to_string()).unwrap_or_default();
            t.text("{\"name\":").string(&name).text("}");
        }
    }
    t
}

/// The function that evaluates `decl`'s preconditions (with the items that check, at build time,
/// that their fields exist), and the `Option<PreconditionFn>` naming it.
fn preconditions(decl: &CapabilityDecl) -> (TokenStream, TokenStream) {
    if decl.preconditions.is_empty() {
        return (quote!(), quote!(::core::option::Option::None));
    }
    let p = quote!(::trails::__private::precondition);
    let mut field_checks = Vec::new();
    // One item each, so every value that could never be there is reported, not the first only.
    let mut value_checks = Vec::new();
    let evaluations = decl.preconditions.iter().map(|precondition| {
        let kind = precondition.kind.name();
        let parameters = precondition_parameters(&precondition.kind).to_tokens();
        let mut instance_check = |instance: &InstanceArg, field: Option<&(String, proc_macro2::Span)>| {
            // The key argument of a shape input, and a checked field of the node type: a field
            // access the compiler checks, spanned where the name was written.
            let node = &instance.node_type;
            let mut accesses = Vec::new();
            if let Input::Shape { ty } = &decl.input {
                if let Ok(key) = syn::parse_str::<syn::Ident>(&instance.key.0) {
                    let key = syn::Ident::new(&key.to_string(), instance.key.1);
                    accesses.push(quote!(let _ = &input.#key;));
                }
                let ty = &**ty;
                if let Some(field) = field.and_then(|(name, span)| ident_at(name, *span)) {
                    accesses.push(quote!(let _ = &node.#field;));
                }
                field_checks.push(quote!(let _ = |input: &#ty, node: &#node| { #(#accesses)* };));
            } else if let Some(field) = field.and_then(|(name, span)| ident_at(name, *span)) {
                field_checks.push(quote!(let _ = |node: &#node| { let _ = &node.#field; };));
            }
        };
        let check = match &precondition.kind {
            PreconditionKind::InstanceExists(instance) => {
                instance_check(instance, None);
                let (node, key) = (&instance.node_type, &instance.key.0);
                quote!(#p::instance_exists::<#node>(&ctx, &arguments, #key).await?)
            }
            PreconditionKind::InstanceAbsent(instance) => {
                instance_check(instance, None);
                let (node, key) = (&instance.node_type, &instance.key.0);
                quote!(#p::instance_absent::<#node>(&ctx, &arguments, #key).await?)
            }
            PreconditionKind::FieldIn { instance, field, values, .. } => {
                instance_check(instance, Some(field));
                let (node, key, name) = (&instance.node_type, &instance.key.0, &field.0);
                // A value the field's `one_of` leaves out could never be there: a build error.
                for value in values {
                    if let Literal::Str(value) = value {
                        let message = format!(
                            "precondition `{kind}` can never hold: `{name}` of `{}` is never {value:?} (its `one_of` \
                             leaves it out); compare with one of the field's values",
                            quote!(#node).to_string().replace(' ', "")
                        );
                        value_checks.push(quote::quote_spanned! {field.1=>
                            const _: () = assert!(::trails::__private::may_hold(
                                <#node as ::trails::__private::ObjectShape>::RULES, #name, #value), #message);
                        });
                    }
                }
                let values = format!("[{}]", values.iter().map(literal_json).collect::<Vec<_>>().join(","));
                quote!(#p::field_in::<#node>(&ctx, &arguments, #key, #name, #values).await?)
            }
            PreconditionKind::Check(path) => quote!(#p::checked(#path(&ctx, &arguments).await)),
        };
        quote! {
            if let ::core::option::Option::Some(message) = #check {
                unmet.push(::trails::__private::Unmet { kind: #kind, parameters: #parameters, message });
            }
        }
    });
    let evaluations: Vec<TokenStream> = evaluations.collect();
    let function = quote! {
        #[allow(unused_variables, clippy::redundant_closure_call)]
        const _: () = { #(#field_checks)* };
        #(#value_checks)*

        fn __trails_preconditions(
            ctx: ::trails::__private::Ctx,
            arguments: ::trails::__private::serde_json::Value,
        ) -> ::trails::__private::BoxFuture<::trails::__private::Result<::std::vec::Vec<::trails::__private::Unmet>>> {
            ::std::boxed::Box::pin(async move {
                let mut unmet = ::std::vec::Vec::new();
                #(#evaluations)*
                ::core::result::Result::Ok(unmet)
            })
        }
    };
    (function, quote!(::core::option::Option::Some(__trails_preconditions)))
}

/// `name` as an identifier at `span`, if it is one.
fn ident_at(name: &str, span: proc_macro2::Span) -> Option<syn::Ident> {
    syn::parse_str::<syn::Ident>(name).ok().map(|ident| syn::Ident::new(&ident.to_string(), span))
}

/// A path written in an attribute, as the type it names.
pub(super) fn path_type(path: &syn::Path) -> syn::Type {
    syn::Type::Path(syn::TypePath { qself: None, path: path.clone() })
}

fn string_list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|s| json_string(s)).collect::<Vec<_>>().join(","))
}

fn optional_number<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_else(|| "null".into())
}

/// `,"<field>":` of the canonical descriptor.
fn key(field: Field) -> String {
    format!(",\"{}\":", field.name())
}

/// The canonical descriptor: the 14 fields in canonical order ([`Field::ALL`]), and
/// `display_roles` after `output_shape` when the output is a node type that declares some.
pub fn canonical(decl: &CapabilityDecl) -> Template {
    let mut t = Template::new();
    t.text("{\"@id\":").string(&format!("urn:trails:capability:{}", decl.id));
    t.text(",\"@type\":\"Capability\"");
    t.text(&key(Field::Id)).string(&decl.id);
    t.text(&key(Field::Version)).string(&decl.version);
    t.text(&key(Field::Description)).string(&decl.description);
    t.text(&key(Field::InputShape));
    match (&decl.input_shape, &decl.input) {
        (Some(iri), _) => {
            t.string(iri);
        }
        (None, Input::Shape { ty }) => {
            t.text("\"").hole(Hole::ShapeIri((**ty).clone())).text("\"");
        }
        (None, Input::Params(_)) => {
            t.string(&params_shape_iri(&decl.id));
        }
    }
    t.text(&key(Field::OutputShape));
    match &decl.output_shape {
        Some(iri) => {
            t.string(iri);
        }
        None => {
            t.hole(Hole::OutputShape(decl.return_type.clone()));
            // How the output's instances are shown (a node type's display roles), when it has any.
            t.hole(Hole::OutputRoles(decl.return_type.clone()));
        }
    }
    t.text(&key(Field::Preconditions)).text("[");
    for (index, precondition) in decl.preconditions.iter().enumerate() {
        if index > 0 {
            t.text(",");
        }
        t.text("{\"kind\":").string(precondition.kind.name()).text(",\"parameters\":");
        t.append(&precondition_parameters(&precondition.kind));
        t.text("}");
    }
    t.text("]");
    t.text(&key(Field::SideEffects));
    match &decl.side_effects {
        Some(e) => {
            // The graphs under the default base; a server with another `[kg] base` publishes its
            // own, and `provenance` where it records it (`trails-serve`'s served projection).
            t.text("{\"writes\":[");
            for (index, node) in e.writes.iter().enumerate() {
                if index > 0 {
                    t.text(",");
                }
                let graph_prefix = trails_pattern::graph_iri(trails_pattern::DEFAULT_KG_BASE, "");
                t.text(&format!("\"{graph_prefix}")).hole(Hole::NodeLabel(path_type(node))).text("\"");
            }
            t.text(&format!(
                "],\"deletes\":{},\"overwrites\":{},\"external_calls\":{},\"provenance\":false}}",
                e.deletes,
                e.overwrites,
                string_list(&e.external),
            ));
        }
        None => {
            t.text("null");
        }
    };
    t.text(&key(Field::Cost));
    match &decl.cost {
        Some(c) => t.text(&format!(
            "{{\"tokens\":{},\"usd\":{},\"latency_p50_ms\":{},\"latency_p95_ms\":{}}}",
            optional_number(c.tokens),
            optional_number(c.usd),
            optional_number(c.latency_p50_ms),
            optional_number(c.latency_p95_ms)
        )),
        None => t.text("null"),
    };
    t.text(&format!("{}{}", key(Field::PolicyRequired), string_list(&decl.policy_required)));
    t.text(&format!("{}{}", key(Field::Idempotent), decl.idempotent));
    t.text(&key(Field::Deprecates));
    match &decl.deprecates {
        Some(id) => t.string(id),
        None => t.text("null"),
    };
    t.text(&key(Field::Reasoning)).string(decl.reasoning.as_str());
    t.text(&key(Field::Assurance));
    match &decl.assurance {
        Some(a) => t.string(a),
        None => t.text("null"),
    };
    t.text(&key(Field::VersionStatus)).string(&decl.version_status);
    // Every call can be dry-run: the pipeline's guards see `DryRun` and the handler is skipped.
    t.text(&format!("{}true", key(Field::DryRun)));
    if let Some(question) = &decl.confirm {
        t.text(&key(Field::Confirm)).string(question);
    }
    if decl.task != TaskSupport::Forbidden {
        t.text(&key(Field::Task)).string(decl.task.as_str());
    }
    t.text("}");
    t
}

/// The IRI of a capability's own input shape (named parameters, no `input_shape` declared).
pub fn params_shape_iri(id: &str) -> String {
    format!("urn:trails:capability:{id}#input")
}

/// The SHACL shape of a capability's named parameters, so its manifest `input_shape` resolves
/// like a `#[shape]`'s; empty when the input is a shape of its own or `input_shape` names one.
pub fn input_shacl(decl: &CapabilityDecl) -> Template {
    match (&decl.input, &decl.input_shape) {
        (Input::Params(object), None) => crate::shacl::object_shape(
            &params_shape_iri(&decl.id),
            &format!("{} input", decl.id),
            Some(&format!("The arguments of `{}`.", decl.id)),
            None,
            None,
            object,
        ),
        _ => Template::new(),
    }
}

/// The identifier that makes two tools of one name in one module a compile error — also two
/// ids that project to one name (`a.b`, `a_b`).
fn collision_guard(name: &str) -> syn::Ident {
    // `_` → `__`, `-` → `_h`: one identifier per name, and two names never share one.
    let escaped = name.replace('_', "__").replace('-', "_h");
    format_ident!("__trails_tool_named_{}_is_declared_twice_in_this_module", escaped)
}

pub(super) fn generate(decl: &CapabilityDecl, function: &syn::ItemFn) -> TokenStream {
    let handler = &decl.handler;
    let name = &decl.name;
    let id = &decl.id;
    let version = &decl.version;
    let descriptor = descriptor(decl).to_tokens();
    let canonical = canonical(decl).to_tokens();
    let shacl = input_shacl(decl).to_tokens();
    let policies = &decl.policy_required;
    let cost_tokens = decl.cost.as_ref().and_then(|c| c.tokens).unwrap_or(0);
    let cost_usd = decl.cost.as_ref().and_then(|c| c.usd).unwrap_or(0.0);
    let idempotent = decl.idempotent;
    let confirm = match &decl.confirm {
        Some(question) => quote!(::core::option::Option::Some(#question)),
        None => quote!(::core::option::Option::None),
    };
    let task = quote::format_ident!("{}", decl.task.variant());
    let reasoning = quote::format_ident!("{}", decl.reasoning.variant());
    let effects = match &decl.side_effects {
        Some(e) => {
            let (writes, overwrites, deletes) = (&e.writes, e.overwrites, e.deletes);
            quote!(::trails::__private::Effects::__declared(
                &[#(<#writes as ::trails::__private::NodeType>::INFO),*],
                #overwrites,
                #deletes,
            ))
        }
        None => quote!(::trails::__private::Effects::Undeclared),
    };
    let (preconditions_fn, preconditions) = preconditions(decl);
    let deprecated = decl.version_status == "deprecated";
    let deprecates = match &decl.deprecates {
        Some(id) => quote!(::core::option::Option::Some(#id)),
        None => quote!(::core::option::Option::None),
    };
    let return_type = &decl.return_type;
    let description = &decl.description;
    let guard = collision_guard(name);
    let kind = match decl.kind {
        ToolKindDecl::Runtime => quote!(Runtime),
        ToolKindDecl::Meta { .. } => quote!(Meta),
    };
    let scope = quote::format_ident!("{}", decl.scope.variant());
    let (input_type, args_struct) = match &decl.input {
        Input::Shape { ty } => (quote!(#ty), quote!()),
        Input::Params(object) => {
            let fields = object.fields.iter().map(|f| {
                let ident = &f.ident;
                let ty = &f.rust_type;
                quote!(#ident: #ty)
            });
            let rules = object_rules(object, None);
            let validator = object_validator();
            let members = object_members(object, None).to_tokens();
            let shapes_used = crate::shape::emit::shapes_used(None, object, None);
            (
                quote!(__TrailsArgs),
                quote! {
                    #[derive(::trails::__private::serde::Deserialize)]
                    #[serde(crate = "::trails::__private::serde")]
                    #[allow(non_camel_case_types)]
                    struct __TrailsArgs { #(#fields),* }
                    #rules
                    impl ::trails::__private::Schema for __TrailsArgs {
                        const SCHEMA_MEMBERS: &'static str = #members;
                        const SHAPES_USED: &'static str = #shapes_used;
                        fn validate_at(
                            value: &::trails::__private::serde_json::Value,
                            path: &mut ::trails::__private::Path,
                            errors: &mut ::trails::__private::Errors,
                        ) {
                            #validator
                        }
                    }
                },
            )
        }
    };
    let call_args = decl.params.iter().map(|param| match param {
        Param::Ctx => quote!(&ctx),
        Param::ShapeInput => quote!(input),
        Param::Named(ident) => quote!(input.#ident),
    });
    let entry = format_ident!("__TRAILS_TOOL_{}", handler);
    quote! {
        #function

        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        const #guard: () = ();

        const _: () = {
            #args_struct

            // A wrong return type is reported by the `HandlerResult` bound; this keeps rustc from
            // adding a confusing never-type note on top of it.
            #[allow(dependency_on_unit_never_type_fallback)]
            async fn __trails_run(
                ctx: ::trails::__private::Ctx,
                arguments: ::trails::__private::serde_json::Value,
            ) -> ::trails::__private::Result<::trails::__private::Output> {
                let input: #input_type = ::trails::__private::serde_json::from_value(arguments)
                    .map_err(|error| ::trails::__private::deserialize_failed(#name, error))?;
                let result: #return_type = #handler(#(#call_args),*).await;
                let output = <#return_type as ::trails::__private::HandlerResult>::into_result(result)?;
                <<#return_type as ::trails::__private::HandlerResult>::Output as ::trails::__private::ToolOutput>::into_output(output)
            }

            fn __trails_call(
                ctx: ::trails::__private::Ctx,
                arguments: ::trails::__private::serde_json::Value,
            ) -> ::trails::__private::BoxFuture<::trails::__private::Result<::trails::__private::Output>> {
                ::std::boxed::Box::pin(__trails_run(ctx, arguments))
            }

            #preconditions_fn

            #[::trails::__private::linkme::distributed_slice(::trails::__private::TOOLS)]
            #[linkme(crate = ::trails::__private::linkme)]
            #[allow(non_upper_case_globals)]
            static #entry: ::trails::__private::ToolEntry = ::trails::__private::ToolEntry::__new(
                #name,
                #id,
                #version,
                ::trails::__private::ToolKind::#kind,
                ::trails::__private::Scope::#scope,
                #description,
                #descriptor,
                #canonical,
                #shacl,
                ::trails::__private::Declared::__new(
                    &[#(#policies),*],
                    #cost_tokens,
                    #cost_usd,
                    #idempotent,
                    #deprecated,
                    #deprecates,
                    !<<#return_type as ::trails::__private::HandlerResult>::Output as ::trails::__private::ToolOutput>::OUTPUT_SCHEMA_MEMBER.is_empty(),
                    <<#return_type as ::trails::__private::HandlerResult>::Output as ::trails::__private::ToolOutput>::OUTPUT_IRI,
                    <<#return_type as ::trails::__private::HandlerResult>::Output as ::trails::__private::ToolOutput>::OUTPUT_LIST,
                    #confirm,
                    ::trails::__private::TaskSupport::#task,
                    #effects,
                    #preconditions,
                    ::trails::__private::Reasoning::#reasoning,
                    ::trails::__private::concatcp!(
                        <#input_type as ::trails::__private::Schema>::SHAPES_USED,
                        <<#return_type as ::trails::__private::HandlerResult>::Output as ::trails::__private::ToolOutput>::OUTPUT_SHAPES,
                    ),
                ),
                <#input_type as ::trails::__private::Schema>::validate_at,
                __trails_call,
                ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#handler)),
            );
        };
    }
}
