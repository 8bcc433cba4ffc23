//! `#[capability]` and `#[meta_capability]`: parse the handler and its declaration into the IR,
//! check it, then emit the MCP tool descriptor, the canonical ADR-0005 descriptor, the input
//! validator and the type-erased registry entry.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{FnArg, Pat, ReturnType, Type};

use crate::args::{self, Arg, ArgValue, Literal};
use crate::diag::Diagnostics;
use crate::field::{classify, parse_field};
use crate::ir::{ObjectDecl, Scalar};
use crate::names;
use crate::schema::object_members;
use crate::template::{json_string, Hole, Template};
use crate::validator::object_validator;

pub const CAPABILITY_KEYS: &[&str] = &[
    "id", "version", "description", "input_shape", "output_shape", "preconditions", "side_effects", "cost",
    "policy_required", "idempotent", "deprecates", "version_status", "reasoning", "assurance",
];
pub const META_CAPABILITY_KEYS: &[&str] = &[
    "namespace", "op", "scope", "version", "description", "preconditions", "side_effects", "cost", "policy_required",
    "idempotent", "deprecates", "version_status",
];
const SIDE_EFFECT_KEYS: &[&str] = &["none", "writes", "deletes", "overwrites", "external", "provenance"];
const COST_KEYS: &[&str] = &["tokens", "usd", "latency_p50_ms", "latency_p95_ms"];
const VERSION_STATUSES: &[&str] = &["experimental", "stable", "deprecated"];
const REASONING: &[&str] = &["none", "rdfs", "owl-rl"];

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Runtime,
    Meta,
}

pub enum ToolKindDecl {
    Runtime,
    Meta { namespace: Option<String>, op: String },
}

pub enum Input {
    /// One `#[shape]` parameter: its properties are the tool's properties.
    Shape { ty: Type, param: syn::Ident },
    /// Named parameters, each a property.
    Params(ObjectDecl),
}

#[derive(Default)]
pub struct SideEffects {
    pub writes: Vec<String>,
    pub deletes: bool,
    pub overwrites: bool,
    pub external: Vec<String>,
    pub provenance: bool,
}

#[derive(Default)]
pub struct Cost {
    pub tokens: Option<u64>,
    pub usd: Option<f64>,
    pub latency_p50_ms: Option<u64>,
    pub latency_p95_ms: Option<u64>,
}

/// One parameter of the handler, in declaration order.
enum Param {
    Ctx,
    ShapeInput,
    Named(syn::Ident),
}

pub struct CapabilityDecl {
    pub kind: ToolKindDecl,
    pub id: String,
    pub name: String,
    pub version: String,
    pub description: String,
    pub scope: String,
    pub input: Input,
    pub return_type: Type,
    pub input_shape: Option<String>,
    pub output_shape: Option<String>,
    pub preconditions: Vec<String>,
    pub side_effects: Option<SideEffects>,
    pub cost: Option<Cost>,
    pub policy_required: Vec<String>,
    pub idempotent: bool,
    pub deprecates: Option<String>,
    pub version_status: String,
    pub reasoning: String,
    pub assurance: Option<String>,
    handler: syn::Ident,
    params: Vec<Param>,
}

pub fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut diags = Diagnostics::new();
    let mut function: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(error) => {
            let attribute = if kind == Kind::Runtime { "capability" } else { "meta_capability" };
            return syn::Error::new(error.span(), format!("#[{attribute}] applies to an `async fn` handler")).to_compile_error();
        }
    };
    let decl = parse(kind, attr, &function, &mut diags);
    strip_param_attributes(&mut function);
    match decl {
        Some(decl) if !diags.has_errors() => generate(&decl, &function),
        _ => {
            let errors = diags.to_compile_errors();
            quote!(#errors #function)
        }
    }
}

fn strip_param_attributes(function: &mut syn::ItemFn) {
    for input in function.sig.inputs.iter_mut() {
        if let FnArg::Typed(typed) = input {
            typed.attrs.retain(|a| !a.path().is_ident("predicate") && !a.path().is_ident("doc"));
        }
    }
}

fn is_ctx(ty: &Type) -> bool {
    match ty {
        Type::Reference(reference) => match &*reference.elem {
            Type::Path(path) => path.path.segments.last().is_some_and(|s| s.ident == "Ctx"),
            _ => false,
        },
        _ => false,
    }
}

