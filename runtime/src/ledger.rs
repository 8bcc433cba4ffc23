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
        if let Err(error) = move_earlier(&earlier, &path) {
            tracing::error!(%error, from = %earlier.display(), "could not move the earlier idempotency keys; they no longer replay");
        }
    }
    path
}

/// Move the earlier file to `to`: its write-ahead log is folded into it first (a checkpoint that
/// leaves the log empty), so the one file that moves holds every committed key. When the
/// checkpoint cannot finish (another process has the file open), nothing moves.
fn move_earlier(from: &Path, to: &Path) -> Result<(), String> {
    let conn = Connection::open(from).map_err(|e| e.to_string())?;
    let (busy, _, _): (i64, i64, i64) = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .map_err(|e| e.to_string())?;
    if busy != 0 {
        return Err("the file is in use by another process".to_owned());
    }
    conn.close().map_err(|(_, e)| e.to_string())?;
    std::fs::rename(from, to).map_err(|e| e.to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_still_in_the_earlier_files_write_ahead_log_move_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("idempotency.sqlite3"), dir.path().join("ledger.sqlite3"));
        let earlier = open(&from).unwrap();
        earlier
            .execute_batch("CREATE TABLE idempotency_key (key TEXT); INSERT INTO idempotency_key VALUES ('k-1');")
            .unwrap();
        // As after `kill -9`: the connection never closes, so its commits are in the log only.
        std::mem::forget(earlier);
        assert!(std::fs::metadata(dir.path().join("idempotency.sqlite3-wal")).unwrap().len() > 0);
        move_earlier(&from, &to).unwrap();
        let moved = Connection::open(&to).unwrap();
        let key: String = moved.query_row("SELECT key FROM idempotency_key", [], |row| row.get(0)).unwrap();
        assert_eq!(key, "k-1");
        assert!(!from.exists());
    }
}
