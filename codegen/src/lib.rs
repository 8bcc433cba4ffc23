//! The Trails projection compiler, as a plain library.
//!
//! `trails-macros` hands each annotated item here as tokens; this crate parses it into a small
//! typed IR ([`ir`]), checks every declaration (collecting *all* faults with their spans), and
//! generates the projections — JSON Schema, MCP tool descriptor, canonical JSON-LD descriptor,
//! RDF mapping, SHACL shape — as static data plus the validator and registry entry. No `proc_macro` types
//! appear here, so every step is unit-tested directly (see `tests/`).

#![warn(missing_docs)]

pub mod args;
pub mod capability;
pub mod diag;
pub mod field;
pub mod ir;
pub mod names;
pub mod preview;
pub mod prompt;
pub mod resource;
#[cfg(feature = "scaffold")]
pub mod scaffold;
pub mod schema;
pub mod shacl;
pub mod shape;
mod signature;
pub mod template;
pub mod validator;

use proc_macro2::TokenStream;

/// `#[shape(…)]`
pub fn expand_shape(attr: TokenStream, item: TokenStream) -> TokenStream {
    shape::expand(shape::Kind::Shape, attr, item)
}

/// `#[node_type(…)]`
pub fn expand_node_type(attr: TokenStream, item: TokenStream) -> TokenStream {
    shape::expand(shape::Kind::NodeType, attr, item)
}

/// `#[capability(…)]`
pub fn expand_capability(attr: TokenStream, item: TokenStream) -> TokenStream {
    capability::expand(capability::Kind::Runtime, attr, item)
}

/// `#[prompt(…)]`
pub fn expand_prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    prompt::expand(attr, item)
}

/// `#[resource(…)]`
pub fn expand_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(attr, item)
}

/// `#[meta_capability(…)]`
pub fn expand_meta_capability(attr: TokenStream, item: TokenStream) -> TokenStream {
    capability::expand(capability::Kind::Meta, attr, item)
}
