//! `#[resource]`, in serde_derive's layers: `parse` reads the attribute and the function's
//! signature into the IR and checks it (the URI template's variables are the function's
//! `String` parameters, one for one), `emit` generates the listing entry, the variables'
//! validator and the registry entry.

mod emit;
mod parse;

use proc_macro2::TokenStream;

/// Expand `#[resource(attr)] item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    crate::signature::expand_function("resource", attr, item, parse::declaration, emit::generate)
}

pub use emit::descriptor;
