//! The knowledge graph as MCP resources (`runtime/guide/03-knowledge-graph.md`): one umbrella resource
//! per node type, `trails://kg/types`, and the templates for filtered pages and single instances.
//! Every URI goes through one parser (`uri`); values in a `where` clause are bound by the store.
//!
//! `subscribe` says which URIs can be watched and what each watches; the routing of changes to
//! subscribers lives in `server/notifier`, the delivery in `mcp/subscribe`.
//!
//! Still to come (issue 8): the model-controlled `trails.kg.*` tools.

mod fixed;
mod read;
mod subscribe;
pub(crate) mod tools;
mod uri;

pub(crate) use read::{list, read, templates};
pub(crate) use subscribe::topic;

/// Whether `uri` parses (the fuzz targets' entry point).
#[cfg(any(fuzzing, test))]
pub(crate) fn parse_uri(uri: &str, node_types: &[&'static trails_core::declare::NodeTypeInfo]) -> bool {
    uri::parse(uri, node_types).is_ok()
}
