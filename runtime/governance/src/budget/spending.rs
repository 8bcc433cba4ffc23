//! Spending: decided in memory, committed to the ledger before the handler runs.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{params, Connection};
use serde_json::{json, Value};
use tokio::sync::OnceCell;

use super::{BudgetLimit, BudgetSettings};
use crate::ledger::{caller_column, caller_from_column};
use trails_core::error::Error;
use trails_core::pipeline::{Call, Guard, GuardFuture, Next};
use trails_core::registry::Cost;

/// What one caller spent in its current window, which began at `since_ms` (Unix milliseconds:
/// wall-clock time, so a window survives a restart).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Spent {
    since_ms: i64,
    tokens: u64,
    usd: f64,
}

impl Spent {
    fn starting(now_ms: i64) -> Spent {
        Spent { since_ms: now_ms, tokens: 0, usd: 0.0 }
    }

    /// A window ends when it has lasted its length — or when the clock was set back before it
    /// began (else a caller would wait out the step back as well).
    fn ended(&self, now: i64, window_ms: i64) -> bool {
        now.saturating_sub(self.since_ms) >= window_ms || now < self.since_ms
    }
}

/// Dollars are summed as floats: a charge that lands within this of the limit still fits.
const USD_SLACK: f64 = 1e-9;

/// Callers come from tokens, and with OAuth from the identity provider's subjects: no list bounds
/// them. Once this many are held, those whose window ended (the same as no entry) are forgotten.
const FORGET_ENDED_FROM: usize = 1024;

/// Every caller's spending in memory, keyed by caller name (`None`: anonymous callers, who share
/// one budget); bounded by the callers whose window is open.
#[derive(Debug, Default)]
struct Spending {
    callers: HashMap<Option<String>, Spent>,
    /// Forget ended windows when `callers` reaches this (doubling, so forgetting stays amortized).
    forget_at: usize,
}

impl Spending {
    /// `caller`'s entry, made room for first.
    fn entry(&mut self, caller: Option<String>, now: i64, window_ms: i64) -> Entry<'_, Option<String>, Spent> {
        if self.callers.len() >= self.forget_at.max(FORGET_ENDED_FROM) && !self.callers.contains_key(&caller) {
            self.callers.retain(|_, spent| !spent.ended(now, window_ms));
            self.forget_at = self.callers.len().saturating_mul(2);
        }
        self.callers.entry(caller)
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Every caller's spending, and what was refused.
pub struct Budgets {
    settings: BudgetSettings,
    spent: Mutex<Spending>,
    charged: AtomicU64,
    refused: AtomicU64,
    ledger: PathBuf,
    /// The ledger's connection, opened (and its spending read into `spent`) before the first
    /// charge; tried again by the next charge when it could not be.
    conn: OnceCell<Arc<Mutex<Connection>>>,
    /// Several replicas: spending is decided in Redis instead (`spent` then only mirrors what
    /// this replica last saw, for `trails://stats`).
    #[cfg(feature = "redis")]
    shared: Option<crate::coordination::Coordination>,
}

impl std::fmt::Debug for Budgets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgets").field("settings", &self.settings).field("ledger", &self.ledger).finish()
    }
}

impl Budgets {
    pub fn new(settings: BudgetSettings, ledger: PathBuf) -> Budgets {
        Budgets {
            settings,
            spent: Mutex::new(Spending::default()),
            charged: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            ledger,
            conn: OnceCell::new(),
            #[cfg(feature = "redis")]
            shared: None,
        }
    }

    /// Decide spending in Redis, shared with the other replicas, rather than in this process.
    #[cfg(feature = "redis")]
    pub fn shared(mut self, coordination: crate::coordination::Coordination) -> Budgets {
        self.shared = Some(coordination);
        self
    }

    fn limit(&self, caller: Option<&str>) -> BudgetLimit {
        caller.and_then(|name| self.settings.by_caller.get(name)).copied().unwrap_or(self.settings.default)
    }

