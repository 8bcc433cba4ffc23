//! `#[capability]` and `#[meta_capability]`, in serde_derive's layers: `attr` reads the
//! attribute's keys, `parse` reads the handler's signature and assembles the IR, `check` validates
//! each declared value, and `emit` generates the descriptors, the validator and the registry entry.

mod attr;
mod check;
mod emit;
mod parse;

use proc_macro2::TokenStream;
use quote::quote;

use crate::diag::Diagnostics;
use crate::ir::CapabilityDecl;

pub use emit::{annotations, canonical, descriptor};

/// Which attribute is being expanded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `#[capability]`
    Runtime,
    /// `#[meta_capability]`
    Meta,
}

impl Kind {
    fn attribute(self) -> &'static str {
        match self {
            Kind::Runtime => "capability",
            Kind::Meta => "meta_capability",
        }
    }
}

/// Expand `#[capability(attr)] item` or `#[meta_capability(attr)] item`.
pub fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut function: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(error) => {
            return syn::Error::new(error.span(), format!("#[{}] applies to an `async fn` handler", kind.attribute()))
                .to_compile_error();
        }
    };
    let mut diags = Diagnostics::new();
    // Both attributes on one handler: said once, here, and the other one is dropped so it does
    // not say it again.
    let other = match kind {
        Kind::Runtime => "meta_capability",
        Kind::Meta => "capability",
    };
    if let Some(index) =
        function.attrs.iter().position(|a| a.path().segments.last().is_some_and(|segment| segment.ident == other))
    {
        let twice = function.attrs.remove(index);
        diags.error_spanned(
            &twice,
            format!(
                "`{}` has both #[{}] and #[{other}]: a handler is one capability, a runtime or a meta one; keep one",
                function.sig.ident,
                kind.attribute()
            ),
        );
    }
    let decl = parse(kind, attr, &function, &mut diags);
    crate::signature::strip_param_attributes(&mut function);
    match (decl, diags.finish()) {
        (Some(decl), Ok(())) => emit::generate(&decl, &function),
        (_, result) => {
            let errors = result.err().map(|e| e.to_compile_error()).unwrap_or_default();
            quote!(#errors #function)
        }
    }
}

/// Parse and check a handler and its attribute into the IR (`None` if too broken to describe).
pub fn parse(kind: Kind, attr: TokenStream, function: &syn::ItemFn, diags: &mut Diagnostics) -> Option<CapabilityDecl> {
    let attrs = attr::parse(kind, attr, diags);
    parse::declaration(kind, attrs, function, diags)
}