pub fn parse(kind: Kind, attr: TokenStream, function: &syn::ItemFn, diags: &mut Diagnostics) -> Option<CapabilityDecl> {
    let attr_args = args::parse_args(attr, diags);
    let (attribute, allowed) = match kind {
        Kind::Runtime => ("capability", CAPABILITY_KEYS),
        Kind::Meta => ("meta_capability", META_CAPABILITY_KEYS),
    };
    args::check_keys(&attr_args, allowed, attribute, diags);
    let string = |key: &str, example: &str, diags: &mut Diagnostics| {
        args::find(&attr_args, key).and_then(|arg| args::expect_str(arg, example, diags))
    };
    let checked = |key: &str, example: &str, check: fn(&str) -> Result<(), String>, diags: &mut Diagnostics| {
        let lit = string(key, example, diags)?;
        match check(&lit.value()) {
            Ok(()) => Some(lit.value()),
            Err(reason) => {
                diags.error_spanned(&lit, reason);
                None
            }
        }
    };

    let sig = &function.sig;
    if sig.asyncness.is_none() {
        diags.error_spanned(sig.fn_token, format!("#[{attribute}] handlers must be `async fn`: add `async`"));
    }
    if !sig.generics.params.is_empty() {
        diags.error_spanned(&sig.generics, "capability handlers cannot be generic: their schema is fixed at build time");
    }

    // Identity and scope.
    let (tool_kind, id, name, scope) = match kind {
        Kind::Runtime => {
            let id = match string("id", "\"requirements.search\"", diags) {
                Some(lit) => match names::check_capability_id(&lit.value()) {
                    Ok(()) => lit.value(),
                    Err(reason) => {
                        diags.error_spanned(&lit, reason);
                        return None;
                    }
                },
                None => {
                    diags.error_at(Span::call_site(), "a capability needs an `id`, e.g. `#[capability(id = \"requirements.search\")]`");
                    return None;
                }
            };
            (ToolKindDecl::Runtime, id.clone(), id, "runtime".to_owned())
        }
        Kind::Meta => {
            let namespace = checked("namespace", "\"gen\"", names::check_namespace, diags);
            let namespace_failed = args::find(&attr_args, "namespace").is_some() && namespace.is_none();
            let op = match string("op", "\"shape\"", diags) {
                Some(lit) => match names::check_op(&lit.value()) {
                    Ok(()) => Some(lit.value()),
                    Err(reason) => {
                        diags.error_spanned(&lit, reason);
                        None
                    }
                },
                None => {
                    diags.error_at(Span::call_site(), "a meta capability needs an `op`, e.g. `#[meta_capability(namespace = \"gen\", op = \"shape\")]`");
                    None
                }
            };
            let scope = match args::find(&attr_args, "scope") {
                Some(_) => checked("scope", "\"dev\"", names::check_scope, diags),
                None => Some("dev".to_owned()),
            };
            let (Some(op), Some(scope), false) = (op, scope, namespace_failed) else { return None };
            let id = names::meta_capability_id(namespace.as_deref(), &op);
            let name = names::meta_tool_name(namespace.as_deref(), &op);
            (ToolKindDecl::Meta { namespace, op }, id, name, scope)
        }
    };

    let version = match args::find(&attr_args, "version") {
        Some(_) => checked("version", "\"1.2.0\"", names::check_semver, diags).unwrap_or_default(),
        None => std::env::var("CARGO_PKG_VERSION").unwrap_or_else(|_| "0.1.0".to_owned()),
    };
    let description = match string("description", "\"What the capability does\"", diags) {
        Some(lit) => lit.value(),
        None => match args::doc_comment(&function.attrs) {
            Some(doc) => doc,
            None => {
                diags.error_spanned(
                    &sig.ident,
                    format!("`{}` has no description; agents choose tools by it: add a `///` doc comment or `description = \"…\"`", sig.ident),
                );
                String::new()
            }
        },
    };
    let input_shape = checked("input_shape", "\"https://example.org/shapes#Input\"", names::check_iri, diags);
    let output_shape = checked("output_shape", "\"https://example.org/shapes#Output\"", names::check_iri, diags);
    let deprecates = checked("deprecates", "\"requirements.search_v1\"", names::check_capability_id, diags);
    let one_of = |key: &str, allowed: &[&str], default: &str, diags: &mut Diagnostics| match string(key, default, diags) {
        Some(lit) if allowed.contains(&lit.value().as_str()) => lit.value(),
        Some(lit) => {
            diags.error_spanned(&lit, format!("`{key}` must be one of {}", allowed.join(", ")));
            default.to_owned()
        }
        None => default.to_owned(),
    };
    let version_status = one_of("version_status", VERSION_STATUSES, "stable", diags);
    let reasoning = one_of("reasoning", REASONING, "none", diags);
    let assurance = string("assurance", "\"self-asserted\"", diags).map(|l| l.value());
    let idempotent = args::find(&attr_args, "idempotent").is_some_and(|a| args::expect_flag(a, diags));
    let preconditions = args::find(&attr_args, "preconditions").map(|a| args::expect_str_list(a, diags)).unwrap_or_default();
    let policy_required = args::find(&attr_args, "policy_required").map(|a| args::expect_str_list(a, diags)).unwrap_or_default();
    let side_effects = args::find(&attr_args, "side_effects").map(|a| parse_side_effects(a, diags));
    let cost = args::find(&attr_args, "cost").map(|a| parse_cost(a, diags));

    // The signature: ctx, then either one shape or named parameters.
    let mut params = Vec::new();
    let mut named = Vec::new();
    let mut shape_candidates = Vec::new();
    for input in &sig.inputs {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                diags.error_spanned(receiver, "capability handlers are free functions; remove `self`");
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        if is_ctx(&typed.ty) {
            params.push(Param::Ctx);
            continue;
        }
        let Pat::Ident(pat) = &*typed.pat else {
            diags.error_spanned(&typed.pat, "name this parameter: it becomes a tool property (`limit: u32`)");
            continue;
        };
        let has_predicate = typed.attrs.iter().any(|a| a.path().is_ident("predicate"));
        let is_nested = !has_predicate
            && classify(&typed.ty, &mut Diagnostics::new()).is_some_and(|t| !t.optional && !t.array && matches!(t.scalar, Scalar::Nested(_)));
        if is_nested {
            shape_candidates.push((pat.ident.clone(), (*typed.ty).clone()));
        }
        named.push(typed);
        params.push(Param::Named(pat.ident.clone()));
    }
    let input = if named.len() == 1 && shape_candidates.len() == 1 {
        let (param, ty) = shape_candidates.pop().expect("one candidate");
        params = params.into_iter().map(|p| if matches!(p, Param::Named(_)) { Param::ShapeInput } else { p }).collect();
        Input::Shape { ty, param }
    } else {
        let fields = named
            .iter()
            .filter_map(|typed| {
                let Pat::Ident(pat) = &*typed.pat else { return None };
                parse_field(&pat.ident, &typed.ty, &typed.attrs, diags)
            })
            .collect();
        Input::Params(ObjectDecl { fields })
    };
    let return_type = match &sig.output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => {
            diags.error_spanned(&sig.ident, "a capability must return `trails::Result<T>`; add `-> trails::Result<…>`");
            return None;
        }
    };

    Some(CapabilityDecl {
        kind: tool_kind,
        id,
        name,
        version,
        description,
        scope,
        input,
        return_type,
        input_shape,
        output_shape,
        preconditions: preconditions.iter().map(|l| l.value()).collect(),
        side_effects,
        cost,
        policy_required: policy_required.iter().map(|l| l.value()).collect(),
        idempotent,
        deprecates,
        version_status,
        reasoning,
        assurance,
        handler: sig.ident.clone(),
        params,
    })
}