    fn window_ms(&self) -> i64 {
        i64::try_from(self.settings.window.as_millis()).unwrap_or(i64::MAX)
    }

    /// Charge `cost` of capability `id` to `caller`, or refuse it (`-32003`) when it exceeds what
    /// the caller has left in this window. The charge is committed to the ledger before this
    /// returns `Ok` — unless the ledger cannot be written, which is logged.
    pub async fn charge(&self, caller: Option<&str>, id: &str, cost: Cost) -> Result<(), Error> {
        self.spend(caller, id, cost, false).await
    }

    /// Whether `charge` would admit `cost` now, the refusal it would give if not — charging,
    /// writing and counting nothing (a dry run).
    pub async fn would_fit(&self, caller: Option<&str>, id: &str, cost: Cost) -> Result<(), Error> {
        self.spend(caller, id, cost, true).await
    }

    async fn spend(&self, caller: Option<&str>, id: &str, cost: Cost, peek: bool) -> Result<(), Error> {
        // The hot path: most capabilities declare no cost, and most apps set no budget. Only a
        // cost on a side the caller's limit bounds is counted (or written down).
        let limit = self.limit(caller);
        let bounded = (cost.tokens > 0 && limit.tokens.is_some()) || (cost.usd > 0.0 && limit.usd.is_some());
        if !bounded {
            return Ok(());
        }
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.shared {
            return self.charge_shared(shared, caller, id, cost, limit, peek).await;
        }
        let conn = match self.conn.get_or_try_init(|| self.load()).await {
            Ok(conn) => Some(conn.clone()),
            Err(error) => {
                tracing::error!(%error, path = %self.ledger.display(), "budget spending cannot be kept; it holds in memory until the ledger opens");
                None
            }
        };
        if peek {
            return self.fits(caller, id, cost, limit, now_ms());
        }
        let since_ms = self.decide(caller, id, cost, limit, now_ms())?;
        if let Some(conn) = conn {
            let (column, window_ms) = (caller_column(caller), self.window_ms());
            let kept = tokio::task::spawn_blocking(move || {
                let conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
                add(&conn, &column, since_ms, cost, now_ms(), window_ms)
            })
            .await;
            match kept {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::error!(%error, "could not keep a budget charge; it holds in memory"),
                Err(error) => tracing::error!(%error, "could not keep a budget charge; it holds in memory"),
            }
        }
        Ok(())
    }

