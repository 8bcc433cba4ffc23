//! The Trails attributes. Each forwards its tokens to `trails-codegen`, which parses,
//! checks and generates; this crate only crosses the `proc_macro` boundary.

#![warn(missing_docs)]

use proc_macro::TokenStream;

/// A JSON-object (or string-enum) shape: JSON Schema, validator, SHACL IRI.
#[proc_macro_attribute]
pub fn shape(attr: TokenStream, item: TokenStream) -> TokenStream {
    trails_codegen::expand_shape(attr.into(), item.into()).into()
}

/// A knowledge-graph node type: a shape plus its RDF mapping.
#[proc_macro_attribute]
pub fn node_type(attr: TokenStream, item: TokenStream) -> TokenStream {
    trails_codegen::expand_node_type(attr.into(), item.into()).into()
}

/// A runtime capability: an MCP tool named by its `id`.
#[proc_macro_attribute]
pub fn capability(attr: TokenStream, item: TokenStream) -> TokenStream {
    trails_codegen::expand_capability(attr.into(), item.into()).into()
}

/// A meta capability: an MCP tool `trails_meta_<namespace>_<op>`, gated by `scope`.
#[proc_macro_attribute]
pub fn meta_capability(attr: TokenStream, item: TokenStream) -> TokenStream {
    trails_codegen::expand_meta_capability(attr.into(), item.into()).into()
}

/// A prompt: an MCP prompt named by its function (or `name`), its arguments the function's
/// `String` parameters.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    trails_codegen::expand_prompt(attr.into(), item.into()).into()
}

/// A resource of the app's own: a fixed URI (`memo://insights`) or a URI template whose
/// `{variables}` are the function's `String` parameters.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    trails_codegen::expand_resource(attr.into(), item.into()).into()
}
