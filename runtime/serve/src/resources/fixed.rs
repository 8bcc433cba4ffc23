//! The resources with fixed URIs: `trails://schema`, `trails://stats`, `trails://doctor` and
//! `trails://prov/latest`.

use std::time::Instant;

use oxrdf::NamedNode;
use serde_json::{json, Value};

use super::{Live, Resources};
use trails_core::declare::{Datatype, NodeTypeInfo};
use trails_kg::{self as kg, mapping, store, Find, Kg};

/// How many activities `trails://prov/latest` shows.
const LATEST_ACTIVITIES: usize = 20;

const PROV: &str = "http://www.w3.org/ns/prov#";
const TRAILS: &str = "https://w3id.org/trails/capability#";

/// Every shape the caller (`view`) is shown (its JSON Schema) and, for node types, the RDF mapping.
pub(crate) fn schema(resources: &Resources, live: &dyn Live, view: trails_core::pipeline::View) -> Value {
    let shapes: Vec<Value> = resources
        .shape_entries
        .iter()
        .filter(|shape| live.shape_shown(view, shape.iri()))
        .map(|shape| {
            let mut entry = json!({
                "name": shape.name(),
                "iri": shape.iri(),
                "schema": serde_json::from_str::<Value>(shape.schema()).unwrap_or(Value::Null),
            });
            if let Some(parent) = shape.extends() {
                entry["extends"] = json!(parent);
            }
            if let Some(node) = shape.node_type() {
                entry["node_type"] = node_type(node);
            }
            entry
        })
        .collect();
    json!({ "shapes": shapes })
}

fn node_type(node: &NodeTypeInfo) -> Value {
    let predicates: Vec<Value> = node
        .all_predicates()
        .into_iter()
        .map(|p| {
            let mut predicate = json!({
                "field": p.field,
                "iri": p.iri,
                "datatype": p.datatype.iri(),
                "required": p.required,
                "many": p.many,
            });
            if let (Datatype::Iri, Some(target)) = (p.datatype, p.target()) {
                predicate["target"] = json!(target.iri);
            }
            if let Some(role) = p.role {
                predicate["role"] = json!(role.name());
            }
            predicate
        })
        .collect();
    json!({
        "label": node.label,
        "class": node.iri,
        "key": node.key,
        "unique": node.unique,
        "uri": format!("trails://kg/{}", node.label),
        "predicates": predicates,
    })
}

/// Counts: the tools the caller (`view`) can see (never more than its own `tools/list` shows), resource
/// subscriptions (with the updates dropped from full queues), budgets and — with a knowledge
/// graph — instances per node type and provenance kept and pruned. An anonymous caller sees the
/// bounds and the knowledge graph's counts (it can list the graph anyway), not what other callers
/// do: anyone could watch those move.
pub(crate) async fn stats(
    resources: &Resources,
    live: &dyn Live,
    kg: Option<&Kg>,
    view: trails_core::pipeline::View,
    authenticated: bool,
) -> trails_core::Result<Value> {
    let mut stats = json!({ "tools": live.tool_count(view) });
    if authenticated {
        stats["subscriptions"] = live.subscription_stats();
        stats["continuations"] = live.continuation_stats();
        stats["tasks"] = live.task_stats();
        // Who spent what is for builders; others see the totals. (`null`: built without budgets.)
        stats["budgets"] = budgets(resources, view.scopes());
    } else {
        stats["activity"] = json!(ANONYMOUS_STATS);
    }
    let Some(kg) = kg else { return Ok(stats) };
    let mut instances = serde_json::Map::new();
    for node in &resources.node_types {
        instances.insert(node.label.to_owned(), json!(count(kg, node).await?));
    }
    stats["instances"] = json!(instances);
    stats["provenance"] = json!({
        "keep": resources.store.provenance_keep,
        "max_age_days": resources.store.provenance_max_age_days,
    });
    if authenticated {
        let activities = format!("SELECT (COUNT(?a) AS ?n) WHERE {{ GRAPH ?a {{ ?a a <{PROV}Activity> }} }}");
        let activities = store::count_of(&kg.store().select(activities, Vec::new()).await.map_err(kg::store_failed)?);
        stats["provenance"]["activities"] = json!(activities);
        stats["provenance"]["pruned_since_start"] = json!(kg.provenance_pruned());
    }
    Ok(stats)
}

