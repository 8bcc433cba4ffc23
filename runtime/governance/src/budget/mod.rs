//! Budgets: the declared `cost`, honoured. Every call of a capability that declares
//! `cost(tokens = …, usd = …)` is charged to its caller — after validation and policy, before
//! the handler — against the caller's limit for the current window (`[budget]`, or the token's
//! own `budget`). A call whose cost exceeds what is left is refused with `-32003` (HTTP 429 with
//! `Retry-After`) and the handler does not run. The charge is the declared cost, whatever the
//! handler then does.
//!
//! Spending is decided in memory — one entry per caller whose window is open (callers are
//! configured tokens or, with OAuth, the identity provider's subjects; ended windows are
//! forgotten once a thousand are held) — and each charge is committed to
//! the ledger ([`crate::ledger`]) before the handler runs, so a restart (or `kill -9`) does not
//! hand a caller a fresh budget. The ledger is read once, before the first charge; should it be
//! unusable, budgets still hold in memory and the failure is logged. Enforcing budgets is the
//! `ledger` feature's; built without it, an app with limits refuses to start.

#[cfg(feature = "ledger")]
mod spending;
#[cfg(feature = "ledger")]
pub use spending::{BudgetGuard, Budgets};

/// What a caller may spend per window; `None` on a side is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BudgetLimit {
    /// Model tokens.
    pub tokens: Option<u64>,
    /// US dollars.
    pub usd: Option<f64>,
}

impl BudgetLimit {
    /// Neither side limited.
    pub fn is_unlimited(&self) -> bool {
        self.tokens.is_none() && self.usd.is_none()
    }
}

/// Budgets, resolved: the window, the limit of every caller, and the tokens' own limits.
#[derive(Debug, Clone)]
pub struct BudgetSettings {
    /// How long a caller's spending accumulates before it restarts.
    pub window: std::time::Duration,
    /// The limit of a caller without its own (anonymous callers included).
    pub default: BudgetLimit,
    /// Token name → its own limit.
    pub by_caller: std::collections::HashMap<String, BudgetLimit>,
}
