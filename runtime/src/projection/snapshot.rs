//! Golden snapshots of the wire contract (DESIGN §5): `schemas/mcp/<tool>.json`, one file per
//! tool, sorted keys, byte-exact, plus the manifest, the OpenAPI document and the SHACL shapes.
//! One piece of code renders, compares and rewrites them for the golden test, for
//! `cargo xtask snapshot` and for `trails.meta.schema.snapshot`, so the three never disagree.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{Registry, ToolEntry};

/// The `info.title` of the golden OpenAPI document (a served one carries the app's name).
pub const GOLDEN_TITLE: &str = "trails-app";
/// The `info.version` of the golden OpenAPI document.
pub const GOLDEN_VERSION: &str = "0.0.0";

/// What [`sync`] does with a file that differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Report only.
    Check,
    /// Report, then rewrite it (and delete the goldens of tools that no longer exist).
    Update,
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

/// How a golden file differs from what the registry implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// No such file yet.
    Added,
    /// The file's text differs.
    Changed,
    /// The golden of a tool that no longer exists.
    Removed,
}

impl Change {
    /// `added`, `changed` or `removed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Changed => "changed",
            Change::Removed => "removed",
        }
    }
}

/// One file that differs from what the registry implies.
#[derive(Debug)]
pub struct Drift {
    /// Relative to the schemas directory.
    pub path: PathBuf,
    /// What kind of difference.
    pub change: Change,
    /// Unified diff from the file on disk to the expected text (for a removed golden, a note).
    pub diff: String,
}

/// Compare `schemas_dir` with the registry; in `Update` mode rewrite what differs and delete
/// goldens of tools that no longer exist. Returns what differed (before any rewrite), in path
/// order (the order `trails.meta.schema.snapshot` pages through).
pub fn sync(registry: &Registry, schemas_dir: &Path, mode: Mode) -> io::Result<Vec<Drift>> {
    let expected = expected_files(registry);
    let mut drifts = Vec::new();
    for (relative, text) in &expected {
        let path = schemas_dir.join(relative);
        // Never read from a FIFO (it would block) nor write through a link.
        if fs::symlink_metadata(&path).is_ok_and(|meta| !meta.is_file()) {
            let message = format!("{} is not a regular file", path.display());
            return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        }
        let current = match fs::read_to_string(&path) {
            Ok(current) => Some(current),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        };
        if current.as_deref() == Some(text.as_str()) {
            continue;
        }
        let change = if current.is_some() { Change::Changed } else { Change::Added };
        let diff = similar::TextDiff::from_lines(current.as_deref().unwrap_or_default(), text)
            .unified_diff()
            .header(&format!("a/{}", relative.display()), &format!("b/{}", relative.display()))
            .to_string();
        drifts.push(Drift { path: relative.clone(), change, diff });
        if mode == Mode::Update {
            fs::create_dir_all(path.parent().expect("golden paths have a parent"))?;
            fs::write(&path, text)?;
        }
    }
    let mcp_dir = schemas_dir.join("mcp");
    if let Ok(entries) = fs::read_dir(&mcp_dir) {
        let mut stale = Vec::new();
        for entry in entries {
            let path = entry?.path();
            let relative = Path::new("mcp").join(path.file_name().expect("read_dir yields names"));
            if path.extension().is_some_and(|e| e == "json") && !expected.contains_key(&relative) {
                stale.push((relative, path));
            }
        }
        for (relative, path) in stale {
            drifts.push(Drift {
                path: relative,
                change: Change::Removed,
                diff: "tool no longer exists; golden is stale\n".into(),
            });
            if mode == Mode::Update {
                fs::remove_file(&path)?;
            }
        }
    }
    drifts.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(drifts)
}