fn parse_side_effects(arg: &Arg, diags: &mut Diagnostics) -> SideEffects {
    let ArgValue::List(items) = &arg.value else {
        diags.error_at(arg.span, "write `side_effects(none)` or `side_effects(writes = [\"urn:graph\"], deletes, external = [\"api.example.com\"])`");
        return SideEffects::default();
    };
    args::check_keys(items, SIDE_EFFECT_KEYS, "side_effects", diags);
    let mut effects = SideEffects::default();
    let mut declared_none = None;
    for item in items {
        match item.key.as_str() {
            "none" => declared_none = Some(item.key_span),
            "writes" => {
                for graph in args::expect_str_list(item, diags) {
                    match names::check_iri(&graph.value()) {
                        Ok(()) => effects.writes.push(graph.value()),
                        Err(reason) => diags.error_spanned(&graph, format!("`writes` names graphs by IRI: {reason}")),
                    }
                }
            }
            "external" => effects.external = args::expect_str_list(item, diags).iter().map(|l| l.value()).collect(),
            "deletes" => effects.deletes = args::expect_flag(item, diags),
            "overwrites" => effects.overwrites = args::expect_flag(item, diags),
            "provenance" => effects.provenance = args::expect_flag(item, diags),
            _ => {}
        }
    }
    if let Some(span) = declared_none {
        if items.len() > 1 {
            diags.error_at(span, "`none` cannot be combined with other side effects; remove `none` or the others");
        }
    }
    effects
}

