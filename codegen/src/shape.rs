//! `#[shape]` and `#[node_type]`: parse → check → generate.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::args::{self, Arg};
use crate::diag::Diagnostics;
use crate::field::parse_field;
use crate::ir::{NodeTypeDecl, ObjectDecl, Scalar, ShapeBody, ShapeDecl};
use crate::names;
use crate::schema::{description_member, enum_members, object_members};
use crate::template::Template;
use crate::validator::{enum_validator, object_validator};

pub const SHAPE_KEYS: &[&str] = &["iri", "extends", "prefixes", "rename_all"];
pub const NODE_TYPE_KEYS: &[&str] = &["label", "iri", "extends", "unique", "prefixes"];

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Shape,
    NodeType,
}

impl Kind {
    fn attribute(self) -> &'static str {
        match self {
            Kind::Shape => "shape",
            Kind::NodeType => "node_type",
        }
    }
}

/// Expand `#[shape(attr)] item` or `#[node_type(attr)] item`.
pub fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut diags = Diagnostics::new();
    let mut parsed: syn::Item = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(error) => return error.to_compile_error(),
    };
    let decl = parse(kind, attr, &parsed, &mut diags);
    strip_predicates(&mut parsed);
    match decl {
        Some(decl) if !diags.has_errors() => {
            omit_absent_options(&decl, &mut parsed);
            generate(&decl, &parsed)
        }
        // Keep the item so later code still resolves its name; report every fault.
        _ => {
            let errors = diags.to_compile_errors();
            quote!(#errors #parsed)
        }
    }
}

/// The schema says an `Option` field is *absent* when `None`, never `null` (no null unions), so
/// structured output must leave it out rather than serialise `null`.
fn omit_absent_options(decl: &ShapeDecl, item: &mut syn::Item) {
    let (ShapeBody::Object(object), syn::Item::Struct(s), false) = (&decl.body, item, decl.user_derives_serde) else {
        return;
    };
    for field in s.fields.iter_mut() {
        let optional = object.fields.iter().any(|f| Some(&f.ident) == field.ident.as_ref() && f.ty.optional);
        if optional {
            field.attrs.push(syn::parse_quote!(#[serde(skip_serializing_if = "::core::option::Option::is_none")]));
        }
    }
}

/// Remove our helper attributes so rustc never sees them.
pub fn strip_predicates(item: &mut syn::Item) {
    if let syn::Item::Struct(s) = item {
        for field in s.fields.iter_mut() {
            field.attrs.retain(|a| !a.path().is_ident("predicate"));
        }
    }
}

/// Parse and check a declaration into the IR (`None` if it is too broken to describe).
pub fn parse(kind: Kind, attr: TokenStream, item: &syn::Item, diags: &mut Diagnostics) -> Option<ShapeDecl> {
    let attr_args = args::parse_args(attr, diags);
    let allowed = if kind == Kind::Shape { SHAPE_KEYS } else { NODE_TYPE_KEYS };
    args::check_keys(&attr_args, allowed, kind.attribute(), diags);
    let prefixes = parse_prefixes(&attr_args, diags);

    let (ident, attrs, generics) = match item {
        syn::Item::Struct(s) => (&s.ident, &s.attrs, &s.generics),
        syn::Item::Enum(e) if kind == Kind::Shape => (&e.ident, &e.attrs, &e.generics),
        other => {
            let what = if kind == Kind::Shape { "a struct with named fields or a unit enum" } else { "a struct with named fields" };
            diags.error_spanned(other, format!("#[{}] applies to {what}", kind.attribute()));
            return None;
        }
    };
    if !generics.params.is_empty() {
        diags.error_spanned(generics, format!("#[{}] types cannot be generic: their schema is fixed at build time; use a concrete type", kind.attribute()));
    }
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        diags.error_spanned(attr, "`#[serde(…)]` would change the wire format behind the generated schema; remove it (use `#[shape(rename_all = …)]` for enum variants)");
    }

    let label = match args::find(&attr_args, "label").and_then(|a| args::expect_str(a, "\"Requirement\"", diags)) {
        Some(label) => {
            let valid = label.value().chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && label.value().chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                diags.error_spanned(&label, format!("label `{}` must be an identifier (letters, digits, `_`): it becomes the `trails://kg/<label>` URI segment", label.value()));
            }
            label.value()
        }
        None => ident.to_string(),
    };
    let default_iri = match kind {
        Kind::Shape => format!("urn:trails:shape:{ident}"),
        Kind::NodeType => format!("urn:trails:type:{label}"),
    };
    let iri = iri_arg(&attr_args, "iri", &prefixes, diags).unwrap_or(default_iri);
    let extends = iri_arg(&attr_args, "extends", &prefixes, diags);

    let rename_all = args::find(&attr_args, "rename_all").and_then(|arg| {
        let rule = args::expect_str(arg, "\"snake_case\"", diags)?;
        if !names::RENAME_RULES.contains(&rule.value().as_str()) {
            diags.error_spanned(&rule, format!("`rename_all` must be one of {}", names::RENAME_RULES.join(", ")));
            return None;
        }
        if !matches!(item, syn::Item::Enum(_)) {
            diags.error_spanned(&rule, "`rename_all` applies to enums; struct field names are the Rust names");
        }
        Some(rule.value())
    });

    let body = match item {
        syn::Item::Struct(s) => ShapeBody::Object(parse_struct_fields(s, &prefixes, diags)?),
        syn::Item::Enum(e) => ShapeBody::Enum(parse_variants(e, rename_all.as_deref(), diags)),
        _ => unreachable!("filtered above"),
    };

    let node_type = (kind == Kind::NodeType).then(|| {
        let unique = args::find(&attr_args, "unique").map(|a| args::expect_str_list(a, diags)).unwrap_or_default();
        if let ShapeBody::Object(object) = &body {
            for name in &unique {
                if !object.fields.iter().any(|f| f.name == name.value()) {
                    diags.error_spanned(name, format!("`unique` names `{}`, which is not a field of `{ident}`", name.value()));
                }
            }
        }
        NodeTypeDecl { label, extends: extends.clone(), unique: unique.iter().map(|s| s.value()).collect() }
    });

    let derives = |name: &str| {
        attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
            a.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
                .map(|paths| paths.iter().any(|p| p.segments.last().is_some_and(|s| s.ident == name)))
                .unwrap_or(false)
        })
    };
    let user_derives_serde = derives("Serialize") || derives("Deserialize");
    if user_derives_serde && !(derives("Serialize") && derives("Deserialize")) {
        diags.error_spanned(ident, "derive both `Serialize` and `Deserialize`, or neither (Trails derives them for you)");
    }

    Some(ShapeDecl {
        ident: ident.clone(),
        iri,
        extends,
        description: args::doc_comment(attrs),
        body,
        rename_all,
        node_type,
        user_derives_serde,
    })
}

