//! What a server offers as MCP resources (`runtime/guide/03-knowledge-graph.md`). Every app has
//! `trails://schema`, `trails://stats`, `trails://doctor` and the capability manifest
//! (`trails://capabilities`); an app with node types also has the knowledge graph: one umbrella
//! resource per node type, `trails://kg/types`, provenance, and the templates for filtered pages
//! and single instances. Every URI goes through one parser (`uri`); values in a `where` clause
//! are bound by the store.
//!
//! `subscribe` says which URIs can be watched and what each watches (a [`Topic`]); the routing
//! of changes to subscribers lives in `state/notifier`, the delivery in `mcp/subscribe`. `tools`
//! is what the `trails.kg.*` tools read, through the same parser and queries.
//!
//! This layer owns its state ([`Resources`]) and sits below the server: what it reports of the
//! server (tool counts, subscriptions) it asks through [`Live`], which the server implements.

mod card;
mod complete;
mod fixed;
pub(crate) mod links;
mod read;
mod subscribe;
pub(crate) mod tools;
mod uri;

pub(crate) use complete::complete;
pub(crate) use read::{list, read, templates, ReadError};
pub(crate) use subscribe::{topic, Topic};
pub(crate) use uri::MANIFEST_URI;

use bytes::Bytes;
use serde_json::Value;
use trails_core::declare::NodeTypeInfo;
use trails_core::registry::ShapeEntry;

use trails_core::pipeline::View;
use trails_kg::Kg;

/// What the resources read, built once per process: the knowledge graph (`None`: the app
/// declares no node type: only the fixed resources), the declarations they describe, and the
/// facts `trails://stats` and `trails://doctor` report.
pub(crate) struct Resources {
    pub(crate) kg: Option<Kg>,
    /// The node types, in registry order.
    pub(crate) node_types: Vec<&'static NodeTypeInfo>,
    /// `[capability.manifest] enabled`: `trails://capabilities` is served.
    pub(crate) manifest: bool,
    /// Every shape, in registry order (`trails://schema`).
    pub(crate) shape_entries: Vec<&'static ShapeEntry>,
    /// What each caller spent of its budget (the ledger part's).
    pub(crate) budgets: Option<std::sync::Arc<dyn Spending>>,
    /// What the store part says of the store.
    pub(crate) store: StoreFacts,
}

/// What the store part (`[kg]`) tells `trails://doctor` and `trails://stats` of the store.
#[derive(Debug, Clone, Default)]
pub(crate) struct StoreFacts {
    /// Where the store is, as `trails://doctor` names it.
    pub(crate) store: String,
    /// Provenance retention: activities kept at most, and for how many days.
    pub(crate) provenance_keep: usize,
    pub(crate) provenance_max_age_days: i64,
}

/// What `trails://stats` reports of each caller's spending (`builder`: by caller, else totals).
pub(crate) trait Spending: Send + Sync {
    fn stats(&self, builder: bool) -> Value;
}

/// What the resources report of the serving layer above them, which implements it.
pub(crate) trait Live: Send + Sync {
    /// How many tools a caller with `view` sees.
    fn tool_count(&self, view: View) -> usize;
    /// The capability manifest a caller with `view` sees (`None`: it is switched off).
    fn manifest(&self, view: View) -> Option<Bytes>;
    /// The subscriptions' counts and bounds, for `trails://stats`.
    fn subscription_stats(&self) -> Value;
    /// The cut results kept for paging (`trails_result_read`): how many, and their bytes.
    fn continuation_stats(&self) -> Value;
    /// The MCP tasks this replica runs, and their bounds (`null`: no capability is a task).
    fn task_stats(&self) -> Value;
    /// Whether a caller with `view` is shown the shape `iri` (`trails://schema`): some tool it
    /// sees is made of it, or no tool is.
    fn shape_shown(&self, view: View, iri: &str) -> bool;
}

/// Whether `uri` parses (the fuzz targets' entry point).
#[cfg(any(fuzzing, test))]
pub(crate) fn parse_uri(uri: &str, node_types: &[&'static trails_core::declare::NodeTypeInfo]) -> bool {
    uri::parse(uri, node_types).is_ok()
}
