//! The registry: every annotated item is collected without start-up work, looked up by name,
//! and dispatched through the validator.

use serde_json::json;
use trails::auth::Scope;
use trails::registry::{Registry, ToolKind};
use trails::{Ctx, Error};
use trails_tests::FIXTURE_TOOLS;

fn registry() -> Registry {
    trails_tests::link();
    Registry::collect().expect("fixture names are unique")
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    futures_executor::block_on(future)
}

#[test]
fn every_declared_tool_is_collected() {
    let names: Vec<&str> = registry().tools().map(|t| t.name()).collect();
    let example = [
        "people_create",
        "requirements_create",
        "requirements_delete",
        "requirements_link",
        "requirements_review",
        "requirements_search",
        "requirements_update",
        "trails_meta_requirements_stats",
    ];
    let mut expected: Vec<&str> = FIXTURE_TOOLS.iter().chain(&example).copied().collect();
    expected.sort_unstable();
    assert_eq!(names, expected, "every tool of the fixture and example apps, across modules and crates");
}

#[test]
fn entries_carry_kind_scope_and_source() {
    let registry = registry();
    let reset = registry.tool("trails_meta_fixture_reset").unwrap();
    assert_eq!(
        (reset.kind(), reset.scope(), reset.id()),
        (ToolKind::Meta, Scope::Builder, "trails.meta.fixture.reset")
    );
    assert_eq!(reset.source(), "trails_tests::reset");
    let search = registry.tool("research_search").unwrap();
    assert_eq!((search.kind(), search.scope()), (ToolKind::Runtime, Scope::Runtime));
}

#[test]
fn node_types_carry_their_rdf_mapping() {
    let registry = registry();
    let person = registry.node_types().find(|n| n.label == "Reviewer").expect("Reviewer is collected");
    assert_eq!(person.iri, "https://example.org/people#Reviewer");
    assert_eq!(person.unique, ["email"]);
    let email = person.predicates.iter().find(|p| p.field == "email").unwrap();
    assert_eq!(email.iri, "https://example.org/people#email");
    assert_eq!(email.datatype.iri(), "http://www.w3.org/2001/XMLSchema#string");
}

#[test]
fn a_valid_call_reaches_the_handler_and_returns_structured_content() {
    let output = block_on(registry().call("research_search", Ctx::local(), json!({"query": "graph", "order": "desc"})))
        .expect("valid call");
    let structured = output.structured.expect("Vec<Paper> has an outputSchema");
    assert_eq!(structured["items"][0]["title"], "Provenance of knowledge graphs");
    assert_eq!(output.text, structured.to_string(), "the text mirror is the same JSON");
}

#[test]
fn named_parameters_are_validated_and_passed_in_order() {
    let registry = registry();
    let ok = block_on(registry.call(
        "fixtures_assign",
        Ctx::local(),
        json!({"reviewer": "https://example.org/people/ada", "paper_title": "SHACL", "co_reviewers": []}),
    ))
    .unwrap();
    assert_eq!(ok.text, "https://example.org/people/ada reviews SHACL with 0 co-reviewer(s)");
    assert_eq!(ok.structured, None);

    let err =
        block_on(registry.call("fixtures_assign", Ctx::local(), json!({"reviewer": "not an iri", "paper_title": ""})))
            .unwrap_err();
    let Error::Validation { errors, total } = err else { panic!("expected validation error, got {err:?}") };
    assert_eq!(total, 2);
    assert_eq!(errors[0].field, "reviewer");
    assert_eq!(errors[1].field, "paper_title");
}

#[test]
fn missing_arguments_mean_an_empty_object() {
    let output = block_on(registry().call("trails_meta_ping", Ctx::local(), serde_json::Value::Null)).unwrap();
    assert_eq!(output.structured.unwrap()["reply"], "pong");
}

#[test]
fn unknown_tools_are_an_error_not_a_panic() {
    let err = block_on(registry().call("nope", Ctx::local(), json!({}))).unwrap_err();
    assert!(matches!(err, Error::UnknownTool(ref name) if name == "nope"));
}

#[test]
fn descriptors_are_valid_json_and_name_themselves() {
    for tool in registry().tools() {
        let descriptor: serde_json::Value = serde_json::from_str(tool.descriptor()).unwrap();
        assert_eq!(descriptor["name"], tool.name());
        assert_eq!(descriptor["inputSchema"]["type"], "object");
        assert_eq!(descriptor["inputSchema"]["additionalProperties"], false);
        let canonical: serde_json::Value = serde_json::from_str(tool.canonical()).unwrap();
        assert_eq!(canonical["id"], tool.id());
    }
}

/// The hot path answers `tools/list` with the descriptors as the macros wrote them; rmcp's path
/// parses each into its `Tool` (the first time it needs it) and serialises that. Every descriptor
/// must parse, and both must be the same bytes.
#[test]
fn every_descriptor_is_the_json_rmcp_writes_for_its_tool() {
    for tool in registry().tools() {
        let parsed: rmcp::model::Tool = serde_json::from_str(tool.descriptor())
            .unwrap_or_else(|e| panic!("{} is not an MCP tool: {e}", tool.name()));
        assert_eq!(parsed.name, tool.name());
        assert_eq!(parsed.description.as_deref(), Some(tool.description()));
        let written = serde_json::to_string(&parsed).unwrap();
        assert_eq!(written, tool.descriptor(), "{}: rmcp would write another descriptor", tool.name());
    }
}
