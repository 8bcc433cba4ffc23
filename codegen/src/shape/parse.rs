//! The annotated item → [`ShapeDecl`]: fields (each with its predicates), variants, identity.

use std::collections::BTreeMap;

use quote::ToTokens;
use syn::LitStr;

use super::attr::ShapeAttrs;
use super::Kind;
use crate::args;
use crate::diag::Diagnostics;
use crate::field::parse_field;
use crate::ir::{Extends, NodeTypeDecl, ObjectDecl, Scalar, ShapeBody, ShapeDecl};
use crate::names::{self, RenameRule};

pub(super) fn item(kind: Kind, attrs: ShapeAttrs, item: &syn::Item, diags: &mut Diagnostics) -> Option<ShapeDecl> {
    let (ident, item_attrs, generics) = match item {
        syn::Item::Struct(s) => (&s.ident, &s.attrs, &s.generics),
        syn::Item::Enum(e) if kind == Kind::Shape => (&e.ident, &e.attrs, &e.generics),
        other => {
            let what = match kind {
                Kind::Shape => "a struct with named fields or a unit enum",
                Kind::NodeType => "a struct with named fields",
            };
            diags.error_spanned(other, format!("#[{}] applies to {what}", kind.attribute()));
            return None;
        }
    };
    if !generics.params.is_empty() {
        diags.error_spanned(
            generics,
            format!(
                "#[{}] types cannot be generic: their schema is fixed at build time; use a concrete type",
                kind.attribute()
            ),
        );
    }
    for attr in item_attrs.iter().filter(|a| a.path().is_ident("serde")) {
        diags.error_spanned(attr, "`#[serde(…)]` would change the wire format behind the generated schema; remove it (use `#[shape(rename_all = …)]` for enum variants)");
    }

    let (label, label_span) = match &attrs.label {
        Some(label) => (label.value(), label.span()),
        None => (ident.to_string(), ident.span()),
    };
    let iri = match &attrs.iri {
        Some(lit) => checked_iri(lit, "iri", &attrs.prefixes, diags),
        None => Some(match kind {
            Kind::Shape => format!("urn:trails:shape:{ident}"),
            Kind::NodeType => format!("urn:trails:type:{label}"),
        }),
    };
    let rename_all = attrs.rename_all.as_ref().map(|(rule, lit)| (*rule, lit.span()));
    let (body, extends) = match item {
        syn::Item::Struct(s) => {
            let (object, extends) = struct_fields(s, attrs.extends.as_ref(), &attrs.prefixes, diags)?;
            (ShapeBody::Object(object), extends)
        }
        syn::Item::Enum(e) => (ShapeBody::Enum(variants(e, rename_all.map(|(rule, _)| rule), diags)), None),
        _ => unreachable!("filtered above"),
    };
    // A node type's lists are sets in the graph (one triple per item): its schema and validator
    // say so, rather than let the store refuse a repeated item after the schema allowed it. Only
    // for scalar items, whose JSON is their identity: a nested shape or a blob is compared by the
    // store once normalised (a blob sent with and without its echoed `sha256` is one blob).
    let mut body = body;
    if let (Kind::NodeType, ShapeBody::Object(object)) = (kind, &mut body) {
        for field in object.fields.iter_mut().filter(|field| field.ty.array) {
            field.constraints.unique_items = !matches!(field.ty.scalar, Scalar::Nested(_));
        }
    }
    let node_type = (kind == Kind::NodeType).then(|| NodeTypeDecl {
        label,
        label_span,
        unique: attrs.unique.iter().map(|l| (l.value(), l.span())).collect(),
        key: attrs.key.as_ref().map(|l| (l.value(), l.span())),
    });

    let user_derives_serde = derives(item_attrs, "Serialize") || derives(item_attrs, "Deserialize");
    if user_derives_serde && !(derives(item_attrs, "Serialize") && derives(item_attrs, "Deserialize")) {
        diags.error_spanned(
            ident,
            "derive both `Serialize` and `Deserialize`, or neither (Trails derives them for you)",
        );
    }
    if let (true, Some((_, span))) = (user_derives_serde, rename_all) {
        diags.error_at(span, "`rename_all` is applied through the serde derive Trails writes: remove your `Serialize`/`Deserialize` derives (or drop `rename_all`)");
    }
    if user_derives_serde && extends.is_some() {
        diags.error_spanned(ident, "`extends` flattens the parent field with serde: let Trails derive `Serialize`/`Deserialize` (remove the derives)");
    }

    Some(ShapeDecl {
        ident: ident.clone(),
        iri: iri?,
        extends,
        description: args::doc_comment(item_attrs),
        body,
        rename_all,
        node_type,
        user_derives_serde,
    })
}

