//! Budgets and idempotency keys shared by several replicas, in Redis (the `redis` feature,
//! `[coordination]`): a budget of N is N across them, and a retry that the load balancer sends to
//! another replica replays. Without it, each process keeps its own in its ledger.

use trails_core::error::Error;

/// The replicas' shared state, and what to do when it cannot be reached.
#[derive(Debug, Clone)]
pub struct Coordination {
    pub coordinator: trails_coord::Coordinator,
    /// Redis unreachable: let calls through unmetered and unkeyed (`true`), or refuse them with a
    /// retryable `unavailable` error (`false`, the default: a budget or key that cannot be
    /// checked does not hold).
    pub fail_open: bool,
}

impl Coordination {
    /// What a call gets when Redis failed: `Ok` to go on without it (fail open, and only when
    /// Redis is away rather than refusing), else the error to answer with.
    pub(crate) fn failed(&self, what: &str, error: &trails_coord::CoordError) -> Result<(), Error> {
        if self.fail_open && error.is_unavailable() {
            tracing::warn!(%error, "{what} cannot be checked across replicas; going on without (`[coordination] fail_open`)");
            return Ok(());
        }
        tracing::error!(%error, "{what} cannot be checked across replicas");
        Err(Error::unavailable(format!(
            "{what} cannot be checked right now (the replicas' coordination store is unavailable); retry shortly"
        )))
    }
}
