//! Golden snapshots of the wire contract (`runtime/guide/07-wire-contract.md`): `schemas/mcp/<tool>.json`, one file per
//! tool, sorted keys, byte-exact, plus the manifest, the OpenAPI document and the SHACL shapes.
//! One piece of code renders, compares and rewrites them for the golden test, for
//! `cargo xtask snapshot` and for `trails.meta.schema.snapshot`, so the three never disagree.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use trails_core::registry::{Registry, ToolEntry};

/// The `info.title` of the golden OpenAPI document (a served one carries the app's name).
pub const GOLDEN_TITLE: &str = "trails-app";
/// The `info.version` of the golden OpenAPI document.
pub const GOLDEN_VERSION: &str = "0.0.0";

/// Where the prompts' goldens are, under `schemas/`.
const PROMPTS_DIR: &str = "mcp/prompts";

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

/// The golden text of one tool from the descriptor it is served with (the `trails_kg_*` tools list the app's node types): its
/// `tools/list` entry exactly as served, keys sorted.
pub fn render_tool(descriptor: &str) -> String {
    let value: Value = serde_json::from_str(descriptor).expect("the macro emits valid JSON");
    to_sorted_pretty(&value)
}

/// Each tool of `registry` with the descriptor and canonical descriptor the app serves it with
/// under the default `[kg]`: a store (and provenance) when it declares node types.
fn served(registry: &Registry) -> Vec<(&'static ToolEntry, String, String)> {
    let node_types: Vec<_> = registry.node_types().collect();
    let own = super::served::own_descriptors(registry.tools(), &node_types);
    let own_canonical = super::served::own_canonical(registry.tools(), trails_kg::DEFAULT_BASE, !node_types.is_empty());
    registry
        .tools()
        .map(|tool| {
            let descriptor = own.get(tool.name()).cloned().unwrap_or_else(|| tool.descriptor().into());
            let canonical = own_canonical.get(tool.name()).cloned().unwrap_or_else(|| tool.canonical().into());
            (tool, descriptor, canonical)
        })
        .collect()
}

/// Every golden file the registry implies, keyed by path relative to `schemas/`.
pub fn expected_files(registry: &Registry) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    let served = served(registry);
    for (tool, descriptor, _) in &served {
        files.insert(Path::new("mcp").join(format!("{}.json", tool.name())), render_tool(descriptor));
    }
    // Each prompt's `prompts/list` entry, as a tool's.
    for prompt in registry.prompts() {
        files.insert(Path::new(PROMPTS_DIR).join(format!("{}.json", prompt.name())), render_tool(prompt.descriptor()));
    }
    // The manifest keeps the canonical field order (serde_json's `preserve_order` is on).
    let manifest = trails_core::projection::manifest_of(served.iter().map(|(_, _, canonical)| canonical.as_str()));
    let manifest: Value = serde_json::from_str(&manifest).expect("canonical descriptors are valid JSON");
    let mut text = serde_json::to_string_pretty(&manifest).expect("a Value always serialises");
    text.push('\n');
    files.insert(PathBuf::from("manifest.jsonld"), text);
    // What `GET /openapi.json` serves a caller who may see every tool (keys sorted: the order of
    // an OpenAPI document's members carries no meaning).
    let info = trails_core::projection::Info { title: GOLDEN_TITLE, version: GOLDEN_VERSION, manifest: true };
    let tools = served.iter().map(|(tool, descriptor, canonical)| (*tool, descriptor.as_str(), canonical.as_str()));
    let openapi: Value =
        serde_json::from_str(&trails_core::projection::openapi_served(tools, info)).expect("valid JSON");
    files.insert(PathBuf::from("openapi.json"), to_sorted_pretty(&openapi));
    // Every SHACL shape, exactly as `GET /shapes.ttl` serves it.
    files.insert(PathBuf::from("shapes.ttl"), registry.shacl());
    files
}

/// How a golden file differs from what the registry implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// No such file yet.
    Added,
    /// The file's text differs.
    Changed,
    /// The golden of a tool that no longer exists.
    Removed,
    /// Not a regular file (a symbolic link, a FIFO, a directory), or a golden directory that is
    /// not a directory: never read nor written, and while one is refused nothing is rewritten.
    Refused,
}

impl Change {
    /// `added`, `changed`, `removed` or `refused`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Changed => "changed",
            Change::Removed => "removed",
            Change::Refused => "refused",
        }
    }
}

/// One file that differs from what the registry implies.
#[derive(Debug)]
pub struct Drift {
    /// Relative to the schemas directory (`.` for the directory itself).
    pub path: PathBuf,
    /// What kind of difference.
    pub change: Change,
    /// Unified diff from the file on disk to the expected text (for a removed golden, a note; for
    /// a refused one, why and what to do).
    pub diff: String,
}

