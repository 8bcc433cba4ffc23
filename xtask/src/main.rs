//! `cargo xtask snapshot`: rewrite `schemas/` from the fixture and example apps' declarations.
//! Uses the same `trails_tests::golden::sync` the golden test checks with, so a snapshot followed by
//! the test always passes, and a second snapshot changes nothing.

use std::path::Path;
use std::process::ExitCode;

use trails::Registry;
use trails_tests::golden::{self, Mode};

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    match task.as_deref() {
        Some("snapshot") => snapshot(),
        _ => {
            eprintln!("usage: cargo xtask snapshot    rewrite schemas/ (tool goldens and the manifest)");
            ExitCode::from(2)
        }
    }
}

fn snapshot() -> ExitCode {
    // Keep the apps' linker-collected tables in this binary.
    trails_tests::link();
    let registry = match Registry::collect() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    match golden::sync(&registry, &schemas, Mode::Update) {
        Ok(drifts) if drifts.is_empty() => {
            println!("schemas/ is up to date ({} tools)", registry.tools().count());
            ExitCode::SUCCESS
        }
        Ok(drifts) => {
            for drift in &drifts {
                println!("updated schemas/{}", drift.path.display());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: cannot write {}: {error}", schemas.display());
            ExitCode::FAILURE
        }
    }
}