fn parse_prefixes(attr_args: &[Arg], diags: &mut Diagnostics) -> BTreeMap<String, String> {
    let mut prefixes = BTreeMap::new();
    if let Some(arg) = args::find(attr_args, "prefixes") {
        match &arg.value {
            args::ArgValue::List(items) => {
                for item in items {
                    if let Some(namespace) = args::expect_str(item, "\"https://example.org/ns#\"", diags) {
                        match names::check_iri(&namespace.value()) {
                            Ok(()) => {
                                prefixes.insert(item.key.clone(), namespace.value());
                            }
                            Err(reason) => diags.error_spanned(&namespace, reason),
                        }
                    }
                }
            }
            _ => diags.error_at(arg.span, "write `prefixes(req = \"https://example.org/req#\")`"),
        }
    }
    prefixes
}

/// Expand `prefix:local` with a declared prefix; otherwise the IRI as written.
pub fn expand_curie(iri: &str, prefixes: &BTreeMap<String, String>) -> String {
    if let Some((prefix, local)) = iri.split_once(':') {
        if let Some(namespace) = prefixes.get(prefix) {
            return format!("{namespace}{local}");
        }
    }
    iri.to_owned()
}

fn iri_arg(attr_args: &[Arg], key: &str, prefixes: &BTreeMap<String, String>, diags: &mut Diagnostics) -> Option<String> {
    let lit = args::expect_str(args::find(attr_args, key)?, "\"https://example.org/ns#Name\"", diags)?;
    let iri = expand_curie(&lit.value(), prefixes);
    match names::check_iri(&iri) {
        Ok(()) => Some(iri),
        Err(reason) => {
            diags.error_spanned(&lit, format!("invalid `{key}`: {reason}"));
            None
        }
    }
}

