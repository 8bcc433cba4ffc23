//! What every handler attribute (`#[capability]`, `#[prompt]`, `#[resource]`) reads alike: the
//! `&Ctx` parameter, and the `scope` key.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{LitStr, Type};

use crate::args::Literal;
use crate::diag::Diagnostics;
use crate::ir::{ObjectDecl, ScopeDecl};

/// Whether a parameter is the handler's `&Ctx`.
pub(crate) fn is_ctx(ty: &Type) -> bool {
    matches!(ty, Type::Reference(reference)
        if matches!(&*reference.elem, Type::Path(path) if path.path.segments.last().is_some_and(|s| s.ident == "Ctx")))
}

/// `scope = "…"`, or `default` when it is not given; `None` (reported at the literal) when it
/// names no scope.
pub(crate) fn scope(lit: Option<&LitStr>, default: ScopeDecl, diags: &mut Diagnostics) -> Option<ScopeDecl> {
    let Some(lit) = lit else { return Some(default) };
    match lit.value().as_str() {
        "runtime" => Some(ScopeDecl::Runtime),
        "builder" => Some(ScopeDecl::Builder),
        "dev" => Some(ScopeDecl::Dev),
        other => {
            diags.error_spanned(
                lit,
                format!("scope `{other}` is not one of `runtime`, `builder`, `dev`; pick the least a caller needs"),
            );
            None
        }
    }
}

/// `&[(name, &[value, …]), …]`: the `one_of` strings of each parameter that has them, which
/// `completion/complete` offers (a prompt's arguments, a resource template's variables).
pub(crate) fn completions(object: &ObjectDecl) -> TokenStream {
    let completions = object.fields.iter().filter(|field| !field.constraints.one_of.is_empty()).map(|field| {
        let name = &field.name;
        let values = field.constraints.one_of.iter().filter_map(|value| match value {
            Literal::Str(value) => Some(value.as_str()),
            _ => None,
        });
        quote!((#name, &[#(#values),*]))
    });
    quote!(&[#(#completions),*])
}
