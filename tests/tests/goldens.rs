//! Golden = wire: `schemas/` holds every tool descriptor exactly as `tools/list` serves it.

use std::path::Path;

use trails::golden::{self, Mode};
use trails::Registry;

#[test]
fn goldens_match_the_declarations() {
    trails_tests::link();
    let registry = Registry::collect().expect("no duplicate tool names");
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let mode = Mode::from_env();
    let drifts = golden::sync(&registry, &schemas, mode).expect("schemas/ is readable and writable");
    if mode == Mode::Check {
        assert!(drifts.is_empty(), "{}", golden::report(&drifts));
    }
}