fn parse_struct_fields(item: &syn::ItemStruct, prefixes: &BTreeMap<String, String>, diags: &mut Diagnostics) -> Option<ObjectDecl> {
    let syn::Fields::Named(named) = &item.fields else {
        diags.error_spanned(&item.fields, "shapes need named fields: each field becomes a JSON property (`struct S { name: String }`)");
        return None;
    };
    let fields = named
        .named
        .iter()
        .filter_map(|field| {
            let ident = field.ident.as_ref().expect("named fields have names");
            let mut parsed = parse_field(ident, &field.ty, &field.attrs, diags)?;
            parsed.iri = parsed.iri.map(|iri| expand_curie(&iri, prefixes));
            Some(parsed)
        })
        .collect();
    Some(ObjectDecl { fields })
}

fn parse_variants(item: &syn::ItemEnum, rename_all: Option<&str>, diags: &mut Diagnostics) -> Vec<(syn::Ident, String)> {
    if item.variants.is_empty() {
        diags.error_spanned(&item.ident, "an enum shape needs at least one variant");
    }
    item.variants
        .iter()
        .filter_map(|variant| {
            if !matches!(variant.fields, syn::Fields::Unit) {
                diags.error_spanned(&variant.fields, "enum shapes project to a string `enum`: only unit variants are supported; use a #[shape] struct for data");
                return None;
            }
            let name = variant.ident.to_string();
            Some((variant.ident.clone(), rename_all.map(|r| names::rename(&name, r)).unwrap_or(name)))
        })
        .collect()
}

/// Schema members of a declaration (holes for nested types).
pub fn schema_members(decl: &ShapeDecl) -> Template {
    match &decl.body {
        ShapeBody::Object(object) => object_members(object),
        ShapeBody::Enum(variants) => {
            let names: Vec<String> = variants.iter().map(|(_, n)| n.clone()).collect();
            let mut t = Template::new();
            t.text(&enum_members(&names));
            t
        }
    }
}

/// The type's description, with the compound-uniqueness note for node types.
pub fn description(decl: &ShapeDecl) -> Option<String> {
    let unique_note = decl
        .node_type
        .as_ref()
        .filter(|n| !n.unique.is_empty())
        .map(|n| format!("Unique together: {} (checked server side).", n.unique.join(", ")));
    match (&decl.description, unique_note) {
        (Some(d), Some(n)) => Some(format!("{d}\n\n{n}")),
        (Some(d), None) => Some(d.clone()),
        (None, note) => note,
    }
}

