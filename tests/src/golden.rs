//! Golden snapshots of the wire contract (DESIGN §5): `schemas/mcp/<tool>.json`, one file per
//! tool, sorted keys, byte-exact, plus the manifest, the OpenAPI document and the SHACL shapes. The same code checks (tests) and rewrites
//! (`cargo xtask snapshot`, `TRAILS_UPDATE_MCP_SNAPSHOTS=1`), so the two can never disagree.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use trails::{Registry, ToolEntry};

pub const UPDATE_ENV: &str = "TRAILS_UPDATE_MCP_SNAPSHOTS";
pub const ACCEPT_HINT: &str =
    "run `cargo xtask snapshot` (or `TRAILS_UPDATE_MCP_SNAPSHOTS=1 cargo test`) to accept the new contract";

/// The `info` of the golden OpenAPI document (a served one carries the app's name and version).
pub const GOLDEN_TITLE: &str = "trails-app";
pub const GOLDEN_VERSION: &str = "0.0.0";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Check,
    Update,
}

impl Mode {
    /// `Update` when `TRAILS_UPDATE_MCP_SNAPSHOTS` is set to something other than `0`.
    pub fn from_env() -> Mode {
        match std::env::var(UPDATE_ENV) {
            Ok(v) if !v.is_empty() && v != "0" => Mode::Update,
            _ => Mode::Check,
        }
    }
}

/// Pretty JSON with every object's keys sorted, and a trailing newline: the golden format.
pub fn to_sorted_pretty(value: &Value) -> String {
    let mut value = value.clone();
    value.sort_all_objects();
    let mut text = serde_json::to_string_pretty(&value).expect("a Value always serialises");
    text.push('\n');
    text
}

/// The golden text of one tool: its `tools/list` entry exactly as served, keys sorted.
pub fn render_tool(tool: &ToolEntry) -> String {
    let value: Value = serde_json::from_str(tool.descriptor()).expect("the macro emits valid JSON");
    to_sorted_pretty(&value)
}

/// Every golden file the registry implies, keyed by path relative to `schemas/`.
pub fn expected_files(registry: &Registry) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    for tool in registry.tools() {
        files.insert(Path::new("mcp").join(format!("{}.json", tool.name())), render_tool(tool));
    }
    // The manifest keeps the canonical field order (serde_json's `preserve_order` is on).
    let manifest: Value = serde_json::from_str(&registry.manifest()).expect("canonical descriptors are valid JSON");
    let mut text = serde_json::to_string_pretty(&manifest).expect("a Value always serialises");
    text.push('\n');
    files.insert(PathBuf::from("manifest.jsonld"), text);
    // What `GET /openapi.json` serves a caller who may see every tool (keys sorted: the order of
    // an OpenAPI document's members carries no meaning).
    let openapi: Value = serde_json::from_str(&registry.openapi(GOLDEN_TITLE, GOLDEN_VERSION)).expect("valid JSON");
    files.insert(PathBuf::from("openapi.json"), to_sorted_pretty(&openapi));
    // Every SHACL shape, exactly as `GET /shapes.ttl` serves it.
    files.insert(PathBuf::from("shapes.ttl"), registry.shacl());
    files
}

/// One file that differs from what the registry implies.
#[derive(Debug)]
pub struct Drift {
    pub path: PathBuf,
    /// Unified diff from the file on disk to the expected text (`None` on disk = new file).
    pub diff: String,
}

/// Compare `schemas_dir` with the registry; in `Update` mode rewrite what differs and delete
/// goldens of tools that no longer exist. Returns what differed (before any rewrite).
pub fn sync(registry: &Registry, schemas_dir: &Path, mode: Mode) -> io::Result<Vec<Drift>> {
    let expected = expected_files(registry);
    let mut drifts = Vec::new();
    for (relative, text) in &expected {
        let path = schemas_dir.join(relative);
        let current = fs::read_to_string(&path).ok();
        if current.as_deref() == Some(text.as_str()) {
            continue;
        }
        let old = current.unwrap_or_default();
        let diff = similar::TextDiff::from_lines(&old, text)
            .unified_diff()
            .header(&format!("a/{}", relative.display()), &format!("b/{}", relative.display()))
            .to_string();
        drifts.push(Drift { path: relative.clone(), diff });
        if mode == Mode::Update {
            fs::create_dir_all(path.parent().expect("golden paths have a parent"))?;
            fs::write(&path, text)?;
        }
    }
    let mcp_dir = schemas_dir.join("mcp");
    if let Ok(entries) = fs::read_dir(&mcp_dir) {
        for entry in entries {
            let path = entry?.path();
            let relative = Path::new("mcp").join(path.file_name().expect("read_dir yields names"));
            if path.extension().is_some_and(|e| e == "json") && !expected.contains_key(&relative) {
                drifts.push(Drift { path: relative, diff: "tool no longer exists; golden is stale\n".into() });
                if mode == Mode::Update {
                    fs::remove_file(&path)?;
                }
            }
        }
    }
    Ok(drifts)
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
