//! `trails.meta.schema.snapshot` (scope `dev`): compare the app's `schemas/` directory with the
//! goldens its declarations imply — the files `cargo xtask snapshot` writes, rendered by the same
//! code ([`crate::snapshot`]) — and, with `write: true`, rewrite them.

use std::path::Path;

use crate::snapshot::{self, Mode};
use trails_core::registry::Registry;
use trails_core::{Error, Result};
use trails_core::{FieldCode, FieldError};
use trails_macros::{meta_capability, shape};

/// Where the goldens live, relative to the app's working directory (where `cargo xtask snapshot`
/// writes them in a Trails workspace).
const SCHEMAS_DIR: &str = "schemas";
/// Characters of one file's diff a report shows; `diff_chars` gives the whole length.
const DIFF_PREVIEW_CHARS: usize = 2000;
/// Files one report lists when `limit` is unset.
const DEFAULT_LIMIT: usize = 20;

/// One golden file that differs from the declarations.
#[shape(iri = "https://w3id.org/trails/meta#SnapshotFile")]
pub(crate) struct SnapshotFile {
    /// Relative to `schemas/`.
    pub path: String,
    /// `added` (no such file yet), `changed`, `removed` (the golden of a tool that no longer
    /// exists), or `refused` (not a regular file or directory: `diff` says why; nothing is written
    /// while one is refused).
    pub change: String,
    /// Unified diff from the file on disk to what the declarations imply, cut after 2000 characters.
    pub diff: String,
    /// Characters of the whole diff.
    pub diff_chars: u64,
}

/// What `trails.meta.schema.snapshot` found (and, with `write`, did).
#[shape(iri = "https://w3id.org/trails/meta#SchemaSnapshot")]
pub(crate) struct SchemaSnapshot {
    /// The directory compared, relative to the app's working directory.
    pub directory: String,
    /// Tools whose goldens the declarations imply.
    pub tools: u64,
    /// Nothing differed.
    pub up_to_date: bool,
    /// The differing files were rewritten (and stale goldens deleted); never while a path is `refused`.
    pub written: bool,
    /// Files that differed.
    pub total: u64,
    /// This page of them, in path order (after a `write: true` that a `refused` path stopped:
    /// the refused paths).
    pub files: Vec<SnapshotFile>,
    /// More files follow: call again with this `cursor` (and the same `write: false`).
    pub cursor: Option<String>,
}

/// Compare `schemas/` with the goldens this app's declarations imply (the files
/// `cargo xtask snapshot` writes); with `write: true`, rewrite what differs and delete the goldens
/// of tools that no longer exist.
#[meta_capability(
    namespace = "schema",
    op = "snapshot",
    scope = "dev",
    version = "1.0.0",
    side_effects(overwrites, deletes),
    idempotent
)]
async fn schema_snapshot(
    /// Rewrite the differing files (default `false`: report only).
    write: Option<bool>,
    /// Files per report (default 20).
    #[predicate(min_value = 1, max_value = 200)]
    limit: Option<i64>,
    /// Where the previous report ended: its `cursor` (report only).
    #[predicate(min_length = 1, max_length = 512)]
    cursor: Option<String>,
) -> Result<SchemaSnapshot> {
    let write = write.unwrap_or(false);
    if write && cursor.is_some() {
        return Err(FieldError::refuse(
            "cursor",
            FieldCode::Type,
            "cursor pages a report; `write: true` rewrites every differing file at once, so it takes no cursor",
            &serde_json::json!(cursor),
            serde_json::Value::Null,
        ));
    }
    let directory = Path::new(SCHEMAS_DIR);
    let registry = Registry::collect().map_err(Error::internal)?;
    let mode = if write { Mode::Update } else { Mode::Check };
    // A path that is not a regular file (or directory) comes back `refused`, and then nothing
    // is written: never through a link out of the app's directory.
    let drifts = snapshot::sync(&registry, directory, mode)
        .map_err(|error| Error::internal(format!("cannot sync {}: {error}", directory.display())))?;
    let limit = limit.map_or(DEFAULT_LIMIT, |n| usize::try_from(n).unwrap_or(1));
    let is_refused = |drift: &&snapshot::Drift| drift.change == snapshot::Change::Refused;
    let refused = drifts.iter().any(|drift| is_refused(&drift));
    let after = |drift: &&snapshot::Drift| cursor.as_deref().is_none_or(|c| drift.path.to_string_lossy().as_ref() > c);
    // A write that a refused path stopped lists what stopped it, whatever sorts before.
    let remaining: Vec<&snapshot::Drift> = if write && refused {
        drifts.iter().filter(is_refused).collect()
    } else {
        drifts.iter().filter(after).collect()
    };
    let files: Vec<SnapshotFile> = remaining
        .iter()
        .take(limit)
        .map(|drift| SnapshotFile {
            path: drift.path.to_string_lossy().into_owned(),
            change: drift.change.as_str().to_owned(),
            diff: drift.diff.chars().take(DIFF_PREVIEW_CHARS).collect(),
            diff_chars: drift.diff.chars().count() as u64,
        })
        .collect();
    let cursor = (!write && remaining.len() > files.len()).then(|| files.last().map(|f| f.path.clone())).flatten();
    Ok(SchemaSnapshot {
        directory: SCHEMAS_DIR.to_owned(),
        tools: registry.tools().count() as u64,
        up_to_date: drifts.is_empty(),
        written: write && !drifts.is_empty() && !refused,
        total: drifts.len() as u64,
        files,
        cursor,
    })
}
