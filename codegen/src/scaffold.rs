//! The scaffolders behind `trails.meta.gen.shape`, `gen.nodetype` and `gen.capability`: a typed
//! spec in, the Rust source of one annotated item out, formatted by `prettyplease`. Every spec is
//! checked field by field (each fault names its place, `fields/2/min_length`), then the generated
//! item is read back through this crate's own parser and checks — the ones `#[shape]`,
//! `#[node_type]` and `#[capability]` run at build time — so what is handed out compiles.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::diag::Diagnostics;

/// One field (or named parameter) to declare.
#[derive(Debug, Clone, Default)]
pub struct FieldSpec {
    /// The field name, `snake_case`.
    pub name: String,
    /// `string`, `integer`, `number`, `boolean`, `datetime` or `ref` (a `Ref<target>`).
    pub kind: String,
    /// The node type a `ref` points at.
    pub target: Option<String>,
    /// `Option<…>`: not required.
    pub optional: bool,
    /// `Vec<…>`: a list.
    pub many: bool,
    /// Its doc comment.
    pub description: Option<String>,
    /// `#[predicate(iri = …)]`.
    pub iri: Option<String>,
    /// `min_length`.
    pub min_length: Option<u64>,
    /// `max_length`.
    pub max_length: Option<u64>,
    /// `pattern` (ECMA-262 subset, checked like the macro checks it).
    pub pattern: Option<String>,
    /// `one_of`: JSON literals of the field's type.
    pub one_of: Vec<serde_json::Value>,
    /// `min_value`.
    pub min_value: Option<f64>,
    /// `max_value`.
    pub max_value: Option<f64>,
    /// `min_count`.
    pub min_count: Option<u64>,
    /// `max_count`.
    pub max_count: Option<u64>,
    /// `role`: how lists show a node type's instances (`title`, `summary`, …).
    pub role: Option<String>,
}

/// A `#[shape]` (or, with `node_type`, a `#[node_type]`) to declare.
#[derive(Debug, Clone, Default)]
pub struct ShapeSpec {
    /// The Rust type name, `UpperCamelCase`.
    pub name: String,
    /// The shape IRI (the class IRI of a node type).
    pub iri: String,
    /// Its doc comment.
    pub description: Option<String>,
    /// The fields, in order.
    pub fields: Vec<FieldSpec>,
    /// `Some` for a node type.
    pub node_type: Option<NodeTypeSpec>,
}

/// What a `#[node_type]` adds.
#[derive(Debug, Clone, Default)]
pub struct NodeTypeSpec {
    /// `label` (default: the type name).
    pub label: Option<String>,
    /// `key`: the field that names an instance.
    pub key: Option<String>,
    /// `unique`: fields unique together.
    pub unique: Vec<String>,
}

/// A `#[capability]` handler to declare.
#[derive(Debug, Clone, Default)]
pub struct CapabilitySpec {
    /// The capability id (`reports.export`).
    pub id: String,
    /// SemVer.
    pub version: String,
    /// Its doc comment (the tool description).
    pub description: String,
    /// The handler's name, `snake_case`.
    pub handler: String,
    /// Its named parameters.
    pub params: Vec<FieldSpec>,
    /// The result type: a shape's type name, or `String`.
    pub output: String,
    /// `side_effects(none)` when true; otherwise none declared.
    pub read_only: bool,
    /// `idempotent`.
    pub idempotent: bool,
}

/// A fault in a spec: where (`fields/2/min_length`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// A JSON-pointer-ish path into the spec.
    pub field: String,
    /// What is wrong and what to write instead.
    pub message: String,
}

fn fault(field: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError { field: field.into(), message: message.into() }
}

/// `name` in snake_case (`SearchInput` → `search_input`), for a default file name.
pub fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (index, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if index > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self",
    "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract", "become",
    "box", "do", "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield", "gen",
];

/// Keywords that cannot be raw identifiers either.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate"];

fn check_ident(at: &str, name: &str, upper: bool, errors: &mut Vec<SpecError>) {
    check_name(at, name, upper, KEYWORDS, errors);
}

/// A field name: a keyword becomes a raw identifier (`r#type`; serde still calls it `type`).
fn check_field_name(at: &str, name: &str, errors: &mut Vec<SpecError>) {
    check_name(at, name, false, NOT_RAW, errors);
}

fn field_ident(name: &str) -> syn::Ident {
    let name = sanitize(name);
    if KEYWORDS.contains(&name.as_str()) && !NOT_RAW.contains(&name.as_str()) {
        syn::Ident::new_raw(&name, proc_macro2::Span::call_site())
    } else {
        format_ident!("{}", name)
    }
}