/// What `trails://stats` says in place of the activity an anonymous caller does not see.
const ANONYMOUS_STATS: &str = "subscriptions, kept results, tasks, budgets and provenance activities are \
     shown to callers with a token: anonymous callers share them, and could watch each other's";

fn budgets(resources: &Resources, scopes: trails_core::auth::ScopeSet) -> Value {
    let builder = scopes.contains(trails_core::auth::Scope::Builder);
    resources.budgets.as_ref().map_or(Value::Null, |budgets| budgets.stats(builder))
}

/// How many instances of `node` the store holds, those of the types that extend it included.
pub(crate) async fn count(kg: &Kg, node: &NodeTypeInfo) -> trails_core::Result<usize> {
    let find = Find {
        graphs: mapping::graphs_with_subtypes(kg.base(), node),
        class: NamedNode::new_unchecked(node.iri),
        filters: Vec::new(),
        limit: 0,
        offset: 0,
        after: None,
    };
    Ok(kg.store().find(find).await.map_err(kg::store_failed)?.total)
}

/// Health checks: the store answers (and how fast; with a knowledge graph), and what is
/// registered.
pub(crate) async fn doctor(resources: &Resources, live: &dyn Live, kg: Option<&Kg>) -> Value {
    let mut checks = Vec::new();
    if let Some(kg) = kg {
        let started = Instant::now();
        let probe = kg.store().select("ASK { ?s ?p ?o }".to_owned(), Vec::new()).await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let store = &resources.store.store;
        checks.push(match probe {
            Ok(_) => json!({ "check": "store", "ok": true, "detail": store, "ms": ms }),
            Err(error) => json!({ "check": "store", "ok": false, "detail": format!("{store}: {error}"), "ms": ms }),
        });
    }
    let tools = live
        .tool_count(trails_core::pipeline::View::of(trails_core::auth::ScopeSet::up_to(trails_core::auth::Scope::Dev)));
    let (shapes, node_types) = (resources.shape_entries.len(), resources.node_types.len());
    let detail = format!("{tools} tools, {shapes} shapes, {node_types} node types");
    checks.push(json!({ "check": "registry", "ok": true, "detail": detail }));
    json!({ "ok": checks.iter().all(|check| check["ok"] == true), "checks": checks })
}

/// The latest activities, newest first.
pub(crate) async fn prov_latest(kg: &Kg) -> trails_core::Result<Value> {
    let query = format!(
        "SELECT ?a ?capability ?version ?outcome ?started ?ended ?agent ?trace ?client WHERE {{ GRAPH ?a {{
           ?a a <{PROV}Activity> ; <{TRAILS}capability> ?capability ; <{TRAILS}capabilityVersion> ?version ;
              <{TRAILS}outcome> ?outcome ; <{PROV}startedAtTime> ?started ; <{PROV}endedAtTime> ?ended ;
              <{PROV}wasAssociatedWith> ?agent .
           OPTIONAL {{ ?a <{TRAILS}traceId> ?trace }} OPTIONAL {{ ?a <{TRAILS}client> ?client }} }} }}
         ORDER BY DESC(?started) DESC(?a) LIMIT {LATEST_ACTIVITIES}"
    );
    let rows = kg.store().select(query, Vec::new()).await.map_err(kg::store_failed)?;
    let activities: Vec<Value> = rows
        .iter()
        .filter_map(|row| {
            let mut activity = json!({
                "iri": store::bound_iri(row, "a")?.as_str(),
                "capability": store::bound_text(row, "capability")?,
                "version": store::bound_text(row, "version")?,
                "outcome": store::bound_text(row, "outcome")?,
                "started": store::bound_text(row, "started")?,
                "ended": store::bound_text(row, "ended")?,
                "agent": store::bound_iri(row, "agent")?.as_str(),
            });
            // The distributed trace the call was part of (W3C trace context), when it had one.
            if let Some(trace) = store::bound_text(row, "trace") {
                activity["trace_id"] = json!(trace);
            }
            // The OAuth client that acted for the agent.
            if let Some(client) = store::bound_text(row, "client") {
                activity["client"] = json!(client);
            }
            Some(activity)
        })
        .collect();
    Ok(json!({ "activities": activities }))
}
