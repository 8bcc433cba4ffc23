//! The server's own durable bookkeeping — idempotency keys and budget spending — in one SQLite
//! file: the embedded store's `kg.sqlite3` when there is one, else `ledger.sqlite3` in `[kg] path`.
//! Each user opens its own connection (WAL lets them share the file) and creates its own table.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

/// Where the ledger lives: `store_file` (the embedded store's SQLite file) when there is one,
/// else `ledger.sqlite3` in `dir` (`[kg] path`). Once, at start: a separate ledger an earlier
/// version kept as `idempotency.sqlite3` is moved to its new name first, so the keys it holds
/// still replay.
pub fn prepare(dir: &Path, store_file: Option<&Path>) -> PathBuf {
    if let Some(path) = store_file {
        return path.to_owned();
    }
    let path = dir.join("ledger.sqlite3");
    let earlier = dir.join("idempotency.sqlite3");
    if !path.exists() && earlier.is_file() {
        if let Err(error) = move_earlier(&earlier, &path) {
            tracing::error!(%error, from = %earlier.display(), "could not move the earlier idempotency keys; they no longer replay");
        }
    }
    path
}

/// Move the earlier file to `to`. Its write-ahead log is folded into it first, and the file
/// taken out of WAL mode — which SQLite allows only to the one connection that has it open — so
/// the one file that moves holds every committed key, and a file another process still uses is
/// left where it is. (`open` turns WAL on again.)
fn move_earlier(from: &Path, to: &Path) -> Result<(), String> {
    let sibling = |path: &Path, suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    // A log already under the new name was moved there by an earlier build that stopped before
    // it moved the file itself: it belongs to the earlier file, unless that has its own. SQLite
    // would replay any log it finds beside the moved file, so none is left there.
    let (stray_log, earlier_log) = (sibling(to, "-wal"), sibling(from, "-wal"));
    if stray_log.exists() {
        if earlier_log.exists() {
            std::fs::remove_file(&stray_log).map_err(|e| e.to_string())?;
        } else {
            std::fs::rename(&stray_log, &earlier_log).map_err(|e| e.to_string())?;
        }
    }
    let _ = std::fs::remove_file(sibling(to, "-shm"));
    let conn = Connection::open(from).map_err(|e| e.to_string())?;
    let mode: String =
        conn.query_row("PRAGMA journal_mode = DELETE", [], |row| row.get(0)).map_err(|e| e.to_string())?;
    if !mode.eq_ignore_ascii_case("delete") {
        return Err("the file is in use by another process".to_owned());
    }
    std::fs::rename(from, to).map_err(|e| e.to_string())?;
    conn.close().map_err(|(_, e)| e.to_string())
}

/// Open the ledger for writes that must survive `kill -9`: every commit is synced
/// (`synchronous = FULL`), and a writer waits up to 5 s for another.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(conn)
}

/// How the ledger's tables name the anonymous caller.
pub const ANONYMOUS_COLUMN: &str = "anonymous";

/// How a caller is kept in the ledger's tables: token callers and anonymous ones never collide.
pub fn caller_column(caller: Option<&str>) -> String {
    match caller {
        Some(name) => format!("caller:{name}"),
        None => ANONYMOUS_COLUMN.to_owned(),
    }
}

/// The caller a [`caller_column`] value names (`None` for one this version did not write).
pub fn caller_from_column(column: &str) -> Option<Option<String>> {
    match column {
        ANONYMOUS_COLUMN => Some(None),
        other => other.strip_prefix("caller:").map(|name| Some(name.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An earlier file as `kill -9` leaves it: its keys committed to the log only.
    fn earlier_after_kill(dir: &Path) -> PathBuf {
        let live = dir.join("live");
        std::fs::create_dir(&live).unwrap();
        let conn = open(&live.join("idempotency.sqlite3")).unwrap();
        conn.execute_batch("CREATE TABLE idempotency_key (key TEXT); INSERT INTO idempotency_key VALUES ('k-1');")
            .unwrap();
        // Copied while the connection is open: the log is not folded in.
        for suffix in ["", "-wal"] {
            let name = format!("idempotency.sqlite3{suffix}");
            std::fs::copy(live.join(&name), dir.join(&name)).unwrap();
        }
        drop(conn);
        assert!(std::fs::metadata(dir.join("idempotency.sqlite3-wal")).unwrap().len() > 0);
        dir.join("idempotency.sqlite3")
    }

    fn key_in(path: &Path) -> String {
        let conn = Connection::open(path).unwrap();
        conn.query_row("SELECT key FROM idempotency_key", [], |row| row.get(0)).unwrap()
    }

    #[test]
    fn keys_still_in_the_earlier_files_write_ahead_log_move_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let from = earlier_after_kill(dir.path());
        let to = dir.path().join("ledger.sqlite3");
        // A stray log under the new name (from some other database) is not replayed into it.
        std::fs::copy(dir.path().join("idempotency.sqlite3-wal"), dir.path().join("ledger.sqlite3-wal")).unwrap();
        move_earlier(&from, &to).unwrap();
        assert!(!from.exists());
        assert!(!dir.path().join("ledger.sqlite3-wal").exists());
        assert_eq!(key_in(&to), "k-1");
    }

    #[test]
    fn a_log_an_interrupted_move_left_under_the_new_name_is_folded_in() {
        let dir = tempfile::tempdir().unwrap();
        let from = earlier_after_kill(dir.path());
        std::fs::rename(dir.path().join("idempotency.sqlite3-wal"), dir.path().join("ledger.sqlite3-wal")).unwrap();
        let to = dir.path().join("ledger.sqlite3");
        move_earlier(&from, &to).unwrap();
        assert_eq!(key_in(&to), "k-1");
    }

    #[test]
    fn a_file_another_connection_holds_open_is_not_moved() {
        let dir = tempfile::tempdir().unwrap();
        let from = earlier_after_kill(dir.path());
        let other = open(&from).unwrap();
        let to = dir.path().join("ledger.sqlite3");
        assert!(move_earlier(&from, &to).is_err());
        assert!(from.exists() && !to.exists());
        drop(other);
        move_earlier(&from, &to).unwrap();
        assert_eq!(key_in(&to), "k-1");
    }
}
