//! Which resource URIs can be subscribed to, and what each one watches
//! (`runtime/guide/03-knowledge-graph.md`): node-type umbrellas, single instances,
//! `trails://kg/types`, `trails://stats` and — for `builder` callers — `trails://prov/latest`.
//! Filtered pages, the schema and the health checks are not subscribable, and the refusal says
//! what to watch instead.

use rmcp::ErrorData;
use serde_json::json;

use super::read::refused;
use super::uri::{self, Target, MANIFEST_URI, SCHEME};
use super::Resources;
use crate::wire::errors;
use trails_core::auth::{Scope, ScopeSet};
use trails_kg::changes::{Change, ChangeKind};
use trails_kg::mapping;

/// Longest URI one can subscribe to: a subscription is kept for the whole session, so what it
/// holds is bounded (node-type labels and instance keys fit with room to spare).
pub(crate) const MAX_SUBSCRIBED_URI: usize = 2048;

/// What a subscribable URI watches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Topic {
    /// `trails://kg/types`: instance counts (fires on creates and deletes).
    Types,
    /// `trails://stats` (creates, deletes, provenance recorded or pruned).
    Stats,
    /// `trails://prov/latest` (provenance recorded or pruned).
    ProvLatest,
    /// `trails://kg/<Type>`: any change to any instance of the node type with this label.
    Umbrella(&'static str),
    /// `trails://kg/<Type>/<id>`: the instance with this IRI.
    Instance(String),
    /// One of the app's own resources (`#[resource]`), by its URI: fired when the app says it
    /// changed (`Control::resource_updated`).
    Own(String),
}

impl Topic {
    /// The topics a change fires.
    pub(crate) fn fired_by(change: Change<'_>) -> Vec<Topic> {
        match change {
            Change::Instance { node, iri, kind } => {
                let mut topics = vec![Topic::Instance(iri.to_owned()), Topic::Umbrella(node.label)];
                // A parent's umbrella lists the instances of the types that extend it.
                let mut parent = node.parent;
                while let Some(of) = parent {
                    topics.push(Topic::Umbrella(of.label));
                    parent = of.parent;
                }
                if kind != ChangeKind::Updated {
                    topics.extend([Topic::Types, Topic::Stats]);
                }
                topics
            }
            Change::Activity | Change::Pruned => vec![Topic::ProvLatest, Topic::Stats],
        }
    }
}

/// What `uri` watches, for a caller with `scopes`; the `-32602` that explains why not otherwise.
pub(crate) fn topic(resources: &Resources, uri: &str, scopes: ScopeSet) -> Result<Topic, ErrorData> {
    if uri.len() > MAX_SUBSCRIBED_URI {
        let shown: String = uri.chars().take(64).collect();
        return Err(ErrorData::invalid_params(
            format!("a subscribed URI is at most {MAX_SUBSCRIBED_URI} bytes; this one has {}", uri.len()),
            Some(json!({ "uri": format!("{shown}…") })),
        ));
    }
    // Builder-only resources are unknown to others whatever follows the path, as in `read`.
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let builder_only = [format!("{SCHEME}doctor"), format!("{SCHEME}prov/latest")];
    if !scopes.contains(Scope::Builder) && builder_only.iter().any(|p| p == path) {
        return Err(errors::unknown_resource(uri));
    }
    let target = uri::parse(uri, &resources.node_types).map_err(|error| refused(uri, error))?;
    if matches!(target, Target::Capabilities) && !resources.manifest {
        return Err(errors::unknown_resource(uri));
    }
    let not_subscribable =
        |why: String| ErrorData::invalid_params(why, Some(json!({ "uri": uri, "subscribable": false })));
    // Without a knowledge graph nothing a subscription watches ever changes.
    let Some(kg) = &resources.kg else {
        return Err(match target {
            Target::Schema | Target::Stats | Target::Doctor | Target::Capabilities => not_subscribable(
                "this server has no knowledge graph, so this resource does not change on its own; read it again \
                 instead"
                    .into(),
            ),
            _ => errors::unknown_resource(uri),
        });
    };
    Ok(match target {
        Target::Types => Topic::Types,
        Target::Stats => Topic::Stats,
        Target::Doctor | Target::ProvLatest if !scopes.contains(Scope::Builder) => {
            return Err(errors::unknown_resource(uri))
        }
        Target::ProvLatest => Topic::ProvLatest,
        Target::Doctor => {
            return Err(not_subscribable(format!(
                "{SCHEME}doctor is measured when it is read and is not subscribable; read it again instead"
            )))
        }
        Target::Blob { .. } => {
            return Err(not_subscribable(
                "a blob is named by its SHA-256 and never changes; subscribe to the instance that holds it".into(),
            ))
        }
        Target::Capabilities => {
            return Err(not_subscribable(format!(
                "{MANIFEST_URI} changes when the tool list does: notifications/tools/list_changed says when; read \
                 it again then"
            )))
        }
        Target::Schema => {
            return Err(not_subscribable(format!(
                "{SCHEME}schema does not change while the server runs and is not subscribable"
            )))
        }
        Target::List(request) if uri.contains('?') => {
            let label = request.node.label;
            return Err(not_subscribable(format!(
                "filtered and paged URIs are not subscribable; subscribe to {SCHEME}kg/{label} (it fires on every \
                 change to any {label}) and read the page again when it fires"
            )));
        }
        Target::List(request) => Topic::Umbrella(request.node.label),
        Target::Instance { node, id } => Topic::Instance(mapping::instance_iri(kg.base(), node.label, &id)),
    })
}
