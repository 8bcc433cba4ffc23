//! What every handler attribute (`#[capability]`, `#[prompt]`, `#[resource]`) reads alike: the
//! function, the `&Ctx` parameter, the `scope` key, the `one_of` completions.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{LitStr, Type};

use crate::args::Literal;
use crate::diag::Diagnostics;
use crate::ir::{ObjectDecl, ScopeDecl};

/// Expand `#[what(attr)] item` for a function attribute: parse it (`declare`, reporting its
/// faults), strip the parameters' `#[predicate]`s and docs (the declaration keeps them), then
/// `generate` — or, on a fault, the function alone beside the errors, so that one fault does
/// not cascade.
pub(crate) fn expand_function<D>(
    what: &str,
    attr: TokenStream,
    item: TokenStream,
    declare: fn(TokenStream, &syn::ItemFn, &mut Diagnostics) -> Option<D>,
    generate: fn(&D, &syn::ItemFn) -> TokenStream,
) -> TokenStream {
    let mut function: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(error) => {
            return syn::Error::new(error.span(), format!("#[{what}] applies to an `async fn`")).to_compile_error()
        }
    };
    let mut diags = Diagnostics::new();
    let decl = declare(attr, &function, &mut diags);
    strip_param_attributes(&mut function);
    match (decl, diags.finish()) {
        (Some(decl), Ok(())) => generate(&decl, &function),
        (_, result) => {
            let errors = result.err().map(|e| e.to_compile_error()).unwrap_or_default();
            quote!(#errors #function)
        }
    }
}

/// The function as rustc must see it: without the `#[predicate]`s and docs of its parameters.
pub(crate) fn strip_param_attributes(function: &mut syn::ItemFn) {
    for input in function.sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(typed) = input {
            typed.attrs.retain(|a| !a.path().is_ident("predicate") && !a.path().is_ident("doc"));
        }
    }
}

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