fn parse_cost(arg: &Arg, diags: &mut Diagnostics) -> Cost {
    let ArgValue::List(items) = &arg.value else {
        diags.error_at(arg.span, "write `cost(tokens = 40, usd = 0.001, latency_p50_ms = 3, latency_p95_ms = 20)`");
        return Cost::default();
    };
    args::check_keys(items, COST_KEYS, "cost", diags);
    let mut cost = Cost::default();
    for item in items {
        match item.key.as_str() {
            "tokens" => cost.tokens = args::expect_count(item, diags),
            "latency_p50_ms" => cost.latency_p50_ms = args::expect_count(item, diags),
            "latency_p95_ms" => cost.latency_p95_ms = args::expect_count(item, diags),
            "usd" => {
                cost.usd = args::expect_value(item, "0.001", diags).and_then(|expr| match args::literal(expr) {
                    Some(Literal::Float(f)) if f >= 0.0 => Some(f),
                    Some(Literal::Int(i)) if i >= 0 => Some(i as f64),
                    _ => {
                        diags.error_spanned(expr, "`usd` takes a non-negative number, e.g. `usd = 0.001`");
                        None
                    }
                })
            }
            _ => {}
        }
    }
    if let (Some(p50), Some(p95)) = (cost.latency_p50_ms, cost.latency_p95_ms) {
        if p50 > p95 {
            let span = items.iter().find(|i| i.key == "latency_p50_ms").map(Arg::value_span).unwrap_or(arg.span);
            diags.error_at(span, format!("`latency_p50_ms` ({p50}) is greater than `latency_p95_ms` ({p95}); the median cannot exceed the 95th percentile"));
        }
    }
    cost
}

/// The MCP `annotations`, derived from the declaration (DESIGN §4.1). Undeclared side effects
/// get MCP's own conservative defaults, stated explicitly.
pub fn annotations(decl: &CapabilityDecl) -> String {
    let (read_only, destructive, open_world) = match &decl.side_effects {
        Some(e) => (e.writes.is_empty() && !e.deletes && !e.overwrites, e.deletes || e.overwrites, !e.external.is_empty()),
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
    t.text(",\"description\":").string(&decl.description);
    t.text(",\"inputSchema\":{");
    match &decl.input {
        Input::Shape { ty, .. } => {
            t.hole(Hole::SchemaMembers(ty.clone()));
        }
        Input::Params(object) => {
            t.append(&object_members(object));
        }
    }
    t.text("}");
    t.hole(Hole::OutputSchemaMember(decl.return_type.clone()));
    t.text(",\"annotations\":").text(&annotations(decl));
    t.text(",\"_meta\":{\"trails\":{");
    let mut meta = vec![format!("\"kind\":{}", json_string(match decl.kind {
        ToolKindDecl::Runtime => "runtime",
        ToolKindDecl::Meta { .. } => "meta",
    }))];
    meta.push(format!("\"scope\":{}", json_string(&decl.scope)));
    if let ToolKindDecl::Meta { namespace, op } = &decl.kind {
        meta.push(format!("\"namespace\":{}", namespace.as_deref().map(json_string).unwrap_or_else(|| "null".into())));
        meta.push(format!("\"op\":{}", json_string(op)));
    }
    meta.push(format!("\"version\":{}", json_string(&decl.version)));
    meta.push(format!("\"idempotent\":{}", decl.idempotent));
    meta.push(format!("\"manifest_uri\":{}", json_string(&manifest_uri(&decl.id))));
    t.text(&meta.join(",")).text("}}}");
    t
}

fn string_list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|s| json_string(s)).collect::<Vec<_>>().join(","))
}

fn optional_number<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_else(|| "null".into())
}

