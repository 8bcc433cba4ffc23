//! `[coordination]` (the `redis` feature).

use crate::part::{Assembly, BuildError, Part};

/// `[coordination]`: budgets, idempotency keys, the change feed and the pruning lease, shared
/// by the replicas in Redis.
pub(super) struct Coordination;

impl Part for Coordination {
    fn name(&self) -> &'static str {
        "coordination"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let Some(coordination) = &assembly.settings.coordination else { return Ok(()) };
        let replicas =
            crate::state::Replicas::connect(coordination, assembly.app_name()).map_err(BuildError::Coordination)?;
        assembly.provide(replicas);
        Ok(())
    }
}