/// Whether the item derives a trait whose last path segment is `name` (`Serialize`, …).
pub(super) fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        a.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
            .map(|paths| paths.iter().any(|p| p.segments.last().is_some_and(|s| s.ident == name)))
            .unwrap_or(false)
    })
}

/// Expand `prefix:local` with a declared prefix; otherwise the IRI as written.
pub(crate) fn expand_curie(iri: &str, prefixes: &BTreeMap<String, String>) -> String {
    if let Some((prefix, local)) = iri.split_once(':') {
        if let Some(namespace) = prefixes.get(prefix) {
            return format!("{namespace}{local}");
        }
    }
    iri.to_owned()
}

fn checked_iri(
    lit: &LitStr,
    key: &str,
    prefixes: &BTreeMap<String, String>,
    diags: &mut Diagnostics,
) -> Option<String> {
    let iri = expand_curie(&lit.value(), prefixes);
    match names::check_iri(&iri) {
        Ok(()) => Some(iri),
        Err(reason) => {
            diags.error_spanned(lit, format!("invalid `{key}`: {reason}"));
            None
        }
    }
}

fn type_text(ty: &syn::Type) -> String {
    ty.to_token_stream().to_string().replace(' ', "")
}

/// The fields as JSON properties. The field holding the `extends` parent is not a property of its
/// own: its properties are the parent's, merged in by `emit`.
fn struct_fields(
    item: &syn::ItemStruct,
    parent: Option<&syn::Type>,
    prefixes: &BTreeMap<String, String>,
    diags: &mut Diagnostics,
) -> Option<(ObjectDecl, Option<Extends>)> {
    let syn::Fields::Named(named) = &item.fields else {
        diags.error_spanned(
            &item.fields,
            "shapes need named fields: each field becomes a JSON property (`struct S { name: String }`)",
        );
        return None;
    };
    let parent_text = parent.map(type_text);
    let mut extends = None;
    let mut fields = Vec::new();
    for field in &named.named {
        let ident = field.ident.as_ref().expect("named fields have names");
        if parent_text.is_some() && parent_text == Some(type_text(&field.ty)) {
            if extends.is_some() {
                diags.error_spanned(&field.ty, "only one field may hold the `extends` parent");
            }
            if let Some(attr) = field.attrs.iter().find(|a| a.path().is_ident("predicate")) {
                diags.error_spanned(attr, "the `extends` parent's constraints are its own: remove `#[predicate]` here");
            }
            extends = Some(Extends { parent: field.ty.clone(), field: ident.clone() });
            continue;
        }
        if let Some(mut parsed) = parse_field(ident, &field.ty, &field.attrs, diags) {
            parsed.iri = parsed.iri.map(|iri| expand_curie(&iri, prefixes));
            fields.push(parsed);
        }
    }
    if let (Some(parent), None) = (parent, &extends) {
        let name = type_text(parent);
        diags.error_spanned(
            parent,
            format!(
                "`extends = {name}` needs a field of type `{name}` to hold the inherited values, e.g. `pub base: {name},` \
                 (its properties are merged into this shape's)"
            ),
        );
    }
    Some((ObjectDecl { fields }, extends))
}

fn variants(
    item: &syn::ItemEnum,
    rename_all: Option<RenameRule>,
    diags: &mut Diagnostics,
) -> Vec<(syn::Ident, String)> {
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
            Some((variant.ident.clone(), rename_all.map(|r| r.apply_to_variant(&name)).unwrap_or(name)))
        })
        .collect()
}

/// Remove our helper attributes so rustc never sees them.
pub(super) fn strip_helper_attributes(item: &mut syn::Item) {
    if let syn::Item::Struct(s) = item {
        for field in s.fields.iter_mut() {
            field.attrs.retain(|a| !a.path().is_ident("predicate"));
        }
    }
}
