//! Golden = wire: `schemas/` holds every tool descriptor exactly as `tools/list` serves it.

use std::path::Path;

use trails::registry::Registry;
use trails_tests::golden::{self, Mode};

#[test]
fn goldens_match_the_declarations() {
    trails_tests::link();
    let registry = Registry::collect().expect("no duplicate tool names");
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let mode = golden::mode_from_env();
    let drifts = golden::sync(&registry, &schemas, mode).expect("schemas/ is readable and writable");
    // A refused path stops an update too (nothing is written): fail in either mode.
    let refused: Vec<_> = drifts.iter().filter(|drift| drift.change == golden::Change::Refused).collect();
    assert!(refused.is_empty(), "{refused:?}");
    if mode == Mode::Check {
        assert!(drifts.is_empty(), "{}", golden::report(&drifts));
    }
}

/// What the Claude and OpenAI tool APIs (behind most hosts) demand of every name a host passes
/// on: `^[a-zA-Z0-9_-]{1,64}$`. A listing with one name outside it is refused whole.
#[test]
fn every_tool_name_is_one_every_host_accepts_and_keeps_its_id_in_meta() {
    trails_tests::link();
    let registry = Registry::collect().expect("no duplicate tool names");
    let mut dotted = 0;
    for tool in registry.tools() {
        let name = tool.name();
        assert!(
            (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "`{name}` is a name hosts refuse"
        );
        let descriptor: serde_json::Value = serde_json::from_str(tool.descriptor()).unwrap();
        assert_eq!(descriptor["_meta"]["trails"]["id"], tool.id(), "{name}");
        assert_eq!(name, tool.id().replace('.', "_"));
        dotted += usize::from(tool.id().contains('.'));
    }
    assert!(dotted > 10, "the fixture and example ids are dotted, so the projection is exercised");
}

#[test]
fn fixture_goldens_cover_every_mapped_keyword_and_meta_key() {
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/mcp");
    let fixture_text: String = trails_tests::FIXTURE_TOOLS
        .iter()
        .map(|name| std::fs::read_to_string(schemas.join(format!("{name}.json"))).expect("golden exists"))
        .collect();
    let needles = [
        "\"minLength\"",
        "\"maxLength\"",
        "\"pattern\"",
        "\"enum\"",
        "\"minimum\"",
        "\"maximum\"",
        "\"minItems\"",
        "\"maxItems\"",
        "\"required\"",
        "\"additionalProperties\": false",
        "\"format\": \"iri\"",
        "\"format\": \"date-time\"",
        "\"trails:node_type\"",
        "\"outputSchema\"",
        // every _meta.trails key
        "\"kind\": \"meta\"",
        "\"kind\": \"runtime\"",
        "\"scope\"",
        "\"namespace\": \"fixture\"",
        "\"op\"",
        "\"idempotent\"",
        "\"manifest_uri\"",
        "\"version\"",
        "\"deprecates\": \"fixtures.assign_v1\"",
        "\"version_status\": \"deprecated\"",
        "\"version_status\": \"experimental\"",
    ];
    for needle in needles {
        assert!(fixture_text.contains(needle), "no fixture golden contains {needle}");
    }
}
