//! Task records in the ledger's SQLite file: one table, each change a transaction, committed
//! (`synchronous = FULL`) before the call that made it answers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{params, Connection, OptionalExtension, Row, TransactionBehavior};
use serde_json::{Map, Value};

use super::{Caps, Status, Task, TaskError, TaskFuture, TaskStore, Touched};

/// The task records, in the ledger's SQLite file.
#[derive(Clone)]
pub struct LedgerTasks {
    path: PathBuf,
    conn: Arc<Mutex<Option<Connection>>>,
}

const COLUMNS: &str = "id, owner, tool, status, status_message, created_ms, updated_ms, expires_ms, \
                       input_requests, input_responses, outcome, runner, lease_ms, key";

impl LedgerTasks {
    /// The records in the ledger at `path`. The file is opened (its table created if it is not
    /// there) when a record is first written or read: a server that runs no task keeps no
    /// connection for it.
    pub fn open(path: &Path) -> Result<LedgerTasks, TaskError> {
        Ok(LedgerTasks { path: path.to_owned(), conn: Arc::new(Mutex::new(None)) })
    }

    fn connect(path: &Path) -> Result<Connection, TaskError> {
        // Another process opening the same file at the same moment (a stdio server started beside
        // an HTTP one) holds it briefly: SQLite answers busy without waiting while the journal
        // mode is being set.
        let mut tries = 0;
        loop {
            match LedgerTasks::try_connect(path) {
                Err(TaskError::Ledger(busy)) if busy.contains("locked") && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                opened => return opened,
            }
        }
    }

    fn try_connect(path: &Path) -> Result<Connection, TaskError> {
        let conn = crate::ledger::open(path)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS task (
                id TEXT PRIMARY KEY,
                owner TEXT NOT NULL,
                tool TEXT NOT NULL,
                status TEXT NOT NULL,
                status_message TEXT,
                created_ms INTEGER NOT NULL,
                updated_ms INTEGER NOT NULL,
                expires_ms INTEGER NOT NULL,
                input_requests TEXT NOT NULL,
                input_responses TEXT NOT NULL,
                outcome TEXT,
                runner TEXT NOT NULL,
                lease_ms INTEGER NOT NULL,
                key TEXT
            );
            CREATE INDEX IF NOT EXISTS task_owner ON task (owner, status);
            CREATE INDEX IF NOT EXISTS task_expiry ON task (expires_ms);",
        )?;
        Ok(conn)
    }

    /// Run `work` on the connection (opened now if it is not yet), off the async threads.
    fn with<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, TaskError> + Send + 'static,
    ) -> TaskFuture<T> {
        let (conn, path) = (self.conn.clone(), self.path.clone());
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let mut held = conn.lock().unwrap_or_else(PoisonError::into_inner);
                let conn = match &mut *held {
                    Some(conn) => conn,
                    None => held.insert(LedgerTasks::connect(&path)?),
                };
                work(conn)
            })
            .await
            .map_err(|error| TaskError::Ledger(format!("the ledger's worker stopped: {error}")))?
        })
    }
}

