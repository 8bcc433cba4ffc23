//! The handler and its attribute → [`CapabilityDecl`]: identity, description, and the signature
//! (`&Ctx`, then one `#[shape]` input or named parameters with per-parameter predicates).

use proc_macro2::Span;
use syn::{FnArg, Pat, ReturnType};

use super::attr::CapabilityAttrs;
use super::{check, Kind};
use crate::args;
use crate::diag::Diagnostics;
use crate::field::{classify, parse_field};
use crate::ir::{CapabilityDecl, Input, ObjectDecl, Param, Scalar, ScopeDecl, ToolKindDecl};
use crate::names;

/// Identity: (kind, id, MCP name, scope).
fn identity(
    kind: Kind,
    attrs: &CapabilityAttrs,
    diags: &mut Diagnostics,
) -> Option<(ToolKindDecl, String, String, ScopeDecl)> {
    match kind {
        Kind::Runtime => {
            let Some(lit) = &attrs.id else {
                diags.error_at(
                    Span::call_site(),
                    "a capability needs an `id`, e.g. `#[capability(id = \"requirements.search\")]`",
                );
                return None;
            };
            let id = check::checked(Some(lit), names::check_capability_id, diags)?;
            let name = names::runtime_tool_name(&id);
            Some((ToolKindDecl::Runtime, id, name, ScopeDecl::Runtime))
        }
        Kind::Meta => {
            let namespace = check::checked(attrs.namespace.as_ref(), names::check_namespace, diags);
            let namespace_failed = attrs.namespace.is_some() && namespace.is_none();
            let op = match &attrs.op {
                Some(lit) => check::checked(Some(lit), names::check_op, diags),
                None => {
                    diags.error_at(
                        Span::call_site(),
                        "a meta capability needs an `op`, e.g. `#[meta_capability(namespace = \"gen\", op = \"shape\")]`",
                    );
                    None
                }
            };
            let scope = check::scope(attrs.scope.as_ref(), diags);
            let (Some(op), Some(scope), false) = (op, scope, namespace_failed) else { return None };
            let id = names::meta_capability_id(namespace.as_deref(), &op);
            if let Err(message) = names::check_meta_id_len(&id) {
                diags.error_spanned(attrs.op.as_ref().expect("op is present"), message);
                return None;
            }
            let name = names::meta_tool_name(namespace.as_deref(), &op);
            Some((ToolKindDecl::Meta { namespace, op }, id, name, scope))
        }
    }
}

pub(super) fn declaration(
    kind: Kind,
    attrs: CapabilityAttrs,
    function: &syn::ItemFn,
    diags: &mut Diagnostics,
) -> Option<CapabilityDecl> {
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        diags.error_spanned(sig.fn_token, format!("#[{}] handlers must be `async fn`: add `async`", kind.attribute()));
    }
    if !sig.generics.params.is_empty() {
        diags
            .error_spanned(&sig.generics, "capability handlers cannot be generic: their schema is fixed at build time");
    }
    let identity = identity(kind, &attrs, diags);

    let version = check::version(attrs.version.as_ref(), diags);
    let description = match &attrs.description {
        Some(lit) => lit.value(),
        None => match args::doc_comment(&function.attrs) {
            Some(doc) => doc,
            None => {
                diags.error_spanned(
                    &sig.ident,
                    format!(
                        "`{}` has no description; agents choose tools by it: add a `///` doc comment or `description = \"…\"`",
                        sig.ident
                    ),
                );
                String::new()
            }
        },
    };
    let input_shape = check::checked(attrs.input_shape.as_ref(), names::check_iri, diags);
    let output_shape = check::checked(attrs.output_shape.as_ref(), names::check_iri, diags);
    let deprecates = check::checked(attrs.deprecates.as_ref(), names::check_capability_id, diags);
    let version_status = check::version_status(attrs.version_status.as_ref(), diags);
    let reasoning = check::reasoning(attrs.reasoning.as_ref(), diags);
    let assurance = check::assurance(attrs.assurance.as_ref(), diags);
    let (input, params) = signature(sig, diags);
    check::precondition_keys(&attrs.preconditions, &input, diags);
    let return_type = match &sig.output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => {
            diags.error_spanned(&sig.ident, "a capability must return `trails::Result<T>`; add `-> trails::Result<…>`");
            return None;
        }
    };
    let (kind, id, name, scope) = identity?;
    Some(CapabilityDecl {
        kind,
        id,
        name,
        version,
        description,
        scope,
        input,
        return_type,
        input_shape,
        output_shape,
        preconditions: attrs.preconditions,
        side_effects: attrs.side_effects,
        cost: attrs.cost,
        policy_required: attrs.policy_required.iter().map(|l| l.value()).collect(),
        idempotent: attrs.idempotent,
        deprecates,
        version_status,
        reasoning,
        assurance,
        confirm: attrs.confirm.map(|l| l.value()),
        task: attrs.task,
        handler: sig.ident.clone(),
        params,
    })
}

/// The parameters: `&Ctx` anywhere, then either exactly one `#[shape]` (its properties are the
/// tool's) or named parameters (each a property, with its own `#[predicate]`s and `///` docs).
fn signature(sig: &syn::Signature, diags: &mut Diagnostics) -> (Input, Vec<Param>) {
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
        if crate::signature::is_ctx(&typed.ty) {
            params.push(Param::Ctx);
            continue;
        }
        let Pat::Ident(pat) = &*typed.pat else {
            diags.error_spanned(&typed.pat, "name this parameter: it becomes a tool property (`limit: u32`)");
            continue;
        };
        let has_predicate = typed.attrs.iter().any(|a| a.path().is_ident("predicate"));
        // A speculative look at the type: its errors, if any, are reported by `parse_field` below.
        let mut scratch = Diagnostics::new();
        let is_nested = !has_predicate
            && classify(&typed.ty, &mut scratch)
                .is_some_and(|t| !t.optional && !t.array && matches!(t.scalar, Scalar::Nested(_)));
        scratch.discard();
        if is_nested {
            shape_candidates.push((*typed.ty).clone());
        }
        named.push(typed);
        params.push(Param::Named(pat.ident.clone()));
    }
    if named.len() == 1 && shape_candidates.len() == 1 {
        let ty = shape_candidates.pop().expect("one candidate");
        let params =
            params.into_iter().map(|p| if matches!(p, Param::Named(_)) { Param::ShapeInput } else { p }).collect();
        return (Input::Shape { ty: Box::new(ty) }, params);
    }
    let fields = named
        .iter()
        .filter_map(|typed| {
            let Pat::Ident(pat) = &*typed.pat else { return None };
            let field = parse_field(&pat.ident, &typed.ty, &typed.attrs, diags)?;
            if let Some((_, span)) = field.role {
                diags.error_at(
                    span,
                    "display roles say how a node type's instances are listed; a capability parameter has none: remove `role`",
                );
            }
            Some(field)
        })
        .collect();
    (Input::Params(ObjectDecl { fields }), params)
}
