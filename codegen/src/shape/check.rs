//! Checks that need the whole declaration: which keys apply to which kind of item, labels, and
//! the fields a node type's `unique` names, display roles.

use crate::diag::Diagnostics;
use crate::ir::{Role, Scalar, ShapeBody, ShapeDecl};

pub(super) fn declaration(decl: &ShapeDecl, diags: &mut Diagnostics) {
    if let (Some((_, span)), ShapeBody::Object(_)) = (decl.rename_all, &decl.body) {
        diags.error_at(span, "`rename_all` applies to enums; struct field names are the Rust names");
    }
    roles(decl, diags);
    let Some(node) = &decl.node_type else { return };
    let valid_label = node.label.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && node.label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    // The store names its own graphs `<base>/graph/…`, activities `<base>/prov/…` and callers
    // `<base>/agent/…`: a node type with one of those labels would share their IRIs. And
    // `trails://kg/types` is the list of node types, not a type's instances.
    if ["graph", "prov", "agent", "types"].contains(&node.label.as_str()) {
        diags.error_at(
            node.label_span,
            format!(
                "label `{}` is reserved (graph, prov and agent name the store's own IRIs, types is trails://kg/types); \
                 choose another",
                node.label
            ),
        );
    }
    if !valid_label {
        diags.error_at(
            node.label_span,
            format!(
                "label `{}` must be an identifier (letters, digits, `_`): it becomes the `trails://kg/<label>` URI segment",
                node.label
            ),
        );
    }
    if let (Some((key, span)), ShapeBody::Object(object)) = (&node.key, &decl.body) {
        match object.fields.iter().find(|f| &f.name == key) {
            None => diags.error_at(*span, format!("`key` names `{key}`, which is not a field of `{}`", decl.ident)),
            Some(field) => {
                let scalar_ok = matches!(field.ty.scalar, Scalar::String | Scalar::Int(_));
                let problem = if field.ty.optional {
                    Some(format!("`{key}` is optional: remove `Option<…>`"))
                } else if field.ty.array {
                    Some(format!("`{key}` is a list"))
                } else if !scalar_ok {
                    Some(format!("`{key}` is {}", field.ty.scalar.describe()))
                } else {
                    None
                };
                if let Some(problem) = problem {
                    diags.error_at(
                        *span,
                        format!("`key` must name a required `String` or integer field (its value becomes the instance IRI), but {problem}"),
                    );
                }
            }
        }
    }
    // With `extends`, a name may be inherited: `emit` checks those at compile time instead.
    if let (ShapeBody::Object(object), None) = (&decl.body, &decl.extends) {
        for (name, span) in &node.unique {
            match object.fields.iter().find(|f| &f.name == name) {
                None => {
                    diags.error_at(*span, format!("`unique` names `{name}`, which is not a field of `{}`", decl.ident))
                }
                Some(field) if field.ty.array => diags.error_at(
                    *span,
                    format!("`unique` needs single-valued fields, but `{name}` is a list; name scalar fields only"),
                ),
                Some(_) => {}
            }
        }
    }
}

/// Display roles say how a node type's instances are listed: only node types have them, and a
/// type has one field per role (an inherited one is checked at compile time, in `emit`).
fn roles(decl: &ShapeDecl, diags: &mut Diagnostics) {
    let ShapeBody::Object(object) = &decl.body else { return };
    let mut seen: Vec<(Role, &str)> = Vec::new();
    for field in &object.fields {
        let Some((role, span)) = field.role else { continue };
        if decl.node_type.is_none() {
            diags.error_at(
                span,
                format!(
                    "display roles say how a node type's instances are listed, but `{}` is a `#[shape]`; \
                     declare it with `#[node_type]` or remove `role`",
                    decl.ident
                ),
            );
        } else if let Some((_, first)) = seen.iter().find(|(r, _)| *r == role) {
            diags.error_at(
                span,
                format!(
                    "`{first}` already has role `{}` in `{}`; a type has one field per role: remove one",
                    role.name(),
                    decl.ident
                ),
            );
        } else {
            seen.push((role, &field.name));
        }
    }
}
