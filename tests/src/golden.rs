//! The golden test's and `cargo xtask snapshot`'s view of `trails::snapshot`: the environment
//! switch that turns a check into a rewrite, and a readable report of what drifted.

use std::fmt::Write as _;

pub use trails::snapshot::{expected_files, render_tool, sync, to_sorted_pretty, Change, Drift, Mode};

pub const UPDATE_ENV: &str = "TRAILS_UPDATE_MCP_SNAPSHOTS";
pub const ACCEPT_HINT: &str =
    "run `cargo xtask snapshot` (or `TRAILS_UPDATE_MCP_SNAPSHOTS=1 cargo test`) to accept the new contract";

/// `Update` when `TRAILS_UPDATE_MCP_SNAPSHOTS` is set to something other than `0`.
pub fn mode_from_env() -> Mode {
    match std::env::var(UPDATE_ENV) {
        Ok(v) if !v.is_empty() && v != "0" => Mode::Update,
        _ => Mode::Check,
    }
}

/// A readable report of drifts for a failing test.
pub fn report(drifts: &[Drift]) -> String {
    let mut out = format!("{} golden file(s) differ from the declarations:\n", drifts.len());
    for drift in drifts {
        let _ = writeln!(out, "\n--- {} ---\n{}", drift.path.display(), drift.diff);
    }
    let _ = writeln!(out, "\nIf the change is intended, {ACCEPT_HINT}.");
    out
}