fn check_name(at: &str, name: &str, upper: bool, refused: &[&str], errors: &mut Vec<SpecError>) {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| if upper { c.is_ascii_uppercase() } else { c.is_ascii_lowercase() });
    let rest_ok = name.chars().all(|c| c.is_ascii_alphanumeric() || (!upper && c == '_'));
    if name.is_empty() || name.len() > 64 || !first_ok || !rest_ok || refused.contains(&name) {
        let shape = if upper { "UpperCamelCase, e.g. `SearchInput`" } else { "snake_case, e.g. `due_date`" };
        errors.push(fault(at, format!("`{name}` is not a Rust name in {shape} (at most 64 characters, no keyword)")));
    }
}

fn field_type(spec: &FieldSpec, at: &str, errors: &mut Vec<SpecError>) -> Option<TokenStream> {
    let scalar = match spec.kind.as_str() {
        "string" => quote!(String),
        "integer" => quote!(i64),
        "number" => quote!(f64),
        "boolean" => quote!(bool),
        "datetime" => quote!(trails::DateTime),
        "ref" => match &spec.target {
            Some(target) => {
                check_ident(&format!("{at}/target"), target, true, errors);
                let target = format_ident!("{}", sanitize(target));
                quote!(trails::Ref<#target>)
            }
            None => {
                errors.push(fault(format!("{at}/target"), "a `ref` field names its node type in `target`"));
                return None;
            }
        },
        other => {
            errors.push(fault(
                format!("{at}/kind"),
                format!("`{other}` is not a field kind: one of string, integer, number, boolean, datetime, ref"),
            ));
            return None;
        }
    };
    if spec.target.is_some() && spec.kind != "ref" {
        errors.push(fault(format!("{at}/target"), "only a `ref` field has a `target`"));
    }
    let ty = if spec.many { quote!(Vec<#scalar>) } else { scalar };
    Some(if spec.optional { quote!(Option<#ty>) } else { ty })
}

/// A name made safe for `format_ident!` even when it was refused (the error is reported anyway).
fn sanitize(name: &str) -> String {
    let cleaned: String = name.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    match cleaned.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => cleaned,
        _ => format!("X{cleaned}"),
    }
}

fn string_literal(text: &str) -> TokenStream {
    // A raw string when it reads better (patterns with backslashes) and can be one.
    let raw = match (text.contains('\\'), text.contains('"'), text.contains("\"#")) {
        (true, false, _) => format!("r\"{text}\""),
        (true, true, false) => format!("r#\"{text}\"#"),
        _ => return quote!(#text),
    };
    raw.parse().unwrap_or_else(|_| quote!(#text))
}

fn count(n: u64) -> TokenStream {
    let literal = proc_macro2::Literal::u64_unsuffixed(n);
    quote!(#literal)
}

fn number(value: f64, integer: bool) -> TokenStream {
    if integer && value.fract() == 0.0 && value.abs() < 9.0e15 {
        let literal = proc_macro2::Literal::i64_unsuffixed(value as i64);
        quote!(#literal)
    } else {
        let literal = proc_macro2::Literal::f64_unsuffixed(value);
        quote!(#literal)
    }
}

fn predicate(spec: &FieldSpec, at: &str, errors: &mut Vec<SpecError>) -> TokenStream {
    let mut items: Vec<TokenStream> = Vec::new();
    if let Some(iri) = &spec.iri {
        if let Err(message) = crate::names::check_iri(iri) {
            errors.push(fault(format!("{at}/iri"), message));
        }
        items.push(quote!(iri = #iri));
    }
    if let Some(n) = spec.min_length.map(count) {
        items.push(quote!(min_length = #n));
    }
    if let Some(n) = spec.max_length.map(count) {
        items.push(quote!(max_length = #n));
    }
    if let Some(pattern) = &spec.pattern {
        if let Err(message) = trails_pattern::check(pattern) {
            errors.push(fault(format!("{at}/pattern"), message));
        }
        let literal = string_literal(pattern);
        items.push(quote!(pattern = #literal));
    }
    if !spec.one_of.is_empty() {
        let mut values = Vec::new();
        for (index, value) in spec.one_of.iter().enumerate() {
            match value {
                serde_json::Value::String(s) => values.push(quote!(#s)),
                serde_json::Value::Bool(b) => values.push(quote!(#b)),
                serde_json::Value::Number(n) => {
                    values.push(number(n.as_f64().unwrap_or_default(), n.is_i64() || n.is_u64()))
                }
                _ => errors
                    .push(fault(format!("{at}/one_of/{index}"), "a `one_of` value is a string, number or boolean")),
            }
        }
        items.push(quote!(one_of = [#(#values),*]));
    }
    let integer = spec.kind == "integer";
    if let Some(v) = spec.min_value {
        let v = number(v, integer);
        items.push(quote!(min_value = #v));
    }
    if let Some(v) = spec.max_value {
        let v = number(v, integer);
        items.push(quote!(max_value = #v));
    }
    if let Some(n) = spec.min_count.map(count) {
        items.push(quote!(min_count = #n));
    }
    if let Some(n) = spec.max_count.map(count) {
        items.push(quote!(max_count = #n));
    }
    // Whether the role exists and fits is the macro's check, run on the scaffolded item.
    if let Some(role) = &spec.role {
        items.push(quote!(role = #role));
    }
    if items.is_empty() {
        quote!()
    } else {
        quote!(#[predicate(#(#items),*)])
    }
}

fn doc(text: Option<&str>) -> TokenStream {
    let lines = text.unwrap_or_default().lines().map(|line| format!(" {}", line.trim_end()));
    quote!(#(#[doc = #lines])*)
}

/// The field declarations of `specs`, the list the spec calls `list` (`fields`, `params`).
fn fields(specs: &[FieldSpec], list: &str, errors: &mut Vec<SpecError>, public: bool) -> Vec<TokenStream> {
    let mut seen = std::collections::BTreeSet::new();
    specs
        .iter()
        .enumerate()
        .filter_map(|(index, spec)| {
            let at = format!("{list}/{index}");
            check_field_name(&format!("{at}/name"), &spec.name, errors);
            if !seen.insert(spec.name.clone()) {
                errors.push(fault(format!("{at}/name"), format!("`{}` is declared twice", spec.name)));
            }
            let ty = field_type(spec, &at, errors)?;
            let name = field_ident(&spec.name);
            let doc = doc(spec.description.as_deref());
            let faults = errors.len();
            let predicate = predicate(spec, &at, errors);
            if errors.len() == faults {
                recheck_field(spec, &at, &quote!(#predicate pub #name: #ty), errors);
            }
            let vis = if public { quote!(pub) } else { quote!() };
            Some(quote! { #doc #predicate #vis #name: #ty })
        })
        .collect()
}

/// Format an item (or items) as a file.
fn format(tokens: TokenStream) -> Result<String, SpecError> {
    let file: syn::File = syn::parse2(tokens)
        .map_err(|e| fault("", format!("the generated source does not parse ({e}); a Trails bug")))?;
    let text = prettyplease::unparse(&file);
    // A blank line between the `use` and the item, as rustfmt leaves it.
    Ok(match text.split_once(";\n") {
        Some((head, rest)) if head.starts_with("use ") => format!("{head};\n\n{rest}"),
        _ => text,
    })
}

/// Read one field back through the attribute's own checks, alone in a shape, so that what they
/// refuse (a constraint on the wrong kind of value, a minimum over its maximum) is put on that
/// field — and on the key the message quotes, when the spec sets it — not on the whole spec.
fn recheck_field(spec: &FieldSpec, at: &str, field: &TokenStream, errors: &mut Vec<SpecError>) {
    let Ok(item) = syn::parse2::<syn::Item>(quote! { pub struct Scaffold { #field } }) else { return };
    let mut diags = Diagnostics::new();
    // As a node type's field, the kind that accepts every key (a role on a plain shape's field is
    // refused when the whole item is read back).
    let attr = quote!(label = "Scaffold", iri = "urn:trails:scaffold");
    crate::shape::parse(crate::shape::Kind::NodeType, attr, &item, &mut diags);
    if !diags.has_errors() {
        diags.discard();
        return;
    }
    for message in diags.into_messages() {
        let key = set_keys(spec)
            .into_iter()
            .find(|key| message.contains(&format!("`{key}`")) || message.contains(&format!("`{key} =")));
        let path = key.map_or_else(|| at.to_owned(), |key| format!("{at}/{key}"));
        errors.push(fault(path, message));
    }
}

/// The constraint keys `spec` sets, as the attribute's messages quote them.
fn set_keys(spec: &FieldSpec) -> Vec<&'static str> {
    [
        ("min_length", spec.min_length.is_some()),
        ("max_length", spec.max_length.is_some()),
        ("pattern", spec.pattern.is_some()),
        ("one_of", !spec.one_of.is_empty()),
        ("min_value", spec.min_value.is_some()),
        ("max_value", spec.max_value.is_some()),
        ("min_count", spec.min_count.is_some()),
        ("max_count", spec.max_count.is_some()),
        ("iri", spec.iri.is_some()),
        ("role", spec.role.is_some()),
    ]
    .into_iter()
    .filter_map(|(key, set)| set.then_some(key))
    .collect()
}

/// Read the generated item back through the attribute's own parser and checks.
fn recheck(errors: &mut Vec<SpecError>, check: impl FnOnce(&mut Diagnostics)) {
    let mut diags = Diagnostics::new();
    check(&mut diags);
    if diags.has_errors() {
        for message in diags.into_messages() {
            errors.push(fault("", message));
        }
    } else {
        diags.discard();
    }
}

/// The source of a `#[shape]` (or `#[node_type]`) declaration.
pub fn shape(spec: &ShapeSpec) -> Result<String, Vec<SpecError>> {
    let mut errors = Vec::new();
    check_ident("name", &spec.name, true, &mut errors);
    if let Err(message) = crate::names::check_iri(&spec.iri) {
        errors.push(fault("iri", message));
    }
    let fields = fields(&spec.fields, "fields", &mut errors, true);
    let name = format_ident!("{}", sanitize(&spec.name));
    let iri = &spec.iri;
    let doc = doc(spec.description.as_deref());
    let (attribute, kind, import) = match &spec.node_type {
        None => (quote!(#[shape(iri = #iri)]), crate::shape::Kind::Shape, quote!(shape)),
        Some(node) => {
            let label = node.label.clone().unwrap_or_else(|| spec.name.clone());
            let mut items = vec![quote!(label = #label), quote!(iri = #iri)];
            if let Some(key) = &node.key {
                if !spec.fields.iter().any(|f| &f.name == key) {
                    errors.push(fault("key", format!("`{key}` is not one of the fields")));
                }
                items.push(quote!(key = #key));
            }
            if !node.unique.is_empty() {
                let unique = &node.unique;
                items.push(quote!(unique = [#(#unique),*]));
            }
            (quote!(#[node_type(#(#items),*)]), crate::shape::Kind::NodeType, quote!(node_type))
        }
    };
    let item = quote! { #doc #attribute pub struct #name { #(#fields),* } };
    if errors.is_empty() {
        let (attr, body) = split_attribute(&item);
        recheck(&mut errors, |diags| {
            if let Ok(parsed) = syn::parse2::<syn::Item>(body) {
                crate::shape::parse(kind, attr, &parsed, diags);
            }
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // A `ref` field's target node type is the author's to bring into scope.
    format(quote! { use trails::#import; #item }).map_err(|e| vec![e])
}

/// The source of a `#[capability]` handler that the author fills in.
pub fn capability(spec: &CapabilitySpec) -> Result<String, Vec<SpecError>> {
    let mut errors = Vec::new();
    if let Err(message) = crate::names::check_capability_id(&spec.id) {
        errors.push(fault("id", message));
    }
    if let Err(message) = crate::names::check_semver(&spec.version) {
        errors.push(fault("version", message));
    }
    check_ident("handler", &spec.handler, false, &mut errors);
    if spec.output != "String" {
        check_ident("output", &spec.output, true, &mut errors);
    }
    let params = fields(&spec.params, "params", &mut errors, false);
    let id = &spec.id;
    let version = &spec.version;
    let handler = format_ident!("{}", sanitize(&spec.handler));
    let output = format_ident!("{}", sanitize(&spec.output));
    let doc = doc(Some(&spec.description));
    let mut items = vec![quote!(id = #id), quote!(version = #version)];
    if spec.read_only {
        items.push(quote!(side_effects(none)));
    }
    if spec.idempotent {
        items.push(quote!(idempotent));
    }
    let message = format!("{id} is not implemented yet");
    // The body to fill in names every parameter, so the scaffold builds without warnings.
    let names: Vec<syn::Ident> = spec.params.iter().map(|p| field_ident(&p.name)).collect();
    let item = quote! {
        #doc
        #[capability(#(#items),*)]
        pub async fn #handler(ctx: &trails::Ctx, #(#params),*) -> trails::Result<#output> {
            let _ = (ctx, #(#names),*);
            Err(trails::Error::internal(#message))
        }
    };
    if errors.is_empty() {
        let (attr, body) = split_attribute(&item);
        recheck(&mut errors, |diags| {
            if let Ok(function) = syn::parse2::<syn::ItemFn>(body) {
                crate::capability::parse(crate::capability::Kind::Runtime, attr, &function, diags);
            }
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    format(quote! { use trails::capability; #item }).map_err(|e| vec![e])
}

/// `(attribute arguments, item without that attribute)`: what the macro receives.
fn split_attribute(item: &TokenStream) -> (TokenStream, TokenStream) {
    let Ok(mut parsed) = syn::parse2::<syn::Item>(item.clone()) else { return (quote!(), item.clone()) };
    let attrs = match &mut parsed {
        syn::Item::Struct(s) => &mut s.attrs,
        syn::Item::Fn(f) => &mut f.attrs,
        _ => return (quote!(), item.clone()),
    };
    let position = attrs
        .iter()
        .position(|a| a.path().is_ident("shape") || a.path().is_ident("node_type") || a.path().is_ident("capability"));
    let arguments = match position.map(|at| attrs.remove(at)) {
        Some(attribute) => match attribute.meta {
            syn::Meta::List(list) => list.tokens,
            _ => quote!(),
        },
        None => quote!(),
    };
    (arguments, quote!(#parsed))
}
