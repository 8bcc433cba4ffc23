//! Task records (MCP's Tasks extension): what a call that outlives its request left for its
//! client to read — its status, a message, the questions it waits on, its result or error.
//! A store ([`TaskStore`]) keeps them durably: the ledger's SQLite file in one process
//! ([`LedgerTasks`], the `ledger` feature), Redis for replicas. A record is written before the
//! client learns the task's id, so a `tasks/get` right after resolves, and a completed result
//! survives a restart until it expires.
//!
//! A record names its owner (the caller that created it: identity, grant and scopes, as the
//! serving layer spells them) and is found only by that owner; the replica running it holds a
//! lease it renews, and a record whose lease lapsed while it was not terminal is failed with a
//! reason ([`TaskStore::reap`]): the work is never run again, and never silently lost.

#[cfg(feature = "ledger")]
mod ledger;
#[cfg(feature = "redis")]
mod shared;

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};

use trails_core::error::Error;

#[cfg(feature = "ledger")]
pub use ledger::LedgerTasks;
#[cfg(feature = "redis")]
pub use shared::SharedTasks;

/// What a store's work returns.
pub type TaskFuture<T> = Pin<Box<dyn Future<Output = Result<T, TaskError>> + Send>>;

/// A task's status (the Tasks extension's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    /// The status of wire name `name`.
    pub fn named(name: &str) -> Option<Status> {
        [Status::Working, Status::InputRequired, Status::Completed, Status::Failed, Status::Cancelled]
            .into_iter()
            .find(|status| status.as_str() == name)
    }

    /// Completed, failed or cancelled: nothing changes it any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

/// One task as kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Its id: random, the only handle a client has on it.
    pub id: String,
    /// Who may read, answer and cancel it.
    pub owner: String,
    /// The capability it runs.
    pub tool: String,
    pub status: Status,
    pub status_message: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_ms: i64,
    pub updated_ms: i64,
    /// Gone after this (created + its time to live).
    pub expires_ms: i64,
    /// The questions it waits on, by key (`{"method", "params"}` each).
    pub input_requests: Map<String, Value>,
    /// Answers the client gave that the running call has not taken yet.
    pub input_responses: Map<String, Value>,
    /// A completed task's result, a failed one's JSON-RPC error.
    pub outcome: Option<Value>,
    /// The replica running it, and until when its lease holds (milliseconds).
    pub runner: String,
    pub lease_ms: i64,
    /// The idempotency key it was created with, if any (a retry with it finds this task).
    pub key: Option<String>,
}

/// Why a record could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The owner has as many live tasks as it may.
    #[error("{live} tasks of this caller are still running (at most {cap}); retry once one ends")]
    Full { live: usize, cap: usize },
    #[error("the task ledger failed: {0}")]
    Ledger(String),
}

impl From<TaskError> for Error {
    fn from(error: TaskError) -> Self {
        match error {
            full @ TaskError::Full { .. } => Error::unavailable(full.to_string()),
            TaskError::Ledger(detail) => Error::internal(format!("the task ledger failed: {detail}")),
        }
    }
}

/// How many tasks one owner may have: running, and kept (ended ones included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub live: usize,
    pub kept: usize,
}

/// What a client did to a task ([`TaskStore::answer`], [`TaskStore::cancel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touched {
    /// No task of that id is the owner's (or it expired).
    NotFound,
    Done,
}