    /// Open the ledger and read the spending of windows still open into memory.
    async fn load(&self) -> Result<Arc<Mutex<Connection>>, String> {
        let (path, window_ms, now) = (self.ledger.clone(), self.window_ms(), now_ms());
        let (conn, rows) = tokio::task::spawn_blocking(move || {
            let conn = open(&path)?;
            let rows = current(&conn, now - window_ms, now)?;
            Ok::<_, rusqlite::Error>((conn, rows))
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        for (caller, kept) in rows {
            // Charges made while the ledger could not be opened are in memory only: keep the
            // newer window, and add up what both hold of the same one.
            let entry = spent.entry(caller, now, window_ms).or_insert(Spent::starting(kept.since_ms));
            if kept.since_ms > entry.since_ms {
                *entry = kept;
            } else if kept.since_ms == entry.since_ms {
                entry.tokens = entry.tokens.saturating_add(kept.tokens);
                entry.usd += kept.usd;
            }
        }
        Ok(Arc::new(Mutex::new(conn)))
    }

    /// Whether `cost` fits in what `caller` has left now, changing nothing.
    fn fits(&self, caller: Option<&str>, id: &str, cost: Cost, limit: BudgetLimit, now: i64) -> Result<(), Error> {
        let window_ms = self.window_ms();
        let spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = spent
            .callers
            .get(&caller.map(str::to_owned))
            .copied()
            .filter(|spent| !spent.ended(now, window_ms))
            .unwrap_or(Spent::starting(now));
        let tokens_over = limit.tokens.is_some_and(|max| entry.tokens.saturating_add(cost.tokens) > max);
        let usd_over = limit.usd.is_some_and(|max| entry.usd + cost.usd > max + USD_SLACK);
        match tokens_over || usd_over {
            true => Err(self.refusal(caller, id, cost, limit, entry, now)),
            false => Ok(()),
        }
    }

    /// Charge `cost` in memory, or refuse it; the window the charge landed in.
    fn decide(&self, caller: Option<&str>, id: &str, cost: Cost, limit: BudgetLimit, now: i64) -> Result<i64, Error> {
        let window_ms = self.window_ms();
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = spent.entry(caller.map(str::to_owned), now, window_ms).or_insert_with(|| Spent::starting(now));
        if entry.ended(now, window_ms) {
            *entry = Spent::starting(now);
        }
        let tokens_over = limit.tokens.is_some_and(|max| entry.tokens.saturating_add(cost.tokens) > max);
        let usd_over = limit.usd.is_some_and(|max| entry.usd + cost.usd > max + USD_SLACK);
        if tokens_over || usd_over {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return Err(self.refusal(caller, id, cost, limit, *entry, now));
        }
        entry.tokens = entry.tokens.saturating_add(cost.tokens);
        entry.usd += cost.usd;
        self.charged.fetch_add(1, Ordering::Relaxed);
        Ok(entry.since_ms)
    }

    /// Charge in Redis, atomically across replicas, by Redis' clock.
    #[cfg(feature = "redis")]
    async fn charge_shared(
        &self,
        shared: &crate::coordination::Coordination,
        caller: Option<&str>,
        id: &str,
        cost: Cost,
        limit: BudgetLimit,
        peek: bool,
    ) -> Result<(), Error> {
        let column = caller_column(caller);
        let charge = trails_coord::budget::Charge {
            caller: &column,
            window_ms: self.window_ms(),
            tokens: cost.tokens,
            usd: cost.usd,
            max_tokens: limit.tokens,
            max_usd: limit.usd,
            peek,
        };
        let spending = match shared.coordinator.charge(charge).await {
            Ok(spending) => spending,
            Err(error) => return shared.failed("the budget", &error),
        };
        let seen = Spent { since_ms: spending.since_ms, tokens: spending.tokens, usd: spending.usd };
        if peek {
            return match spending.admitted {
                true => Ok(()),
                false => Err(self.refusal(caller, id, cost, limit, seen, spending.now_ms)),
            };
        }
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        spent.entry(caller.map(str::to_owned), spending.now_ms, self.window_ms()).insert_entry(seen);
        drop(spent);
        if spending.admitted {
            self.charged.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        self.refused.fetch_add(1, Ordering::Relaxed);
        Err(self.refusal(caller, id, cost, limit, seen, spending.now_ms))
    }

    /// The `-32003` for a charge of `cost` that does not fit in what `spent` leaves.
    fn refusal(&self, caller: Option<&str>, id: &str, cost: Cost, limit: BudgetLimit, spent: Spent, now: i64) -> Error {
        let renews_in_secs = renews_in_ms(spent.since_ms, self.window_ms(), now).div_ceil(1000).max(1);
        // A cost over the whole limit never fits: no window will help.
        let never = limit.tokens.is_some_and(|max| cost.tokens > max) || limit.usd.is_some_and(|max| cost.usd > max);
        let retry_after_secs = (!never).then_some(renews_in_secs);
        // Only the sides the caller's limit bounds (one at least, or nothing was refused).
        let mut costs = Vec::new();
        let mut left = Vec::new();
        if let Some(max) = limit.tokens {
            costs.push(format!("{} tokens", cost.tokens));
            left.push(format!("{} tokens", max.saturating_sub(spent.tokens)));
        }
        if let Some(max) = limit.usd {
            costs.push(format!("${}", cost.usd));
            left.push(format!("${}", (max - spent.usd).max(0.0)));
        }
        let reason = format!(
            "{id} costs {}; {} has {} left in this {}s window, renewed in {}s",
            costs.join(" and "),
            caller.unwrap_or("the anonymous caller"),
            left.join(" and "),
            self.settings.window.as_secs(),
            renews_in_secs,
        );
        Error::BudgetExceeded { reason, retry_after_secs }
    }

    /// `trails://stats`' `budgets`: the window, calls charged and refused, and (`per_caller`)
    /// each caller's spending in its current window.
    pub fn stats(&self, per_caller: bool) -> Value {
        let (now, window_ms) = (now_ms(), self.window_ms());
        let spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        let mut callers: Vec<Value> = spent
            .callers
            .iter()
            .filter(|_| per_caller)
            .filter(|(_, spent)| !spent.ended(now, window_ms))
            .map(|(caller, spent)| {
                let limit = self.limit(caller.as_deref());
                json!({
                    "caller": caller,
                    "tokens_spent": spent.tokens,
                    "usd_spent": spent.usd,
                    "tokens_limit": limit.tokens,
                    "usd_limit": limit.usd,
                    "renews_in_secs": renews_in_ms(spent.since_ms, window_ms, now) / 1000,
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

/// Milliseconds until a window that began at `since_ms` ends.
fn renews_in_ms(since_ms: i64, window_ms: i64, now: i64) -> u64 {
    u64::try_from(since_ms.saturating_add(window_ms).saturating_sub(now)).unwrap_or(0)
}

fn open(path: &std::path::Path) -> rusqlite::Result<Connection> {
    let conn = crate::ledger::open(path)?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS budget_spent (
            caller TEXT PRIMARY KEY, since_ms INTEGER NOT NULL, tokens INTEGER NOT NULL, usd REAL NOT NULL
         );",
    )?;
    Ok(conn)
}

/// Every caller's spending in a window that began after `opened_after` and not after `now`
/// (other rows are dropped: ended windows, and those a clock set back left in the future). A
/// row this version cannot read is skipped, not fatal.
fn current(conn: &Connection, opened_after: i64, now: i64) -> rusqlite::Result<Vec<(Option<String>, Spent)>> {
    conn.execute("DELETE FROM budget_spent WHERE since_ms <= ?1 OR since_ms > ?2", params![opened_after, now])?;
    let mut statement = conn.prepare("SELECT caller, since_ms, tokens, usd FROM budget_spent")?;
    let rows = statement.query_map([], |row| {
        let caller: String = row.get(0)?;
        let tokens: i64 = row.get(2)?;
        Ok((caller, Spent { since_ms: row.get(1)?, tokens: u64::try_from(tokens).unwrap_or(0), usd: row.get(3)? }))
    })?;
    Ok(rows
        .filter_map(|row| row.inspect_err(|error| tracing::warn!(%error, "an unreadable budget row is skipped")).ok())
        .filter_map(|(column, spent)| Some((caller_from_column(&column)?, spent)))
        .collect())
}

/// Add one charge, made in the window that began at `since_ms`, to the caller's row; `now` is
/// the clock as the charge commits. Charges commit in any order: one of the same window adds up,
/// one of a newer window starts the row over, one of an older window (committed late) is dropped —
/// so the row ends as this process's memory says. A row in the future (the clock was set back,
/// and memory started a window now) is started over by a charge of a window still open, so a
/// restart does not drop the new window's spending with it; a charge whose own window is in the
/// future, or over, is never written over anything.
fn add(conn: &Connection, caller: &str, since_ms: i64, cost: Cost, now: i64, window_ms: i64) -> rusqlite::Result<()> {
    let tokens = i64::try_from(cost.tokens).unwrap_or(i64::MAX);
    conn.execute(
        // Same window: add up. Otherwise start the row over — only with a window that has begun,
        // and is newer than the row's or (the row being in the future) still open; else keep it.
        "INSERT INTO budget_spent (caller, since_ms, tokens, usd) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (caller) DO UPDATE SET
           tokens = CASE WHEN excluded.since_ms = since_ms
                         THEN MIN(tokens, 9223372036854775807 - excluded.tokens) + excluded.tokens
                         ELSE excluded.tokens END,
           usd = CASE WHEN excluded.since_ms = since_ms THEN usd + excluded.usd ELSE excluded.usd END,
           since_ms = excluded.since_ms
         WHERE excluded.since_ms = since_ms
            OR (excluded.since_ms <= ?5
                AND (excluded.since_ms > since_ms OR (since_ms > ?5 AND excluded.since_ms > ?5 - ?6)))",
        params![caller, since_ms, tokens, cost.usd, now, window_ms],
    )?;
    Ok(())
}

/// The budget guard: a call is charged to its caller's budget once every other check passed (a
/// refused call, or a replay, costs nothing), before its handler runs.
pub struct BudgetGuard(pub Arc<Budgets>);

impl Guard for BudgetGuard {
    fn call<'a>(&'a self, call: Call, next: Next<'a>) -> GuardFuture<'a> {
        Box::pin(async move {
            let tool = call.tool();
            // A dry run is charged nothing; what the call would cost, and whether what the caller
            // has left covers it, are reasons for a planner.
            if let Some(dry) = call.dry_run() {
                let cost = tool.cost();
                if cost.tokens > 0 || cost.usd > 0.0 {
                    let more = serde_json::json!({ "cost": { "tokens": cost.tokens, "usd": cost.usd } });
                    match self.0.would_fit(call.ctx().caller(), tool.id(), cost).await {
                        Ok(()) => {
                            let message = "the call would be charged its declared cost to the caller's budget";
                            dry.note("cost", message, false, more);
                        }
                        Err(refused) => {
                            let message = match refused {
                                Error::BudgetExceeded { reason, .. } => reason,
                                // The replicas' Redis away, say: the call would not run now either.
                                other => other.to_string(),
                            };
                            dry.note("budget", message, true, more);
                        }
                    }
                }
                return next.run(call).await;
            }
            match self.0.charge(call.ctx().caller(), tool.id(), tool.cost()).await {
                Ok(()) => next.run(call).await,
                Err(error) => call.failed(error),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A ledger file of its own, removed when dropped.
    struct Ledger(PathBuf);

    impl Ledger {
        fn new() -> Ledger {
            Ledger(std::env::temp_dir().join(format!("trails-budget-{}", uuid::Uuid::new_v4().simple())))
        }

        fn file(&self) -> PathBuf {
            self.0.join("ledger.sqlite3")
        }
    }

    impl Drop for Ledger {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn budgets(ledger: &Ledger, window: Duration, default: BudgetLimit, own: &[(&str, BudgetLimit)]) -> Budgets {
        let by_caller = own.iter().map(|(name, limit)| ((*name).to_owned(), *limit)).collect();
        Budgets::new(BudgetSettings { window, default, by_caller }, ledger.file())
    }

    const SEARCH: Cost = Cost { tokens: 40, usd: 0.25 };

    #[tokio::test]
    async fn a_call_is_refused_once_its_cost_exceeds_what_is_left_and_only_its_caller_is_affected() {
        let ledger = Ledger::new();
        let limits = budgets(
            &ledger,
            Duration::from_secs(3600),
            BudgetLimit { tokens: Some(100), usd: None },
            &[("rich", BudgetLimit { tokens: None, usd: Some(0.5) })],
        );
        assert!(limits.charge(Some("agent"), "search", SEARCH).await.is_ok());
        assert!(limits.charge(Some("agent"), "search", SEARCH).await.is_ok());
        let Err(Error::BudgetExceeded { reason, retry_after_secs }) =
            limits.charge(Some("agent"), "search", SEARCH).await
        else {
            panic!("the third call of 40 tokens exceeds 100")
        };
        assert!(reason.contains("20 tokens") && reason.contains("agent"), "{reason}");
        assert!(retry_after_secs.is_some_and(|s| (3500..=3600).contains(&s)));
        // A free call still runs; another caller has its own budget.
        assert!(limits.charge(Some("agent"), "ping", Cost::default()).await.is_ok());
        assert!(limits.charge(None, "search", SEARCH).await.is_ok());
        // The token's own limit replaces the default: dollars only.
        assert!(limits.charge(Some("rich"), "search", SEARCH).await.is_ok());
        assert!(limits.charge(Some("rich"), "search", SEARCH).await.is_ok(), "exactly the limit fits");
        assert!(limits.charge(Some("rich"), "search", SEARCH).await.is_err());
        assert_eq!(limits.stats(false)["callers"], json!([]), "who spent what is for builders");
        let stats = limits.stats(true);
        assert_eq!((stats["charged_calls"].clone(), stats["refused_calls"].clone()), (json!(5), json!(2)));
        let agent = stats["callers"].as_array().unwrap().iter().find(|c| c["caller"] == "agent").unwrap().clone();
        assert_eq!(agent["tokens_spent"], 80);
    }

    #[test]
    fn callers_whose_window_ended_are_forgotten_and_open_windows_are_kept() {
        // With OAuth, every subject of the identity provider is a caller of its own.
        let ledger = Ledger::new();
        let limit = BudgetLimit { tokens: Some(100), usd: None };
        let limits = budgets(&ledger, Duration::from_secs(60), limit, &[]);
        let held = || limits.spent.lock().unwrap().callers.len();
        for n in 0..FORGET_ENDED_FROM - 1 {
            limits.decide(Some(&format!("subject-{n}")), "search", SEARCH, limit, 0).unwrap();
        }
        assert_eq!(held(), FORGET_ENDED_FROM - 1, "windows still open are all held");
        let spend = |caller: &str, at: i64| limits.decide(Some(caller), "search", SEARCH, limit, at);
        spend("recent", 50_000).unwrap();
        spend("recent", 50_000).unwrap();
        // A minute on, a new subject: the ended windows go, the open one stays.
        spend("late", 70_000).unwrap();
        assert_eq!(held(), 2);
        assert!(spend("recent", 70_000).is_err(), "80 of 100 tokens spent in a window still open");
        assert!(spend("subject-0", 70_000).is_ok(), "a forgotten caller starts a new window");
    }

    #[tokio::test]
    async fn spending_survives_a_restart_until_its_window_ends() {
        let ledger = Ledger::new();
        let limit = BudgetLimit { tokens: Some(100), usd: None };
        let first = budgets(&ledger, Duration::from_secs(3600), limit, &[]);
        assert!(first.charge(Some("agent"), "search", SEARCH).await.is_ok());
        assert!(first.charge(Some("agent"), "search", SEARCH).await.is_ok());
        assert!(first.charge(None, "search", SEARCH).await.is_ok());
        drop(first);

        // A new server on the same ledger: 80 of 100 tokens are spent, so 40 more do not fit.
        let restarted = budgets(&ledger, Duration::from_secs(3600), limit, &[]);
        let Err(Error::BudgetExceeded { reason, .. }) = restarted.charge(Some("agent"), "search", SEARCH).await else {
            panic!("a restart handed the caller a fresh budget")
        };
        assert!(reason.contains("20 tokens"), "{reason}");
        assert!(restarted.charge(None, "search", SEARCH).await.is_ok(), "the anonymous caller has 60 left");
        assert!(restarted.charge(None, "search", SEARCH).await.is_err());
        drop(restarted);

        // Under a window that has ended since, the spending is gone from the ledger too: only
        // the new window's charge is there.
        std::thread::sleep(Duration::from_millis(20));
        let later = budgets(&ledger, Duration::from_millis(10), limit, &[]);
        assert!(later.charge(Some("agent"), "search", SEARCH).await.is_ok());
        let rows = current(&open(&ledger.file()).unwrap(), 0, now_ms()).unwrap();
        assert_eq!(rows.len(), 1, "the anonymous caller's ended window is dropped: {rows:?}");
        assert_eq!((rows[0].0.as_deref(), rows[0].1.tokens), (Some("agent"), 40));
    }

    #[tokio::test]
    async fn a_clock_set_back_ends_the_window_instead_of_extending_it() {
        let ledger = Ledger::new();
        let limit = BudgetLimit { tokens: Some(40), usd: None };
        let limits = budgets(&ledger, Duration::from_secs(3600), limit, &[]);
        let now = now_ms();
        assert!(limits.decide(Some("agent"), "search", SEARCH, limit, now).is_ok());
        assert!(limits.decide(Some("agent"), "search", SEARCH, limit, now + 1000).is_err(), "same window");
        assert!(limits.decide(Some("agent"), "search", SEARCH, limit, now - 86_400_000).is_ok(), "a day back");
    }

    /// The window of the ledger-level tests, in milliseconds.
    const WINDOW: i64 = 60_000;

    /// Charge `tokens` of the window that began at `since` to `agent`, committed at `now`.
    fn charge(conn: &Connection, since: i64, tokens: u64, now: i64) {
        add(conn, "caller:agent", since, Cost { tokens, usd: 0.0 }, now, WINDOW).unwrap();
    }

    /// The ledger's one row: `agent`'s window and tokens.
    fn agent(since_ms: i64, tokens: u64) -> [(Option<String>, Spent); 1] {
        [(Some("agent".to_owned()), Spent { since_ms, tokens, usd: 0.0 })]
    }

    #[test]
    fn charges_committed_out_of_order_end_as_the_newest_window_says() {
        let ledger = Ledger::new();
        let conn = open(&ledger.file()).unwrap();
        charge(&conn, 1_000, 10, 1_500);
        charge(&conn, 1_000, 5, 1_600);
        // The next window's first charge, then a late one of the window before it.
        charge(&conn, 9_000, 7, 9_100);
        charge(&conn, 1_000, 100, 9_200);
        assert_eq!(current(&conn, 0, 10_000).unwrap(), agent(9_000, 7));
        assert!(current(&conn, 0, 8_000).unwrap().is_empty(), "a window in the future (clock set back) is dropped");
        charge(&conn, 9_000, 7, 9_300);
        assert!(current(&conn, 9_000, 10_000).unwrap().is_empty(), "a window that has ended is dropped");
    }

    #[test]
    fn a_window_started_after_the_clock_was_set_back_is_what_the_ledger_keeps() {
        let ledger = Ledger::new();
        let conn = open(&ledger.file()).unwrap();
        charge(&conn, 50_000, 30, 50_100);
        // The clock goes back to 20_000: memory starts a window there, and its charges replace
        // the row now in the future; a late charge of the window before the step stays out.
        charge(&conn, 20_000, 4, 20_000);
        charge(&conn, 20_000, 4, 20_100);
        charge(&conn, 50_000, 30, 20_200);
        assert_eq!(current(&conn, 0, 20_300).unwrap(), agent(20_000, 8));
        // Nor does a late charge of a window already over replace a row in the future.
        charge(&conn, 90_000, 1, 90_000);
        charge(&conn, 10_000, 30, 80_000);
        assert_eq!(current(&conn, 0, 90_000).unwrap(), agent(90_000, 1));
    }

    #[tokio::test]
    async fn spending_restarts_when_the_window_ends() {
        let ledger = Ledger::new();
        let limits = budgets(&ledger, Duration::from_millis(50), BudgetLimit { tokens: Some(40), usd: None }, &[]);
        assert!(limits.charge(Some("agent"), "search", SEARCH).await.is_ok());
        assert!(limits.charge(Some("agent"), "search", SEARCH).await.is_err());
        std::thread::sleep(Duration::from_millis(60));
        assert!(limits.charge(Some("agent"), "search", SEARCH).await.is_ok());
    }

    #[tokio::test]
    async fn without_limits_nothing_is_refused_and_nothing_is_written() {
        let ledger = Ledger::new();
        let limits = budgets(&ledger, Duration::from_secs(60), BudgetLimit::default(), &[]);
        for _ in 0..1000 {
            assert!(limits.charge(Some("agent"), "search", SEARCH).await.is_ok());
        }
        assert_eq!(limits.stats(true)["refused_calls"], 0);
        assert!(!ledger.file().exists(), "an app without budgets keeps no ledger for them");
    }
}
