//! Developer chores.
//!
//! - `cargo xtask snapshot`: rewrite `schemas/` from the fixture and example apps' declarations.
//!   Uses the same `trails_tests::golden::sync` the golden test checks with, so a snapshot followed
//!   by the test always passes, and a second snapshot changes nothing.
//! - `cargo xtask test`: the README's test command. Provisions what the tests need that cargo does
//!   not (Oxigraph server from PyPI, into the cached virtualenv the interop test also uses), then
//!   runs every test, including those plain `cargo test` reports as ignored for lack of it.

use std::path::Path;
use std::process::{Command, ExitCode};

use trails::Registry;
use trails_tests::golden::{self, Mode};

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    match task.as_deref() {
        Some("snapshot") => snapshot(),
        Some("test") => test(),
        _ => {
            eprintln!("usage: cargo xtask snapshot    rewrite schemas/ (tool goldens and the manifest)");
            eprintln!("       cargo xtask test        provision test servers, then run every test");
            ExitCode::from(2)
        }
    }
}

/// The pinned Oxigraph server (its CLI ships in this PyPI wheel).
const OXIGRAPH: &str = "oxigraph==0.5.13";

fn run(command: &mut Command) -> bool {
    command.status().map(|status| status.success()).unwrap_or(false)
}

fn test() -> ExitCode {
    let venv = trails_tests::servers::venv();
    if !venv.join("bin/python").exists() && !run(Command::new("python3").args(["-m", "venv"]).arg(&venv)) {
        eprintln!("error: `python3 -m venv {}` failed", venv.display());
        return ExitCode::FAILURE;
    }
    let oxigraph = venv.join("bin/oxigraph");
    if !oxigraph.exists() {
        println!("xtask: installing {OXIGRAPH} into {}", venv.display());
        let pip = venv.join("bin/pip");
        if !run(Command::new(pip).args(["install", "--quiet", "--disable-pip-version-check", OXIGRAPH])) {
            eprintln!("error: could not install {OXIGRAPH} into {}", venv.display());
            return ExitCode::FAILURE;
        }
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["test", "--workspace", "--locked", "--", "--include-ignored"])
        .env("TRAILS_PYENV", &venv)
        .env("TRAILS_OXIGRAPH", &oxigraph)
        .status();
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: cannot run cargo test: {error}");
            ExitCode::FAILURE
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
