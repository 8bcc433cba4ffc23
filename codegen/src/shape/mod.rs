//! `#[shape]` and `#[node_type]`, in serde_derive's layers: `attr` reads the attribute's keys,
//! `parse` turns the item into the IR, `check` looks at the declaration as a whole, `emit`
//! generates the impls and the registry entry, and `fallback` keeps the type usable when the
//! declaration has errors (so its users get the real error, not a cascade).

mod attr;
mod check;
pub(crate) mod emit;
mod fallback;
mod parse;

use proc_macro2::TokenStream;
use quote::quote;

use crate::diag::Diagnostics;
use crate::ir::ShapeDecl;

pub use emit::{description, schema_members};

/// Which attribute is being expanded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `#[shape]`
    Shape,
    /// `#[node_type]`
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
    let mut item: syn::Item = match syn::parse2(item) {
        Ok(item) => item,
        Err(error) => return error.to_compile_error(),
    };
    let mut diags = Diagnostics::new();
    let decl = parse(kind, attr, &item, &mut diags);
    parse::strip_helper_attributes(&mut item);
    match (decl, diags.finish()) {
        (Some(decl), Ok(())) => emit::generate(&decl, item),
        (_, result) => {
            let errors = result.err().map(|e| e.to_compile_error()).unwrap_or_default();
            let fallback = fallback::impls(kind, &item);
            quote!(#errors #item #fallback)
        }
    }
}

/// Parse and check a declaration into the IR (`None` if it is too broken to describe).
pub fn parse(kind: Kind, attr: TokenStream, item: &syn::Item, diags: &mut Diagnostics) -> Option<ShapeDecl> {
    let attrs = attr::parse(kind, attr, diags);
    let decl = parse::item(kind, attrs, item, diags)?;
    check::declaration(&decl, diags);
    Some(decl)
}
