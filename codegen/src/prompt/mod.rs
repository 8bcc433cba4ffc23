//! `#[prompt]`, in serde_derive's layers: `parse` reads the attribute and the function's
//! signature into the IR and checks it (a prompt's arguments are strings, as MCP's are), `emit`
//! generates the `prompts/list` entry, the arguments' validator and the registry entry.

mod emit;
mod parse;

use proc_macro2::TokenStream;

/// Expand `#[prompt(attr)] item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    crate::signature::expand_function("prompt", attr, item, parse::declaration, emit::generate)
}

pub use emit::descriptor;
