//! `#[shape(extends = Parent)]`: the parent's properties and constraints are merged into the
//! child's schema and validator, its values sit at the top level of the child's JSON, and the
//! RDF side records the parent.

use serde_json::{json, Value};
use trails::declare::{NodeType, Shape};
use trails::error::FieldCode;
use trails::registry::Registry;
use trails::{node_type, shape};

/// What every request carries.
#[shape(iri = "https://example.org/ext#Base")]
pub struct Base {
    /// Who asks.
    #[predicate(min_length = 1, max_length = 40)]
    pub requester: String,
    /// Free labels.
    #[predicate(max_count = 2)]
    pub labels: Option<Vec<String>>,
}

/// A search request: a `Base` plus a query.
#[shape(iri = "https://example.org/ext#Search", extends = Base)]
pub struct Search {
    pub base: Base,
    #[predicate(min_length = 3)]
    pub query: String,
}

/// A paged search: a `Search` plus a page size (two levels of `extends`).
#[shape(iri = "https://example.org/ext#PagedSearch", extends = Search)]
pub struct PagedSearch {
    pub search: Search,
    #[predicate(min_value = 1, max_value = 50)]
    pub page_size: Option<u8>,
}

/// Only inherited fields: `required` comes from the parent alone.
#[shape(iri = "https://example.org/ext#Alias", extends = Base)]
pub struct Alias {
    pub base: Base,
}

/// An agent in the graph.
#[node_type(label = "Agent", iri = "https://example.org/ext#Agent")]
pub struct Agent {
    #[predicate(min_length = 1)]
    pub name: String,
}

/// A reviewer is an agent with a team.
#[node_type(label = "ExtReviewer", iri = "https://example.org/ext#Reviewer", extends = Agent)]
pub struct Reviewer {
    pub agent: Agent,
    pub team: String,
}

/// `unique` may name an inherited field (checked at compile time against the parent's names).
#[node_type(label = "Member", iri = "https://example.org/ext#Member", extends = Agent, unique = ["name", "club"])]
pub struct Member {
    pub agent: Agent,
    pub club: String,
}

fn schema<T: Shape>() -> Value {
    serde_json::from_str(T::SCHEMA).expect("the schema is JSON")
}

#[test]
fn the_child_schema_has_the_parents_properties_and_required_names_first() {
    let search = schema::<Search>();
    let properties: Vec<&String> = search["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["requester", "labels", "query"]);
    assert_eq!(search["required"], json!(["requester", "query"]));
    assert_eq!(search["properties"]["requester"]["maxLength"], 40);
    assert_eq!(search["additionalProperties"], false);
    assert!(search["properties"].get("base").is_none(), "the holder field is not a property");

    let paged = schema::<PagedSearch>();
    let properties: Vec<&String> = paged["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["requester", "labels", "query", "page_size"]);
    assert_eq!(paged["required"], json!(["requester", "query"]));

    let alias = schema::<Alias>();
    assert_eq!(alias["required"], json!(["requester"]));
    assert_eq!(alias["properties"].as_object().unwrap().len(), 2);
}

#[test]
fn the_child_validator_enforces_inherited_constraints() {
    let errors = PagedSearch::validate(&json!({"requester": "", "labels": ["a", "b", "c"], "page_size": 99}));
    let found: Vec<(&str, FieldCode)> = errors.iter().map(|e| (e.field.as_str(), e.code)).collect();
    assert_eq!(
        found,
        [
            ("requester", FieldCode::MinLength),
            ("labels", FieldCode::MaxCount),
            ("query", FieldCode::Required),
            ("page_size", FieldCode::MaxValue),
        ]
    );
    let unknown = Search::validate(&json!({"requester": "ann", "query": "graphs", "base": {}}));
    assert_eq!(unknown.len(), 1);
    assert_eq!((unknown[0].field.as_str(), unknown[0].code), ("base", FieldCode::UnknownField));
    assert!(Search::validate(&json!({"requester": "ann", "query": "graphs"})).is_empty());
}

#[test]
fn inherited_values_sit_at_the_top_level_of_the_json() {
    let value = json!({"requester": "ann", "query": "graphs", "page_size": 5});
    let paged: PagedSearch = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(paged.search.base.requester, "ann");
    assert_eq!(paged.search.query, "graphs");
    assert_eq!(serde_json::to_value(&paged).unwrap(), value);
}

#[test]
fn the_rdf_side_records_the_parent() {
    assert_eq!(Reviewer::INFO.extends(), Some("https://example.org/ext#Agent"));
    let fields: Vec<&str> = Reviewer::INFO.all_predicates().iter().map(|p| p.field).collect();
    assert_eq!(fields, ["name", "team"]);
    assert_eq!(Member::INFO.unique, ["name", "club"]);
    assert_eq!(<Member as trails::declare::ObjectShape>::FIELD_NAMES, ["name", "club"]);
    let registry = Registry::collect().unwrap();
    let search = registry.shapes().find(|s| s.name() == "Search").unwrap();
    assert_eq!(search.extends(), Some("https://example.org/ext#Base"));
    let base = registry.shapes().find(|s| s.name() == "Base").unwrap();
    assert_eq!(base.extends(), None);
}
