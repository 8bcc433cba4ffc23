//! The knowledge graph as MCP resources (DESIGN §4.4, ADR-0060 Bundle 2): one umbrella resource
//! per node type, `trails://kg/types`, and the templates for filtered pages and single instances.
//! Every URI goes through one parser (`uri`); values in a `where` clause are bound by the store.
//!
//! Landed so far: `resources/list`, `resources/templates/list`, and `resources/read` of node-type
//! pages, instances (JSON-LD), `trails://kg/types`, `schema`, `stats`, and — for `builder` callers
//! — `doctor` and `prov/latest`. Still to come (issue 8): subscriptions and the model-controlled
//! `trails.kg.*` tools.

mod fixed;
mod read;
mod uri;

pub(crate) use read::{list, read, templates};

/// Whether `uri` parses (the fuzz targets' entry point).
pub(crate) fn parse_uri(uri: &str, node_types: &[&'static crate::declare::NodeTypeInfo]) -> bool {
    uri::parse(uri, node_types).is_ok()
}