/// Where task records are kept. Every method is one atomic change of the store.
pub trait TaskStore: Send + Sync + 'static {
    /// Whether other replicas change these records too (a cancel, an answer): the replica running
    /// a task then looks for them.
    fn shared(&self) -> bool {
        false
    }

    /// Whether nothing was read or written yet (nothing to tend: a record of an earlier process
    /// is reaped once one is).
    fn idle(&self) -> bool {
        false
    }

    /// Keep `task`, durably, unless its owner already has `caps.live` running ones
    /// ([`TaskError::Full`]); past `caps.kept` records of the owner's, its oldest ended ones go.
    fn create(&self, task: Task, caps: Caps) -> TaskFuture<()>;

    /// How many of `owner`'s tasks are running (working or waiting for input, not expired).
    fn live(&self, owner: &str, now_ms: i64) -> TaskFuture<usize>;

    /// Task `id` as kept, whoever owns it; `None` once it expired.
    fn load(&self, id: &str, now_ms: i64) -> TaskFuture<Option<Task>>;

    /// Task `id`, if `owner`'s and not expired.
    fn get(&self, id: &str, owner: &str, now_ms: i64) -> TaskFuture<Option<Task>> {
        let (load, owner) = (self.load(id, now_ms), owner.to_owned());
        Box::pin(async move { Ok(load.await?.filter(|task| task.owner == owner)) })
    }

    /// The live task `owner` created for `tool` with idempotency key `key`, if any.
    fn keyed(&self, owner: &str, tool: &str, key: &str, now_ms: i64) -> TaskFuture<Option<Task>>;

    /// Change task `id` as `change` says, unless it is terminal already (a cancelled task's late
    /// result is not kept): `Ok(false)` then, or when there is no such task.
    /// (`change` may be applied more than once, to the record as it is each time, when another
    /// write comes between.)
    fn update(&self, id: &str, now_ms: i64, change: Box<dyn FnMut(&mut Task) + Send>) -> TaskFuture<bool>;

    /// `owner`'s answers to task `id`'s questions: those to questions it waits on are kept for
    /// the running call and the questions dropped; the rest are ignored (MCP: an answer to a key
    /// not outstanding is not an error). A task with no question left is working again.
    fn answer(&self, id: &str, owner: &str, responses: Map<String, Value>, now_ms: i64) -> TaskFuture<Touched>;

    /// The answers task `id`'s running call has not taken yet, taken.
    fn take_answers(&self, id: &str) -> TaskFuture<Map<String, Value>>;

    /// `owner` cancels task `id`: one still running is cancelled at once (the replica running it
    /// stops the call when it next looks); a terminal one stays as it is.
    fn cancel(&self, id: &str, owner: &str, now_ms: i64) -> TaskFuture<Touched>;

    /// `runner` still runs `ids`: their leases hold until `lease_ms`.
    fn renew(&self, runner: &str, ids: Vec<String>, lease_ms: i64) -> TaskFuture<()>;

    /// Fail every task whose runner's lease lapsed before `now_ms` while it was not terminal (the
    /// replica running it stopped), and forget expired ones: how many of each.
    fn reap(&self, now_ms: i64) -> TaskFuture<(usize, usize)>;
}

/// `responses` to what `task` asks: those to questions it waits on are kept for its call and the
/// questions dropped (the rest are ignored); with none left it works again.
#[cfg_attr(not(feature = "ledger"), allow(dead_code))]
pub(crate) fn answered(task: &mut Task, responses: &Map<String, Value>, now_ms: i64) {
    for (key, answer) in responses {
        if task.input_requests.remove(key).is_some() {
            task.input_responses.insert(key.clone(), answer.clone());
        }
    }
    if task.input_requests.is_empty() && task.status == Status::InputRequired {
        task.status = Status::Working;
    }
    task.updated_ms = now_ms;
}

/// `task`, cancelled by its client.
#[cfg_attr(not(feature = "ledger"), allow(dead_code))]
pub(crate) fn cancelled(task: &mut Task, now_ms: i64) {
    task.status = Status::Cancelled;
    task.status_message = Some("cancelled by the client".to_owned());
    task.input_requests.clear();
    task.updated_ms = now_ms;
}

/// `task`, failed because the server running it stopped.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) fn runner_gone(task: &mut Task, now_ms: i64) {
    task.status = Status::Failed;
    task.status_message = Some(RUNNER_GONE.to_owned());
    task.input_requests.clear();
    task.outcome = Some(runner_stopped());
    task.updated_ms = now_ms;
}

/// Why a task whose server stopped failed.
pub const RUNNER_GONE: &str = "the server running this task stopped before it ended";

/// The JSON-RPC error a task failed with when its runner stopped.
pub fn runner_stopped() -> Value {
    serde_json::json!({
        "code": -32603,
        "message": "the server running this task stopped before it ended; it did not run again",
    })
}
