//! The server's own durable bookkeeping — idempotency keys and budget spending — in one SQLite
//! file: the embedded store's `kg.sqlite3` when there is one, else `ledger.sqlite3` in `[kg] path`.
//! Each user opens its own connection (WAL lets them share the file) and creates its own table.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use crate::config::Settings;

/// Where the ledger lives for an app whose store is `store` (`None`: remote or no store). Once,
/// at start: a separate ledger an earlier version kept as `idempotency.sqlite3` is moved to its
/// new name first, so the keys it holds still replay.
pub(crate) fn prepare(settings: &Settings, store: Option<&crate::kg::Kg>) -> PathBuf {
    if let Some(path) = store.and_then(|kg| kg.store().sqlite_path()) {
        return path.to_owned();
    }
    let path = settings.kg_path.join("ledger.sqlite3");
    let earlier = settings.kg_path.join("idempotency.sqlite3");
    if !path.exists() && earlier.is_file() {
        // The write-ahead log holds committed keys too: it moves with the file.
        for suffix in ["-wal", "-shm", ""] {
            let from = settings.kg_path.join(format!("idempotency.sqlite3{suffix}"));
            let to = settings.kg_path.join(format!("ledger.sqlite3{suffix}"));
            if from.exists() {
                if let Err(error) = std::fs::rename(&from, &to) {
                    tracing::error!(%error, from = %from.display(), "could not move the earlier idempotency keys");
                }
            }
        }
    }
    path
}

/// Open the ledger for writes that must survive `kill -9`: every commit is synced
/// (`synchronous = FULL`), and a writer waits up to 5 s for another.
pub(crate) fn open(path: &Path) -> rusqlite::Result<Connection> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(conn)
}

/// How a caller is kept in the ledger's tables: token callers and anonymous ones never collide.
pub(crate) fn caller_column(caller: Option<&str>) -> String {
    match caller {
        Some(name) => format!("caller:{name}"),
        None => "anonymous".to_owned(),
    }
}

/// The caller a [`caller_column`] value names (`None` for one this version did not write).
pub(crate) fn caller_from_column(column: &str) -> Option<Option<String>> {
    match column {
        "anonymous" => Some(None),
        other => other.strip_prefix("caller:").map(|name| Some(name.to_owned())),
    }
}
