//! Evidence cards of stored instances (`trails.kg.list`, the umbrella resources): the role
//! fields of a page read in one query, each made a card by `trails_core::pipeline::card`, the
//! one rule every list follows. Without roles an item's label is its key, as it always was.

use std::collections::HashMap;

use oxrdf::NamedNode;
use serde_json::{Map, Value};

use trails_core::declare::{DisplayRole, NodeTypeInfo, PredicateInfo};
use trails_core::pipeline::card::{card, EXCERPT_CHARS, TITLE_CHARS, URL_CHARS};
use trails_kg::{mapping, store, store_failed, Kg, Triples};

/// The fields of `node` with a role, inherited ones included.
fn roled(node: &NodeTypeInfo) -> Vec<(&'static PredicateInfo, DisplayRole)> {
    node.all_predicates().into_iter().filter_map(|p| Some((p, p.role?))).collect()
}

/// Characters of a text value the store sends for a card: more than any card shows (so a cut is
/// still seen as one), far less than a long body.
const READ_CHARS: usize = 600;
const _: () = assert!(READ_CHARS > URL_CHARS && READ_CHARS > EXCERPT_CHARS && READ_CHARS > TITLE_CHARS);

/// Subjects asked for in one query: with at most seven role fields, rows stay well under the
/// row limits of SPARQL servers (Virtuoso's default is 10,000).
const SUBJECTS_PER_QUERY: usize = 500;

/// One card per subject of a page, in order: `{label?, excerpt?, timestamp?, status?,
/// identifier?, url?}` from what the instance holds. The role fields of a whole page are read in
/// one query (per 500 items), each text cut by the store: never the rest of an instance, never
/// one read per item.
pub(crate) async fn cards(
    kg: &Kg,
    node: &'static NodeTypeInfo,
    subjects: &[NamedNode],
) -> trails_core::Result<Vec<Map<String, Value>>> {
    let roled = roled(node);
    if roled.is_empty() {
        return Ok(vec![Map::new(); subjects.len()]);
    }
    // The page may list instances of the types that extend `node`, each in its own graph.
    let (graphs, graph) = match mapping::graphs_with_subtypes(kg.base(), node).as_slice() {
        [one] => (String::new(), one.to_string()),
        graphs => (
            format!("VALUES ?g {{ {} }} ", graphs.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ")),
            "?g".to_owned(),
        ),
    };
    let predicates: String = roled.iter().map(|(p, _)| format!(" <{}>", p.iri)).collect();
    let mut triples: Vec<Triples> = vec![Vec::new(); subjects.len()];
    let index: HashMap<&str, usize> = subjects.iter().enumerate().map(|(at, s)| (s.as_str(), at)).collect();
    for group in subjects.chunks(SUBJECTS_PER_QUERY) {
        // The IRIs are the store's own (found by the page's query) and the declarations'; both
        // are checked IRIs, written as IRI terms.
        let values: String = group.iter().map(|s| format!(" {s}")).collect();
        let query = format!(
            "SELECT ?s ?p ?o WHERE {{ {graphs}GRAPH {graph} {{ VALUES ?s {{{values} }} VALUES ?p {{{predicates} }} ?s ?p ?v }} \
             BIND(IF(isLiteral(?v) && STRLEN(STR(?v)) > {READ_CHARS}, SUBSTR(STR(?v), 1, {READ_CHARS}), ?v) AS ?o) }}"
        );
        for row in kg.store().select(query, Vec::new()).await.map_err(store_failed)? {
            let (Some(subject), Some(predicate), Some(object)) =
                (store::bound_iri(&row, "s"), store::bound_iri(&row, "p"), store::bound(&row, "o"))
            else {
                continue;
            };
            if let Some(&at) = index.get(subject.as_str()) {
                triples[at].push((predicate, object.clone()));
            }
        }
    }
    let roles: Vec<(DisplayRole, &str)> = roled.iter().map(|(p, role)| (*role, p.field)).collect();
    Ok(triples.iter().map(|triples| card(&roles, &mapping::instance(node, triples))).collect())
}
