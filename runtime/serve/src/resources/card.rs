//! Evidence cards: what a list of instances shows of each one (`trails.kg.list`, the umbrella
//! resources). A card is built from the fields the node type gives a display role and from
//! nothing else (PDPP: never from guessing at field names): the title as its label, a bounded
//! excerpt of the summary (else the body), the timestamp, status, identifier and url. Without
//! roles an item's label is its key, as it always was.

use std::collections::HashMap;

use oxrdf::NamedNode;
use serde_json::{json, Map, Value};

use trails_core::declare::{DisplayRole, NodeTypeInfo, PredicateInfo};
use trails_kg::{mapping, store, store_failed, Kg, Triples};

/// Characters of a title a card shows: a label, not the text.
pub(crate) const TITLE_CHARS: usize = 160;
/// Characters of the summary (or body) a card shows; the rest is one `trails_kg_read_field` away.
pub(crate) const EXCERPT_CHARS: usize = 280;
/// Characters of a status or an identifier.
const SHORT_CHARS: usize = 128;
/// A longer url is left out: a cut one leads nowhere (and a card must fit the smallest window).
const URL_CHARS: usize = 512;

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
    Ok(triples.iter().map(|triples| card(&roled, &mapping::instance(node, triples))).collect())
}

/// The card of one instance's values (its fields by name).
fn card(roled: &[(&'static PredicateInfo, DisplayRole)], fields: &Value) -> Map<String, Value> {
    let value = |role: DisplayRole| {
        let (predicate, _) = roled.iter().find(|(_, r)| *r == role)?;
        fields.get(predicate.field).filter(|v| !v.is_null())
    };
    let text = |role: DisplayRole| value(role).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
    let mut card = Map::new();
    if let Some(title) = text(DisplayRole::Title) {
        card.insert("label".into(), json!(cut(title, TITLE_CHARS)));
    }
    if let Some(excerpt) = text(DisplayRole::Summary).or_else(|| text(DisplayRole::Body)) {
        card.insert("excerpt".into(), json!(cut(excerpt, EXCERPT_CHARS)));
    }
    if let Some(timestamp) = value(DisplayRole::Timestamp) {
        card.insert("timestamp".into(), timestamp.clone());
    }
    if let Some(status) = text(DisplayRole::Status) {
        card.insert("status".into(), json!(cut(status, SHORT_CHARS)));
    }
    match value(DisplayRole::Identifier) {
        Some(Value::String(id)) => {
            card.insert("identifier".into(), json!(cut(id, SHORT_CHARS)));
        }
        Some(number @ Value::Number(_)) => {
            card.insert("identifier".into(), number.clone());
        }
        _ => {}
    }
    if let Some(url) = text(DisplayRole::Url).filter(|url| url.chars().count() <= URL_CHARS) {
        card.insert("url".into(), json!(url));
    }
    card
}

/// `text` up to `limit` characters, an ellipsis marking a cut.
fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trails_core::declare::Datatype;

    const fn field(field: &'static str, datatype: Datatype, role: DisplayRole) -> PredicateInfo {
        PredicateInfo { field, iri: field, datatype, required: false, many: false, target: None, role: Some(role) }
    }

    static TITLE: PredicateInfo = field("name", Datatype::String, DisplayRole::Title);
    static SUMMARY: PredicateInfo = field("summary", Datatype::String, DisplayRole::Summary);
    static BODY: PredicateInfo = field("text", Datatype::String, DisplayRole::Body);
    static NUMBER: PredicateInfo = field("number", Datatype::Integer, DisplayRole::Identifier);
    static URL: PredicateInfo = field("link", Datatype::String, DisplayRole::Url);
    static WHEN: PredicateInfo = field("at", Datatype::DateTime, DisplayRole::Timestamp);
    static STATE: PredicateInfo = field("state", Datatype::Json, DisplayRole::Status);

    fn roles() -> Vec<(&'static PredicateInfo, DisplayRole)> {
        [&TITLE, &SUMMARY, &BODY, &NUMBER, &URL, &WHEN, &STATE].into_iter().map(|p| (p, p.role.unwrap())).collect()
    }

    #[test]
    fn a_card_shows_the_roles_bounded() {
        let long = "é".repeat(EXCERPT_CHARS + 50);
        let fields = json!({"name": "Brakes", "text": long, "number": 12, "link": "x".repeat(3000),
                            "at": "2026-11-26T12:00:00Z", "state": "done"});
        let card = card(&roles(), &fields);
        assert_eq!((&card["timestamp"], &card["status"]), (&json!("2026-11-26T12:00:00Z"), &json!("done")));
        assert_eq!(card["label"], "Brakes");
        let excerpt = card["excerpt"].as_str().unwrap();
        assert_eq!(excerpt.chars().count(), EXCERPT_CHARS + 1, "cut at the bound, with an ellipsis");
        assert!(excerpt.ends_with('…'));
        assert_eq!(card["identifier"], 12);
        assert!(card.get("url").is_none(), "a url too long to show whole is left out");
    }

    #[test]
    fn the_summary_is_the_excerpt_before_the_body_and_blank_text_is_no_label() {
        let card = card(&roles(), &json!({"name": "  ", "summary": "short", "text": "long body"}));
        assert_eq!(card["excerpt"], "short");
        assert!(card.get("label").is_none(), "a blank title leaves the key as the label");
    }
}
