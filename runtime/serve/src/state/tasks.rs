//! The tasks this server keeps (MCP's Tasks extension): where their records are ([`TaskStore`]:
//! the ledger, or Redis under `[coordination]`), what `[tasks]` says, and the calls this replica runs as
//! tasks — each with what stops it and what wakes it when its client answers. Provided by the
//! tasks part (`part/builtin/tasks.rs`) when a capability declares `task`; the method table
//! (`method/tasks.rs`) runs calls as tasks and answers `tasks/*` with it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use trails_governance::tasks::TaskStore;

/// `[tasks]`, resolved.
#[derive(Debug, Clone)]
pub(crate) struct TaskSettings {
    /// A call that ends within this is answered as a plain result.
    pub(crate) inline: Duration,
    /// How long a task is kept from its creation.
    pub(crate) ttl: Duration,
    /// How often a client is asked to poll.
    pub(crate) poll_interval: Duration,
    /// Most live tasks per caller.
    pub(crate) max_live: usize,
    /// Most tasks kept per caller.
    pub(crate) max_kept: usize,
    /// How long a replica's hold on the tasks it runs lasts unrenewed: a replica that stopped
    /// leaves them failed this long after its last renewal.
    pub(crate) lease: Duration,
}

impl TaskSettings {
    /// How often a replica renews its leases, fails the tasks of replicas that stopped, and a
    /// waiting question looks for an answer given through another replica.
    pub(crate) fn tick(&self) -> Duration {
        (self.lease / 4).min(Duration::from_millis(500))
    }

    /// How many tasks one caller may have.
    pub(crate) fn caps(&self) -> trails_governance::tasks::Caps {
        trails_governance::tasks::Caps { live: self.max_live, kept: self.max_kept.max(self.max_live) }
    }

    /// The lease, in milliseconds.
    pub(crate) fn lease_ms(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }
}

/// The tasks of this server.
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) settings: TaskSettings,
    /// This replica's name in the records it runs (random per process).
    pub(crate) runner: String,
    running: Mutex<HashMap<String, Arc<Run>>>,
}

/// One call this replica runs as a task.
pub(crate) struct Run {
    /// Stops the call (`tasks/cancel`, the task's expiry, the server stopping).
    pub(crate) cancel: CancellationToken,
    /// Wakes the call's questions when answers may have come.
    pub(crate) answered: Notify,
    /// Answers taken from the record, not yet read by the question they answer.
    pub(crate) answers: Mutex<Map<String, Value>>,
    /// The latest progress the handler reported, not yet in the record.
    pub(crate) progress: Mutex<Option<String>>,
    /// When the record expires (milliseconds since the epoch).
    #[cfg_attr(not(feature = "ledger"), allow(dead_code))]
    pub(crate) expires_ms: i64,
}

// Built without the ledger, no part makes one (an app declaring `task` refuses to start).
#[cfg_attr(not(feature = "ledger"), allow(dead_code))]
impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>, settings: TaskSettings) -> Tasks {
        Tasks { store, settings, runner: uuid::Uuid::new_v4().to_string(), running: Mutex::default() }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Run>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Task `id` runs here from now on.
    pub(crate) fn start(&self, id: &str, cancel: CancellationToken, expires_ms: i64) -> Arc<Run> {
        let run = Arc::new(Run {
            cancel,
            answered: Notify::new(),
            answers: Mutex::default(),
            progress: Mutex::default(),
            expires_ms,
        });
        self.running().insert(id.to_owned(), run.clone());
        run
    }

    /// Task `id` ended here.
    pub(crate) fn ended(&self, id: &str) {
        self.running().remove(id);
    }

    /// Task `id`'s run here, if it runs here.
    pub(crate) fn run(&self, id: &str) -> Option<Arc<Run>> {
        self.running().get(id).cloned()
    }

    /// The tasks running here.
    pub(crate) fn runs(&self) -> Vec<(String, Arc<Run>)> {
        self.running().iter().map(|(id, run)| (id.clone(), run.clone())).collect()
    }
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}
