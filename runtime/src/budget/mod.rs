//! Budgets: ADR-0005's `cost`, honoured. Every call of a capability that declares
//! `cost(tokens = …, usd = …)` is charged to its caller — after validation and policy, before
//! the handler — against the caller's limit for the current window (`[budget]`, or the token's
//! own `budget`). A call whose cost exceeds what is left is refused with `-32003` (HTTP 429 with
//! `Retry-After`) and the handler does not run. The charge is the declared cost, whatever the
//! handler then does. Spending lives in memory: one entry per caller name, and names come only
//! from configured tokens, so it cannot grow with what clients send; a restart forgets it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use serde_json::{json, Value};

use crate::config::{BudgetLimit, BudgetSettings};
use crate::error::Error;
use crate::registry::Cost;

/// What one caller spent in its current window.
#[derive(Debug, Clone, Copy)]
struct Spent {
    since: Instant,
    tokens: u64,
    usd: f64,
}

impl Spent {
    fn starting(now: Instant) -> Spent {
        Spent { since: now, tokens: 0, usd: 0.0 }
    }
}

/// Dollars are summed as floats: a charge that lands within this of the limit still fits.
const USD_SLACK: f64 = 1e-9;

/// Every caller's spending, and what was refused.
#[derive(Debug)]
pub(crate) struct Budgets {
    settings: BudgetSettings,
    /// Keyed by caller name (`None`: anonymous callers, who share one budget).
    spent: Mutex<HashMap<Option<String>, Spent>>,
    charged: AtomicU64,
    refused: AtomicU64,
}

impl Budgets {
    pub(crate) fn new(settings: BudgetSettings) -> Budgets {
        Budgets { settings, spent: Mutex::new(HashMap::new()), charged: AtomicU64::new(0), refused: AtomicU64::new(0) }
    }

    fn limit(&self, caller: Option<&str>) -> BudgetLimit {
        caller.and_then(|name| self.settings.by_caller.get(name)).copied().unwrap_or(self.settings.default)
    }