fn generate(decl: &ShapeDecl, item: &syn::Item) -> TokenStream {
    let ident = &decl.ident;
    let name = ident.to_string();
    let iri = &decl.iri;
    let iri_json = format!("\"{iri}\"");
    let members = schema_members(decl).to_tokens();
    let description = description_member(description(decl).as_deref());
    let validator = match &decl.body {
        ShapeBody::Object(object) => object_validator(object),
        ShapeBody::Enum(variants) => enum_validator(&variants.iter().map(|(_, n)| n.clone()).collect::<Vec<_>>()),
    };
    let serde_derive = (!decl.user_derives_serde).then(|| {
        let rename = decl.rename_all.as_ref().map(|r| quote!(#[serde(rename_all = #r)]));
        quote! {
            #[derive(::trails::__private::serde::Serialize, ::trails::__private::serde::Deserialize)]
            #[serde(crate = "::trails::__private::serde")]
            #rename
        }
    });
    let tool_output = matches!(decl.body, ShapeBody::Object(_)).then(|| {
        quote! {
            impl ::trails::__private::ToolOutput for #ident {
                const OUTPUT_SCHEMA_MEMBER: &'static str =
                    ::trails::__private::concatcp!(",\"outputSchema\":", <#ident as ::trails::__private::Shape>::SCHEMA);
                const OUTPUT_SHAPE: &'static str = #iri_json;
                fn into_output(self) -> ::trails::__private::Result<::trails::__private::Output> {
                    ::trails::__private::shape_output(&self)
                }
            }
        }
    });
    let (node_type_impl, node_type_entry) = match (&decl.node_type, &decl.body) {
        (Some(node), ShapeBody::Object(object)) => {
            let label = &node.label;
            let extends = match &node.extends {
                Some(e) => quote!(::core::option::Option::Some(#e)),
                None => quote!(::core::option::Option::None),
            };
            let unique = &node.unique;
            let namespace = names::iri_namespace(iri);
            let predicates = object.fields.iter().map(|field| {
                let field_name = &field.name;
                let predicate_iri = field.iri.clone().unwrap_or_else(|| format!("{namespace}{}", field.name));
                let (datatype, target) = match &field.ty.scalar {
                    Scalar::String => (quote!(String), quote!(None)),
                    Scalar::Bool => (quote!(Boolean), quote!(None)),
                    Scalar::Int(_) => (quote!(Integer), quote!(None)),
                    Scalar::Float => (quote!(Double), quote!(None)),
                    Scalar::DateTime => (quote!(DateTime), quote!(None)),
                    Scalar::Ref(t) => (quote!(Iri), quote!(Some(<#t as ::trails::__private::NodeType>::LABEL))),
                    Scalar::Nested(_) => (quote!(Json), quote!(None)),
                };
                let required = field.required;
                let many = field.ty.array;
                quote! {
                    ::trails::__private::PredicateInfo {
                        field: #field_name, iri: #predicate_iri, datatype: ::trails::__private::Datatype::#datatype,
                        required: #required, many: #many, target: ::core::option::Option::#target,
                    }
                }
            });
            let count = object.fields.len();
            (
                quote! {
                    impl ::trails::__private::NodeType for #ident {
                        const LABEL: &'static str = #label;
                        const INFO: &'static ::trails::__private::NodeTypeInfo = &INFO;
                    }
                    static PREDICATES: [::trails::__private::PredicateInfo; #count] = [#(#predicates),*];
                    static INFO: ::trails::__private::NodeTypeInfo = ::trails::__private::NodeTypeInfo {
                        label: #label, iri: #iri, extends: #extends, unique: &[#(#unique),*], predicates: &PREDICATES,
                    };
                },
                quote!(::core::option::Option::Some(&INFO)),
            )
        }
        _ => (quote!(), quote!(::core::option::Option::None)),
    };
    let entry = format_ident!("__TRAILS_SHAPE_{}", ident);
    quote! {
        #serde_derive
        #item

        const _: () = {
            impl ::trails::__private::Schema for #ident {
                const SCHEMA_MEMBERS: &'static str = #members;
                const DESCRIPTION_MEMBER: &'static str = #description;
                fn validate_at(
                    value: &::trails::__private::serde_json::Value,
                    path: &mut ::trails::__private::Path,
                    errors: &mut ::trails::__private::Errors,
                ) {
                    #validator
                }
            }
            impl ::trails::__private::Shape for #ident {
                const NAME: &'static str = #name;
                const IRI: &'static str = #iri;
                const IRI_JSON: &'static str = #iri_json;
                const SCHEMA: &'static str = ::trails::__private::concatcp!(
                    "{", <#ident as ::trails::__private::Schema>::DESCRIPTION_MEMBER, <#ident as ::trails::__private::Schema>::SCHEMA_MEMBERS, "}"
                );
                const LIST_OUTPUT_SCHEMA_MEMBER: &'static str = ::trails::__private::concatcp!(
                    ",\"outputSchema\":{\"type\":\"object\",\"properties\":{\"items\":{\"type\":\"array\",\"items\":",
                    <#ident as ::trails::__private::Shape>::SCHEMA,
                    "}},\"required\":[\"items\"],\"additionalProperties\":false}"
                );
            }
            #tool_output
            #node_type_impl

            #[::trails::__private::linkme::distributed_slice(::trails::__private::SHAPES)]
            #[linkme(crate = ::trails::__private::linkme)]
            #[allow(non_upper_case_globals)]
            static #entry: ::trails::__private::ShapeEntry = ::trails::__private::ShapeEntry {
                name: #name,
                iri: #iri,
                schema: <#ident as ::trails::__private::Shape>::SCHEMA,
                node_type: #node_type_entry,
                source: ::core::concat!(::core::module_path!(), "::", #name),
            };
        };
    }
}

