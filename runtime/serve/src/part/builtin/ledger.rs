//! `[budget]` and `[idempotency]`: budgets and idempotency keys (the `ledger` feature).

use std::sync::Arc;
use std::time::Duration;

use crate::config::{within, BudgetConfig, ConfigError, IdempotencyConfig, TokenBudget};
use crate::part::{Assembly, BuildError, Part, Slot};
use crate::resources::Spending;
use trails_governance::budget::{BudgetLimit, BudgetSettings};

/// A budget window when `[budget] window_secs` is unset.
const DEFAULT_BUDGET_WINDOW: Duration = Duration::from_secs(3600);

/// Budgets and idempotency keys, kept in the ledger (SQLite beside the store), or in Redis
/// under `[coordination]`.
pub(super) struct Ledger {
    budget: BudgetSettings,
    retention: trails_governance::idempotency::Retention,
}

impl Ledger {
    /// `[budget]`, the tokens' own budgets (by token name) and `[idempotency]`.
    pub(super) fn resolve(
        budget: BudgetConfig,
        token_budgets: Vec<(String, TokenBudget)>,
        idempotency: IdempotencyConfig,
    ) -> Result<Ledger, ConfigError> {
        let usd = |key: &'static str, value: Option<f64>| match value {
            Some(v) if !(v.is_finite() && v >= 0.0) => {
                Err(ConfigError::Value { key, value: v.to_string(), expected: "a number of dollars, 0 or more" })
            }
            v => Ok(v),
        };
        let window_secs = within(
            "[budget] window_secs",
            budget.window_secs,
            DEFAULT_BUDGET_WINDOW.as_secs(),
            1..=2_678_400,
            "1 to 2678400",
        )?;
        let mut settings = BudgetSettings {
            window: Duration::from_secs(window_secs),
            default: BudgetLimit { tokens: budget.tokens, usd: usd("[budget] usd", budget.usd)? },
            by_caller: std::collections::HashMap::new(),
        };
        for (name, own) in token_budgets {
            let limit = BudgetLimit { tokens: own.tokens, usd: usd("[[http.tokens]] budget.usd", own.usd)? };
            settings.by_caller.insert(name, limit);
        }
        let defaults = trails_governance::idempotency::Retention::default();
        let bytes = |key: &'static str, value: Option<u64>, default: u64| {
            within(key, value, default, 1024..=1 << 40, "1024 to 1099511627776")
        };
        let retention = trails_governance::idempotency::Retention {
            keep: Duration::from_secs(within(
                "[idempotency] retention_secs",
                idempotency.retention_secs,
                defaults.keep.as_secs(),
                1..=2_678_400,
                "1 to 2678400",
            )?),
            max_keys: within(
                "[idempotency] max_keys",
                idempotency.max_keys,
                defaults.max_keys,
                1..=1_000_000,
                "1 to 1000000",
            )?,
            caller_bytes: bytes(
                "[idempotency] max_bytes_per_caller",
                idempotency.max_bytes_per_caller,
                defaults.caller_bytes,
            )?,
            anonymous_bytes: bytes(
                "[idempotency] max_bytes_anonymous",
                idempotency.max_bytes_anonymous,
                defaults.anonymous_bytes,
            )?,
            total_bytes: bytes("[idempotency] max_bytes", idempotency.max_bytes, defaults.total_bytes)?,
        };
        Ok(Ledger { budget: settings, retention })
    }
}

impl Part for Ledger {
    fn name(&self) -> &'static str {
        "ledger"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let store_file = assembly.kg.as_ref().and_then(|kg| kg.store().sqlite_path());
        let dir = &assembly.provided::<super::store::DataDir>().expect("the store part assembles before the ledger").0;
        let ledger_path = trails_governance::ledger::prepare(dir, store_file);
        let budgets = trails_governance::budget::Budgets::new(self.budget, ledger_path.clone());
        let keys = trails_governance::idempotency::Ledger::new(ledger_path, self.retention);
        #[cfg(feature = "redis")]
        let (budgets, keys) = match assembly.provided::<crate::state::Replicas>() {
            Some(replicas) => (budgets.shared(replicas.governance()), keys.shared(replicas.governance())),
            None => (budgets, keys),
        };
        let budgets = Arc::new(budgets);
        assembly.guard(Slot::Authorize, trails_governance::idempotency::KeyCheck);
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
