//! Budgets and idempotency keys (the `ledger` feature).

use std::sync::Arc;

use crate::part::{Assembly, BuildError, Part, Slot};
use crate::resources::Spending;

/// Budgets and idempotency keys, kept in the ledger (SQLite beside the store), or in Redis
/// under `[coordination]`.
pub(super) struct Ledger;

impl Part for Ledger {
    fn name(&self) -> &'static str {
        "ledger"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let settings = assembly.settings;
        let store_file = assembly.kg.as_ref().and_then(|kg| kg.store().sqlite_path());
        let ledger_path = trails_governance::ledger::prepare(&settings.kg_path, store_file);
        let budgets = trails_governance::budget::Budgets::new(settings.budget.clone(), ledger_path.clone());
        let retention = trails_governance::idempotency::Retention {
            keep: settings.idempotency_retention,
            max_keys: settings.idempotency_max_keys,
        };
        let keys = trails_governance::idempotency::Ledger::new(ledger_path, retention);
        #[cfg(feature = "redis")]
        let (budgets, keys) = match assembly.provided::<crate::state::Replicas>() {
            Some(replicas) => (budgets.shared(replicas.governance()), keys.shared(replicas.governance())),
            None => (budgets, keys),
        };
        let budgets = Arc::new(budgets);
        assembly.guard(Slot::Settle, trails_governance::idempotency::IdempotencyGuard(Arc::new(keys)));
        assembly.guard(Slot::Settle, trails_governance::budget::BudgetGuard(budgets.clone()));
        // What `trails://stats` reports of each caller's spending.
        assembly.provide(budgets as Arc<dyn Spending>);
        Ok(())
    }
}

impl Spending for trails_governance::budget::Budgets {
    fn stats(&self, builder: bool) -> serde_json::Value {
        trails_governance::budget::Budgets::stats(self, builder)
    }
}