impl TaskStore for LedgerTasks {
    fn idle(&self) -> bool {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner).is_none()
    }

    /// Keep `task`, durably, unless its owner already has `cap` live ones ([`TaskError::Full`]).
    fn create(&self, task: Task, caps: Caps) -> TaskFuture<()> {
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let live = count_live(&tx, &task.owner, task.created_ms)?;
            if !task.status.is_terminal() && live >= caps.live {
                return Err(TaskError::Full { live, cap: caps.live });
            }
            tx.execute(
                &format!(
                    "INSERT INTO task ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
                ),
                params![
                    task.id,
                    task.owner,
                    task.tool,
                    task.status.as_str(),
                    task.status_message,
                    task.created_ms,
                    task.updated_ms,
                    task.expires_ms,
                    json(&task.input_requests),
                    json(&task.input_responses),
                    task.outcome.as_ref().map(Value::to_string),
                    task.runner,
                    task.lease_ms,
                    task.key,
                ],
            )?;
            // Past the owner's kept records, its oldest ended ones go (a caller cannot fill the
            // ledger with results).
            tx.execute(
                "DELETE FROM task WHERE id IN (SELECT id FROM task WHERE owner = ?1 \
                 AND status IN ('completed', 'failed', 'cancelled') ORDER BY updated_ms \
                 LIMIT MAX(0, (SELECT COUNT(*) FROM task WHERE owner = ?1) - ?2))",
                params![task.owner, i64::try_from(caps.kept).unwrap_or(i64::MAX)],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    /// Task `id` as kept, whoever owns it; `None` once it expired.
    fn live(&self, owner: &str, now_ms: i64) -> TaskFuture<usize> {
        let owner = owner.to_owned();
        self.with(move |conn| count_live(conn, &owner, now_ms))
    }

    fn load(&self, id: &str, now_ms: i64) -> TaskFuture<Option<Task>> {
        let id = id.to_owned();
        self.with(move |conn| {
            let task = conn
                .query_row(
                    &format!("SELECT {COLUMNS} FROM task WHERE id = ?1 AND expires_ms > ?2"),
                    params![id, now_ms],
                    read,
                )
                .optional()?;
            Ok(task)
        })
    }

    /// The live task `owner` created for `tool` with idempotency key `key`, if any.
    fn keyed(&self, owner: &str, tool: &str, key: &str, now_ms: i64) -> TaskFuture<Option<Task>> {
        let (owner, tool, key) = (owner.to_owned(), tool.to_owned(), key.to_owned());
        self.with(move |conn| {
            let task = conn
                .query_row(
                    &format!(
                        "SELECT {COLUMNS} FROM task WHERE owner = ?1 AND tool = ?2 AND key = ?3 AND expires_ms > ?4 \
                         ORDER BY created_ms DESC LIMIT 1"
                    ),
                    params![owner, tool, key, now_ms],
                    read,
                )
                .optional()?;
            Ok(task)
        })
    }

    /// Change task `id` as `change` says, unless it is terminal already (a cancelled task's late
    /// result is not kept): `Ok(false)` then, or when there is no such task.
    fn update(&self, id: &str, now_ms: i64, mut change: Box<dyn FnMut(&mut Task) + Send>) -> TaskFuture<bool> {
        let id = id.to_owned();
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some(mut task) =
                tx.query_row(&format!("SELECT {COLUMNS} FROM task WHERE id = ?1"), params![id], read).optional()?
            else {
                return Ok(false);
            };
            if task.status.is_terminal() {
                return Ok(false);
            }
            change(&mut task);
            task.updated_ms = now_ms;
            write(&tx, &task)?;
            tx.commit()?;
            Ok(true)
        })
    }

    /// `owner`'s answers to task `id`'s questions: those to questions it waits on are kept for
    /// the running call and the questions dropped; the rest are ignored (MCP: an answer to a
    /// key not outstanding is not an error). A task with no question left is working again.
    fn answer(&self, id: &str, owner: &str, responses: Map<String, Value>, now_ms: i64) -> TaskFuture<Touched> {
        let (id, owner) = (id.to_owned(), owner.to_owned());
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some(mut task) = find(&tx, &id, &owner, now_ms)? else { return Ok(Touched::NotFound) };
            if task.status.is_terminal() {
                return Ok(Touched::Done);
            }
            super::answered(&mut task, &responses, now_ms);
            write(&tx, &task)?;
            tx.commit()?;
            Ok(Touched::Done)
        })
    }

    /// The answers task `id`'s running call has not taken yet, taken.
    fn take_answers(&self, id: &str) -> TaskFuture<Map<String, Value>> {
        let id = id.to_owned();
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some(mut task) =
                tx.query_row(&format!("SELECT {COLUMNS} FROM task WHERE id = ?1"), params![id], read).optional()?
            else {
                return Ok(Map::new());
            };
            let taken = std::mem::take(&mut task.input_responses);
            if !taken.is_empty() {
                write(&tx, &task)?;
                tx.commit()?;
            }
            Ok(taken)
        })
    }

    /// `owner` cancels task `id`: a task still running is cancelled at once (the replica running
    /// it stops the call when it next looks); a terminal one stays as it is.
    fn cancel(&self, id: &str, owner: &str, now_ms: i64) -> TaskFuture<Touched> {
        let (id, owner) = (id.to_owned(), owner.to_owned());
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some(mut task) = find(&tx, &id, &owner, now_ms)? else { return Ok(Touched::NotFound) };
            if !task.status.is_terminal() {
                super::cancelled(&mut task, now_ms);
                write(&tx, &task)?;
                tx.commit()?;
            }
            Ok(Touched::Done)
        })
    }

    /// `runner` still runs `ids`: their leases hold until `lease_ms`.
    fn renew(&self, runner: &str, ids: Vec<String>, lease_ms: i64) -> TaskFuture<()> {
        let runner = runner.to_owned();
        self.with(move |conn| {
            let tx = conn.transaction()?;
            for id in ids {
                tx.execute(
                    "UPDATE task SET lease_ms = ?1 WHERE id = ?2 AND runner = ?3 AND status IN ('working', 'input_required')",
                    params![lease_ms, id, runner],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    /// See [`TaskStore::reap`].
    fn reap(&self, now_ms: i64) -> TaskFuture<(usize, usize)> {
        self.with(move |conn| {
            let error = super::runner_stopped().to_string();
            let failed = conn.execute(
                "UPDATE task SET status = 'failed', outcome = ?1, input_requests = '{}', input_responses = '{}', \
                 updated_ms = ?2, status_message = ?3 WHERE status IN ('working', 'input_required') AND lease_ms < ?2",
                params![error, now_ms, super::RUNNER_GONE],
            )?;
            let expired = conn.execute("DELETE FROM task WHERE expires_ms <= ?1", params![now_ms])?;
            Ok((failed, expired))
        })
    }
}

impl From<rusqlite::Error> for TaskError {
    fn from(error: rusqlite::Error) -> Self {
        TaskError::Ledger(error.to_string())
    }
}

fn count_live(conn: &Connection, owner: &str, now_ms: i64) -> Result<usize, TaskError> {
    let live: i64 = conn.query_row(
        "SELECT COUNT(*) FROM task WHERE owner = ?1 AND status IN ('working', 'input_required') AND expires_ms > ?2",
        params![owner, now_ms],
        |row| row.get(0),
    )?;
    Ok(usize::try_from(live).unwrap_or(usize::MAX))
}

fn json(map: &Map<String, Value>) -> String {
    Value::Object(map.clone()).to_string()
}

fn find(conn: &Connection, id: &str, owner: &str, now_ms: i64) -> Result<Option<Task>, TaskError> {
    let task = conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM task WHERE id = ?1 AND owner = ?2 AND expires_ms > ?3"),
            params![id, owner, now_ms],
            read,
        )
        .optional()?;
    Ok(task)
}

fn write(conn: &Connection, task: &Task) -> Result<(), TaskError> {
    conn.execute(
        "UPDATE task SET status = ?2, status_message = ?3, updated_ms = ?4, input_requests = ?5, \
         input_responses = ?6, outcome = ?7, lease_ms = ?8 WHERE id = ?1",
        params![
            task.id,
            task.status.as_str(),
            task.status_message,
            task.updated_ms,
            json(&task.input_requests),
            json(&task.input_responses),
            task.outcome.as_ref().map(Value::to_string),
            task.lease_ms,
        ],
    )?;
    Ok(())
}

fn read(row: &Row<'_>) -> rusqlite::Result<Task> {
    let map = |text: String| match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let status: String = row.get(3)?;
    Ok(Task {
        id: row.get(0)?,
        owner: row.get(1)?,
        tool: row.get(2)?,
        // A status this build does not know was written by a newer one: read as failed.
        status: Status::named(&status).unwrap_or(Status::Failed),
        status_message: row.get(4)?,
        created_ms: row.get(5)?,
        updated_ms: row.get(6)?,
        expires_ms: row.get(7)?,
        input_requests: map(row.get(8)?),
        input_responses: map(row.get(9)?),
        outcome: row.get::<_, Option<String>>(10)?.and_then(|text| serde_json::from_str(&text).ok()),
        runner: row.get(11)?,
        lease_ms: row.get(12)?,
        key: row.get(13)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: Caps = Caps { live: 10, kept: 100 };

    fn task(id: &str, owner: &str, now: i64) -> Task {
        Task {
            id: id.to_owned(),
            owner: owner.to_owned(),
            tool: "slow".to_owned(),
            status: Status::Working,
            status_message: None,
            created_ms: now,
            updated_ms: now,
            expires_ms: now + 60_000,
            input_requests: Map::new(),
            input_responses: Map::new(),
            outcome: None,
            runner: "a".to_owned(),
            lease_ms: now + 10_000,
            key: None,
        }
    }

    #[tokio::test]
    async fn a_record_is_its_owners_survives_a_reopen_and_expires() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite3");
        let tasks = LedgerTasks::open(&path).unwrap();
        tasks.create(task("t1", "alice", 1_000), CAPS).await.unwrap();
        assert!(tasks.get("t1", "bob", 1_000).await.unwrap().is_none(), "another caller sees nothing");
        let done = tasks
            .update(
                "t1",
                2_000,
                Box::new(|task| {
                    task.status = Status::Completed;
                    task.outcome = Some(serde_json::json!({ "content": [] }));
                }),
            )
            .await
            .unwrap();
        assert!(done);
        assert!(
            !tasks.update("t1", 3_000, Box::new(|task| task.status = Status::Failed)).await.unwrap(),
            "terminal stays"
        );
        drop(tasks);
        let reopened = LedgerTasks::open(&path).unwrap();
        let kept = reopened.get("t1", "alice", 3_000).await.unwrap().unwrap();
        assert_eq!((kept.status, kept.updated_ms), (Status::Completed, 2_000));
        assert_eq!(reopened.reap(61_001).await.unwrap(), (0, 1));
        assert!(reopened.load("t1", 0).await.unwrap().is_none(), "gone once expired");
    }

    #[tokio::test]
    async fn answers_go_to_the_questions_asked_and_a_lapsed_lease_fails_the_task() {
        let dir = tempfile::tempdir().unwrap();
        let tasks = LedgerTasks::open(&dir.path().join("l.sqlite3")).unwrap();
        let mut asking = task("t2", "alice", 0);
        asking.status = Status::InputRequired;
        asking.input_requests.insert("a".into(), serde_json::json!({ "method": "elicitation/create" }));
        asking.input_requests.insert("b".into(), serde_json::json!({ "method": "elicitation/create" }));
        tasks.create(asking, CAPS).await.unwrap();
        let mut answers = Map::new();
        answers.insert("a".into(), serde_json::json!({ "action": "accept" }));
        answers.insert("never-asked".into(), serde_json::json!({}));
        assert_eq!(tasks.answer("t2", "bob", answers.clone(), 1).await.unwrap(), Touched::NotFound);
        assert_eq!(tasks.answer("t2", "alice", answers, 1).await.unwrap(), Touched::Done);
        let now = tasks.get("t2", "alice", 1).await.unwrap().unwrap();
        assert_eq!(now.status, Status::InputRequired, "`b` is still asked");
        assert_eq!(now.input_requests.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(tasks.take_answers("t2").await.unwrap().keys().collect::<Vec<_>>(), ["a"]);
        assert!(tasks.take_answers("t2").await.unwrap().is_empty(), "taken once");
        assert_eq!(tasks.reap(10_001).await.unwrap(), (1, 0));
        let failed = tasks.get("t2", "alice", 10_001).await.unwrap().unwrap();
        assert_eq!(failed.status, Status::Failed);
        assert_eq!(failed.outcome.unwrap()["code"], -32603);
    }

    #[tokio::test]
    async fn a_caller_has_at_most_cap_live_tasks() {
        let dir = tempfile::tempdir().unwrap();
        let tasks = LedgerTasks::open(&dir.path().join("l.sqlite3")).unwrap();
        let caps = Caps { live: 2, kept: 3 };
        tasks.create(task("x1", "alice", 0), caps).await.unwrap();
        tasks.create(task("x2", "alice", 0), caps).await.unwrap();
        assert!(matches!(tasks.create(task("x3", "alice", 0), caps).await, Err(TaskError::Full { live: 2, cap: 2 })));
        tasks.create(task("y1", "bob", 0), caps).await.unwrap();
        assert_eq!(tasks.cancel("x1", "alice", 1).await.unwrap(), Touched::Done);
        tasks.create(task("x3", "alice", 1), caps).await.unwrap();
        // Four of Alice's now, three kept: the oldest ended one goes, the running stay.
        assert_eq!(tasks.cancel("x2", "alice", 2).await.unwrap(), Touched::Done);
        let mut ended = task("x4", "alice", 3);
        ended.status = Status::Completed;
        tasks.create(ended, caps).await.unwrap();
        assert!(tasks.load("x1", 3).await.unwrap().is_none(), "the oldest ended record went");
        assert!(tasks.load("x3", 3).await.unwrap().is_some() && tasks.load("x4", 3).await.unwrap().is_some());
    }
}