/// The canonical ADR-0005 descriptor: the 14 fields in canonical order.
pub fn canonical(decl: &CapabilityDecl) -> Template {
    let mut t = Template::new();
    t.text("{\"@id\":").string(&format!("urn:trails:capability:{}", decl.id));
    t.text(",\"@type\":\"Capability\"");
    t.text(",\"id\":").string(&decl.id);
    t.text(",\"version\":").string(&decl.version);
    t.text(",\"description\":").string(&decl.description);
    t.text(",\"input_shape\":");
    match (&decl.input_shape, &decl.input) {
        (Some(iri), _) => {
            t.string(iri);
        }
        (None, Input::Shape { ty, .. }) => {
            t.text("\"").hole(Hole::ShapeIri(ty.clone())).text("\"");
        }
        (None, Input::Params(_)) => {
            t.string(&format!("urn:trails:capability:{}#input", decl.id));
        }
    }
    t.text(",\"output_shape\":");
    match &decl.output_shape {
        Some(iri) => {
            t.string(iri);
        }
        None => {
            t.hole(Hole::OutputShape(decl.return_type.clone()));
        }
    }
    let preconditions: Vec<String> = decl.preconditions.iter().map(|p| format!("{{\"kind\":{}}}", json_string(p))).collect();
    t.text(&format!(",\"preconditions\":[{}]", preconditions.join(",")));
    t.text(",\"side_effects\":");
    match &decl.side_effects {
        Some(e) => t.text(&format!(
            "{{\"writes\":{},\"deletes\":{},\"overwrites\":{},\"external_calls\":{},\"provenance\":{}}}",
            string_list(&e.writes),
            e.deletes,
            e.overwrites,
            string_list(&e.external),
            e.provenance
        )),
        None => t.text("null"),
    };
    t.text(",\"cost\":");
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
    t.text(&format!(",\"policy_required\":{}", string_list(&decl.policy_required)));
    t.text(&format!(",\"idempotent\":{}", decl.idempotent));
    t.text(",\"deprecates\":");
    match &decl.deprecates {
        Some(id) => t.string(id),
        None => t.text("null"),
    };
    t.text(",\"reasoning\":").string(&decl.reasoning);
    t.text(",\"assurance\":");
    match &decl.assurance {
        Some(a) => t.string(a),
        None => t.text("null"),
    };
    t.text(",\"version_status\":").string(&decl.version_status);
    t.text("}");
    t
}

/// The identifier that makes two tools of one name in one module a compile error.
fn collision_guard(name: &str) -> syn::Ident {
    let escaped: String = name
        .chars()
        .map(|c| match c {
            '.' => "_2E_".to_owned(),
            '-' => "_2D_".to_owned(),
            c => c.to_string(),
        })
        .collect();
    format_ident!("__trails_tool_named_{}_is_declared_twice_in_this_module", escaped)
}

fn generate(decl: &CapabilityDecl, function: &syn::ItemFn) -> TokenStream {
    let handler = &decl.handler;
    let name = &decl.name;
    let id = &decl.id;
    let descriptor = descriptor(decl).to_tokens();
    let canonical = canonical(decl).to_tokens();
    let return_type = &decl.return_type;
    let description = &decl.description;
    let guard = collision_guard(name);
    let kind = match decl.kind {
        ToolKindDecl::Runtime => quote!(Runtime),
        ToolKindDecl::Meta { .. } => quote!(Meta),
    };
    let scope = match decl.scope.as_str() {
        "builder" => quote!(Builder),
        "dev" => quote!(Dev),
        _ => quote!(Runtime),
    };
    let (input_type, args_struct) = match &decl.input {
        Input::Shape { ty, .. } => (quote!(#ty), quote!()),
        Input::Params(object) => {
            let fields = object.fields.iter().map(|f| {
                let ident = &f.ident;
                let ty = &f.rust_type;
                quote!(#ident: #ty)
            });
            let validator = object_validator(object);
            let members = object_members(object).to_tokens();
            (
                quote!(__TrailsArgs),
                quote! {
                    #[derive(::trails::__private::serde::Deserialize)]
                    #[serde(crate = "::trails::__private::serde")]
                    #[allow(non_camel_case_types)]
                    struct __TrailsArgs { #(#fields),* }
                    impl ::trails::__private::Schema for __TrailsArgs {
                        const SCHEMA_MEMBERS: &'static str = #members;
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

            #[::trails::__private::linkme::distributed_slice(::trails::__private::TOOLS)]
            #[linkme(crate = ::trails::__private::linkme)]
            #[allow(non_upper_case_globals)]
            static #entry: ::trails::__private::ToolEntry = ::trails::__private::ToolEntry {
                name: #name,
                id: #id,
                kind: ::trails::__private::ToolKind::#kind,
                scope: ::trails::__private::Scope::#scope,
                description: #description,
                descriptor: #descriptor,
                canonical: #canonical,
                validate: <#input_type as ::trails::__private::Schema>::validate_at,
                call: __trails_call,
                source: ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#handler)),
            };
        };
    }
}