/// Compare `schemas_dir` with the registry; in `Update` mode rewrite what differs and delete
/// goldens of tools that no longer exist — unless a path was refused, in which case nothing is
/// written. Returns what differed (before any rewrite), in path order (the order
/// `trails.meta.schema.snapshot` pages through). Each file is replaced whole (written beside it,
/// then renamed over it), so a reader never sees half a golden.
pub fn sync(registry: &Registry, schemas_dir: &Path, mode: Mode) -> io::Result<Vec<Drift>> {
    let expected = expected_files(registry);
    let mut drifts = Vec::new();
    let mcp_dir = schemas_dir.join("mcp");
    // Never read or write through a link, nor block on a FIFO.
    let not_a_directory = |path: &Path| fs::symlink_metadata(path).is_ok_and(|meta| !meta.is_dir());
    if not_a_directory(schemas_dir) {
        return Ok(vec![refused(schemas_dir, PathBuf::from("."), "is not a directory (a symbolic link is refused)")]);
    }
    let mcp_refused = not_a_directory(&mcp_dir);
    if mcp_refused {
        drifts.push(refused(schemas_dir, PathBuf::from("mcp"), "is not a directory (a symbolic link is refused)"));
    }
    let mut writes = Vec::new();
    for (relative, text) in &expected {
        let path = schemas_dir.join(relative);
        if mcp_refused && relative.starts_with("mcp") {
            continue;
        }
        let current = match read_golden(&path)? {
            OnDisk::Missing => None,
            OnDisk::Text(text) => Some(text),
            OnDisk::NotRegular => {
                drifts.push(refused(
                    schemas_dir,
                    relative.clone(),
                    "is not a regular file (a symbolic link is refused)",
                ));
                continue;
            }
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
        writes.push((path, text));
    }
    let mut stale = Vec::new();
    for folder in ["mcp", PROMPTS_DIR] {
        let dir = schemas_dir.join(folder);
        if !fs::symlink_metadata(&dir).is_ok_and(|meta| meta.is_dir()) {
            continue;
        }
        for entry in fs::read_dir(&dir)? {
            let path = entry?.path();
            let relative = Path::new(folder).join(path.file_name().expect("read_dir yields names"));
            if path.extension().is_some_and(|e| e == "json") && !expected.contains_key(&relative) {
                if fs::symlink_metadata(&path).is_ok_and(|meta| !meta.is_file()) {
                    drifts.push(refused(schemas_dir, relative, "is not a regular file (a symbolic link is refused)"));
                    continue;
                }
                drifts.push(Drift {
                    path: relative,
                    change: Change::Removed,
                    diff: "tool or prompt no longer exists; golden is stale\n".into(),
                });
                stale.push(path);
            }
        }
    }
    drifts.sort_by(|a, b| a.path.cmp(&b.path));
    if mode == Mode::Update && !drifts.iter().any(|drift| drift.change == Change::Refused) {
        for (path, text) in writes {
            replace(&path, text)?;
        }
        for path in stale {
            fs::remove_file(&path)?;
        }
    }
    Ok(drifts)
}

/// A golden as found on disk.
enum OnDisk {
    Missing,
    Text(String),
    /// A symbolic link, a FIFO, a directory…: never followed, read or blocked on.
    NotRegular,
}

/// Read the golden at `path` if it is a regular file. The open does not follow a link nor wait
/// on a FIFO, and the opened handle is checked again, so a path swapped after a first look is
/// refused rather than read.
fn read_golden(path: &Path) -> io::Result<OnDisk> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(OnDisk::Missing),
        // `O_NOFOLLOW` on a link (ELOOP), or a directory.
        Err(_) if fs::symlink_metadata(path).is_ok_and(|meta| !meta.is_file()) => return Ok(OnDisk::NotRegular),
        Err(error) => return Err(error),
    };
    if !file.metadata()?.is_file() {
        return Ok(OnDisk::NotRegular);
    }
    let mut text = String::new();
    io::Read::read_to_string(&mut &file, &mut text)?;
    Ok(OnDisk::Text(text))
}

fn refused(schemas_dir: &Path, path: PathBuf, why: &str) -> Drift {
    // Named as the developer knows it: `schemas/mcp/x.json`.
    let dir = schemas_dir.file_name().map_or_else(|| schemas_dir.display().to_string(), |n| n.to_string_lossy().into());
    let shown = if path == Path::new(".") { format!("{dir}/") } else { format!("{dir}/{}", path.display()) };
    let diff = format!(
        "{shown} {why}: nothing is read or written through it, and nothing is rewritten until it is \
         replaced by a regular file or directory (or removed)\n"
    );
    Drift { path, change: Change::Refused, diff }
}

/// Write `text` to `path` whole: into a file beside it, then renamed over it.
fn replace(path: &Path, text: &str) -> io::Result<()> {
    let dir = path.parent().expect("golden paths have a parent");
    fs::create_dir_all(dir)?;
    let name = path.file_name().expect("golden paths have a file name").to_string_lossy();
    let temporary = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    // `create_new`: never opens an existing file or a link someone put at that name.
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .and_then(|mut file| io::Write::write_all(&mut file, text.as_bytes()))
        .and_then(|()| fs::rename(&temporary, path));
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}