    /// Charge `cost` of capability `id` to `caller`, or refuse it (`-32003`) when it exceeds what
    /// the caller has left in this window.
    pub(crate) fn charge(&self, caller: Option<&str>, id: &str, cost: Cost) -> Result<(), Error> {
        // The hot path: most capabilities declare no cost, and most apps set no budget.
        if cost.tokens == 0 && cost.usd <= 0.0 {
            return Ok(());
        }
        let limit = self.limit(caller);
        if limit.is_unlimited() {
            return Ok(());
        }
        let now = Instant::now();
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = spent.entry(caller.map(str::to_owned)).or_insert_with(|| Spent::starting(now));
        if now.duration_since(entry.since) >= self.settings.window {
            *entry = Spent::starting(now);
        }
        let tokens_over = limit.tokens.is_some_and(|max| entry.tokens.saturating_add(cost.tokens) > max);
        let usd_over = limit.usd.is_some_and(|max| entry.usd + cost.usd > max + USD_SLACK);
        if tokens_over || usd_over {
            self.refused.fetch_add(1, Ordering::Relaxed);
            let renews_in = self.settings.window.saturating_sub(now.duration_since(entry.since));
            // A cost over the whole limit never fits: no window will help.
            let never =
                limit.tokens.is_some_and(|max| cost.tokens > max) || limit.usd.is_some_and(|max| cost.usd > max);
            let retry_after_secs = (!never).then(|| renews_in.as_secs().max(1));
            let left = |max: Option<String>| max.unwrap_or_else(|| "unlimited".to_owned());
            let reason = format!(
                "{id} costs {} tokens and ${}; {} has {} tokens and ${} left in this {}s window, renewed in {}s",
                cost.tokens,
                cost.usd,
                caller.unwrap_or("the anonymous caller"),
                left(limit.tokens.map(|max| max.saturating_sub(entry.tokens).to_string())),
                left(limit.usd.map(|max| (max - entry.usd).max(0.0).to_string())),
                self.settings.window.as_secs(),
                renews_in.as_secs().max(1),
            );
            return Err(Error::BudgetExceeded { reason, retry_after_secs });
        }
        entry.tokens = entry.tokens.saturating_add(cost.tokens);
        entry.usd += cost.usd;
        self.charged.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// `trails://stats`' `budgets`: the window, calls charged and refused, and (`per_caller`)
    /// each caller's spending in its current window.
    pub(crate) fn stats(&self, per_caller: bool) -> Value {
        let now = Instant::now();
        let spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        let mut callers: Vec<Value> = spent
            .iter()
            .filter(|_| per_caller)
            .filter(|(_, spent)| now.duration_since(spent.since) < self.settings.window)
            .map(|(caller, spent)| {
                let limit = self.limit(caller.as_deref());
                json!({
                    "caller": caller,
                    "tokens_spent": spent.tokens,
                    "usd_spent": spent.usd,
                    "tokens_limit": limit.tokens,
                    "usd_limit": limit.usd,
                    "renews_in_secs": self.settings.window.saturating_sub(now.duration_since(spent.since)).as_secs(),
                })
            })
            .collect();
        callers.sort_by(|a, b| a["caller"].as_str().cmp(&b["caller"].as_str()));
        json!({
            "window_secs": self.settings.window.as_secs(),
            "tokens_limit": self.settings.default.tokens,
            "usd_limit": self.settings.default.usd,
            "charged_calls": self.charged.load(Ordering::Relaxed),
            "refused_calls": self.refused.load(Ordering::Relaxed),
            "callers": callers,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn budgets(window: Duration, default: BudgetLimit, own: &[(&str, BudgetLimit)]) -> Budgets {
        let by_caller = own.iter().map(|(name, limit)| ((*name).to_owned(), *limit)).collect();
        Budgets::new(BudgetSettings { window, default, by_caller })
    }

    const SEARCH: Cost = Cost { tokens: 40, usd: 0.25 };

    #[test]
    fn a_call_is_refused_once_its_cost_exceeds_what_is_left_and_only_its_caller_is_affected() {
        let limits = budgets(
            Duration::from_secs(3600),
            BudgetLimit { tokens: Some(100), usd: None },
            &[("rich", BudgetLimit { tokens: None, usd: Some(0.5) })],
        );
        assert!(limits.charge(Some("agent"), "search", SEARCH).is_ok());
        assert!(limits.charge(Some("agent"), "search", SEARCH).is_ok());
        let Err(Error::BudgetExceeded { reason, retry_after_secs }) = limits.charge(Some("agent"), "search", SEARCH)
        else {
            panic!("the third call of 40 tokens exceeds 100")
        };
        assert!(reason.contains("20 tokens") && reason.contains("agent"), "{reason}");
        assert!(retry_after_secs.is_some_and(|s| (3500..=3600).contains(&s)));
        // A free call still runs; another caller has its own budget.
        assert!(limits.charge(Some("agent"), "ping", Cost::default()).is_ok());
        assert!(limits.charge(None, "search", SEARCH).is_ok());
        // The token's own limit replaces the default: dollars only.
        assert!(limits.charge(Some("rich"), "search", SEARCH).is_ok());
        assert!(limits.charge(Some("rich"), "search", SEARCH).is_ok(), "exactly the limit fits");
        assert!(limits.charge(Some("rich"), "search", SEARCH).is_err());
        assert_eq!(limits.stats(false)["callers"], json!([]), "who spent what is for builders");
        let stats = limits.stats(true);
        assert_eq!((stats["charged_calls"].clone(), stats["refused_calls"].clone()), (json!(5), json!(2)));
        let agent = stats["callers"].as_array().unwrap().iter().find(|c| c["caller"] == "agent").unwrap().clone();
        assert_eq!(agent["tokens_spent"], 80);
    }

    #[test]
    fn spending_restarts_when_the_window_ends() {
        let limits = budgets(Duration::from_millis(50), BudgetLimit { tokens: Some(40), usd: None }, &[]);
        assert!(limits.charge(Some("agent"), "search", SEARCH).is_ok());
        assert!(limits.charge(Some("agent"), "search", SEARCH).is_err());
        std::thread::sleep(Duration::from_millis(60));
        assert!(limits.charge(Some("agent"), "search", SEARCH).is_ok());
    }

    #[test]
    fn without_limits_nothing_is_refused() {
        let limits = budgets(Duration::from_secs(60), BudgetLimit::default(), &[]);
        for _ in 0..1000 {
            assert!(limits.charge(Some("agent"), "search", SEARCH).is_ok());
        }
        assert_eq!(limits.stats(true)["refused_calls"], 0);
    }
}
