//! The keys kept: claimed before the call runs, settled with its result, replayed to a retry.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde_json::{json, Value};

use super::SentKey;
#[cfg(test)]
use super::Source;
use crate::ledger::{caller_column, ANONYMOUS_COLUMN};
use trails_core::error::Error;
use trails_core::pipeline::{Answer, Call, Guard, GuardFuture, Next, ToolResult};
use trails_core::validate::{FieldCode, FieldError};

/// A first call that has not finished after this long is presumed dead (the server stopped
/// mid-call): its key may be claimed again.
const ABANDONED_AFTER: Duration = Duration::from_secs(600);
/// A caller's old keys are pruned every this many of its claims.
const PRUNE_EVERY: usize = 64;
/// Callers whose claims are counted before the counts start over.
const MAX_COUNTED_CALLERS: usize = 4096;

/// How long keys are kept, how many, and how many bytes of results they may hold.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    pub keep: Duration,
    /// Most finished keys per caller; the oldest go first.
    pub max_keys: usize,
    /// Most bytes of kept results per caller; the caller's oldest go first. A result larger
    /// than this is not kept (the key is freed: the capability is `idempotent`, so a retry that
    /// runs again is safe).
    pub caller_bytes: u64,
    /// The same, for all anonymous callers together (they share one key space).
    pub anonymous_bytes: u64,
    /// Most bytes of kept results in all: past it a new key is refused, retryable, until keys
    /// expire or their callers' own bounds push them out. One settle may pass it by its result.
    pub total_bytes: u64,
}

impl Default for Retention {
    fn default() -> Retention {
        Retention {
            keep: Duration::from_secs(86_400),
            max_keys: 10_000,
            caller_bytes: 16 << 20,
            anonymous_bytes: 4 << 20,
            total_bytes: 256 << 20,
        }
    }
}

impl Retention {
    /// The byte bound of a caller as the ledger names it ([`caller_column`]).
    fn bytes_of(&self, caller_column: &str) -> u64 {
        if caller_column == ANONYMOUS_COLUMN {
            self.anonymous_bytes
        } else {
            self.caller_bytes
        }
    }
}

/// A new key refused while the kept results are at `total_bytes`: when to try again.
const FULL_RETRY_AFTER: Duration = Duration::from_secs(60);

/// A claimed key: the call runs, then [`Ledger::settle`] keeps its result or frees the key. A
/// ticket dropped unsettled (the client went away and the call's future was dropped) frees its
/// key, so the retry runs instead of waiting out [`ABANDONED_AFTER`].
#[derive(Debug)]
pub struct Ticket {
    caller: String,
    tool: String,
    key: String,
    /// This claim's own id: a key presumed abandoned may be claimed again, and the first
    /// call, should it finish after all, must neither free nor fill the second one's row.
    claim: i64,
    /// Where the claim is held; taken when it is settled or freed.
    held: Option<Held>,
}

/// Where a claim is held.
enum Held {
    Ledger(Arc<Mutex<Connection>>),
    #[cfg(feature = "redis")]
    Shared(trails_coord::Coordinator),
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Held::Ledger(_) => "Ledger",
            #[cfg(feature = "redis")]
            Held::Shared(_) => "Shared",
        })
    }
}

impl Ticket {
    #[cfg(feature = "redis")]
    fn key_of(&self) -> trails_coord::claims::KeyOf<'_> {
        trails_coord::claims::KeyOf { caller: &self.caller, tool: &self.tool, key: &self.key }
    }

    /// (caller, tool, key), for a task that outlives the ticket.
    #[cfg(feature = "redis")]
    fn key_of_owned(&self) -> (String, String, String) {
        (self.caller.clone(), self.tool.clone(), self.key.clone())
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let conn = match self.held.take() {
            None => return,
            Some(Held::Ledger(conn)) => conn,
            #[cfg(feature = "redis")]
            Some(Held::Shared(coordinator)) => {
                let (caller, tool, key, claim) =
                    (self.caller.clone(), self.tool.clone(), self.key.clone(), self.claim.to_string());
                let free = async move {
                    let of = trails_coord::claims::KeyOf { caller: &caller, tool: &tool, key: &key };
                    if let Err(error) = coordinator.free(of, &claim).await {
                        tracing::error!(%error, "could not free an abandoned idempotency key");
                    }
                };
                match tokio::runtime::Handle::try_current() {
                    Ok(runtime) => drop(runtime.spawn(free)),
                    Err(_) => tracing::warn!(
                        "an unsettled idempotency key was dropped outside a runtime; a retry waits until it is presumed abandoned"
                    ),
                }
                return;
            }
        };
        let (caller, tool, key, claim) = (self.caller.clone(), self.tool.clone(), self.key.clone(), self.claim);
        let free = move || {
            let conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            let freed = conn.execute(
                "DELETE FROM idempotency_key WHERE caller = ?1 AND tool = ?2 AND key = ?3 AND claim = ?4 AND result IS NULL",
                params![caller, tool, key, claim],
            );
            if let Err(error) = freed {
                tracing::error!(%error, "could not free an abandoned idempotency key");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(free)),
            Err(_) => free(),
        }
    }
}

/// What a claim found.
#[derive(Debug)]
pub enum Claim {
    /// No earlier call: run this one.
    Run(Ticket),
    /// The first call's result, to answer again.
    Replay(Box<ToolResult>),
}

/// The keys: a SQLite table, opened on first use (an app whose clients send no key never
/// creates a file).
pub struct Ledger {
    path: PathBuf,
    retention: Retention,
    conn: OnceLock<Result<Arc<Mutex<Connection>>, String>>,
    /// Claims per caller column, to prune each caller's keys every [`PRUNE_EVERY`] of its own
    /// claims (at most [`MAX_COUNTED_CALLERS`] callers).
    claims: Mutex<HashMap<String, usize>>,
    /// Several replicas: keys are claimed in Redis instead.
    #[cfg(feature = "redis")]
    shared: Option<crate::coordination::Coordination>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger").field("path", &self.path).finish()
    }
}

fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The arguments' digest: SHA-256 of their JSON with every object's keys sorted, so two
/// spellings of the same arguments are the same call.
fn digest(arguments: &Value) -> String {
    // No arguments (MCP may leave them out) and `{}` (what `/invoke` sends) are one call.
    let mut sorted = if arguments.is_null() { json!({}) } else { arguments.clone() };
    sorted.sort_all_objects();
    trails_core::sha256_hex(&sorted.to_string())
}

impl Ledger {
    pub fn new(path: PathBuf, retention: Retention) -> Ledger {
        Ledger {
            path,
            retention,
            conn: OnceLock::new(),
            claims: Mutex::new(HashMap::new()),
            #[cfg(feature = "redis")]
            shared: None,
        }
    }

    /// Claim keys in Redis, shared with the other replicas, rather than in this process's ledger.
    #[cfg(feature = "redis")]
    pub fn shared(mut self, coordination: crate::coordination::Coordination) -> Ledger {
        self.shared = Some(coordination);
        self
    }

    #[cfg(feature = "redis")]
    fn keeping(&self, caller: &str) -> trails_coord::claims::Keeping {
        trails_coord::claims::Keeping {
            keep: self.retention.keep,
            max_keys: self.retention.max_keys,
            abandoned_after: ABANDONED_AFTER,
            caller_bytes: self.retention.bytes_of(caller),
            total_bytes: self.retention.total_bytes,
        }
    }

    fn connection(&self) -> Result<Arc<Mutex<Connection>>, Error> {
        let opened =
            self.conn.get_or_init(|| open(&self.path).map(|c| Arc::new(Mutex::new(c))).map_err(|e| e.to_string()));
        opened.clone().map_err(|e| Error::internal(format!("idempotency keys at {}: {e}", self.path.display())))
    }

    /// Claim `key` for this call, or find the result of the call that claimed it first.
    pub async fn claim(
        &self,
        key: &SentKey,
        caller: Option<&str>,
        tool: &str,
        arguments: &Value,
    ) -> Result<Claim, Error> {
        self.find(key, caller, tool, arguments, false).await
    }

    /// What `claim` would find, claiming and writing nothing (a dry run): a run, a replay of the
    /// first call's result, or the refusal it would give.
    pub async fn look(
        &self,
        key: &SentKey,
        caller: Option<&str>,
        tool: &str,
        arguments: &Value,
    ) -> Result<Claim, Error> {
        self.find(key, caller, tool, arguments, true).await
    }

    async fn find(
        &self,
        key: &SentKey,
        caller: Option<&str>,
        tool: &str,
        arguments: &Value,
        look: bool,
    ) -> Result<Claim, Error> {
        let text = key.checked()?.to_owned();
        let claim = i64::from_ne_bytes(uuid::Uuid::new_v4().as_bytes()[..8].try_into().expect("8 bytes"));
        let ticket = Ticket { caller: caller_column(caller), tool: tool.to_owned(), key: text, claim, held: None };
        let args = digest(arguments);
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.shared {
            return self.claim_shared(shared, key, ticket, &args, look).await;
        }
        let conn = self.connection()?;
        let prune = !look && {
            let mut claims = self.claims.lock().unwrap_or_else(PoisonError::into_inner);
            // Callers are not a configured list (OAuth subjects): the counts only pace pruning,
            // so starting them over costs one early prune each.
            if claims.len() >= MAX_COUNTED_CALLERS && !claims.contains_key(&ticket.caller) {
                claims.clear();
            }
            let count = claims.entry(ticket.caller.clone()).or_insert(0);
            *count += 1;
            *count % PRUNE_EVERY == 1
        };
        let retention = self.retention;
        let mut found = tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            // A look only reads: it takes no write lock from the calls that claim.
            let behavior = if look { TransactionBehavior::Deferred } else { TransactionBehavior::Immediate };
            let tx = conn.transaction_with_behavior(behavior)?;
            let now = now_secs();
            if prune {
                prune_keys(&tx, now, retention, &ticket.caller)?;
            }
            let earlier: Option<(String, Option<String>, i64)> = tx
                .query_row(
                    "SELECT arguments, result, created_at FROM idempotency_key WHERE caller = ?1 AND tool = ?2 AND key = ?3",
                    params![ticket.caller, ticket.tool, ticket.key],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .optional()?;
            let found = match earlier {
                Some((_, _, created)) if now - created > retention.keep.as_secs() as i64 => None,
                Some((_, None, created)) if now - created > ABANDONED_AFTER.as_secs() as i64 => None,
                other => other,
            };
            let outcome = match found {
                None if kept_bytes(&tx, "")? >= retention.total_bytes => Found::Full,
                None if look => Found::New(ticket),
                None => {
                    // An expired row goes first (not by `OR REPLACE`: that fires no delete
                    // trigger, and the bytes it held would stay counted).
                    tx.execute(
                        "DELETE FROM idempotency_key WHERE caller = ?1 AND tool = ?2 AND key = ?3",
                        params![ticket.caller, ticket.tool, ticket.key],
                    )?;
                    tx.execute(
                        "INSERT INTO idempotency_key (caller, tool, key, arguments, result, created_at, claim)
                         VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6)",
                        params![ticket.caller, ticket.tool, ticket.key, args, now, ticket.claim],
                    )?;
                    Found::New(ticket)
                }
                Some((first, _, _)) if first != args => Found::OtherArguments,
                Some((_, None, _)) => Found::Running,
                Some((_, Some(result), _)) => Found::Result(result),
            };
            tx.commit()?;
            Ok::<_, rusqlite::Error>(outcome)
        })
        .await
        .map_err(Error::internal)?
        .map_err(|e| Error::internal(format!("idempotency keys: {e}")))?;
        if let Found::New(ticket) = &mut found {
            if !look {
                ticket.held = Some(Held::Ledger(self.connection()?));
            }
        }
        found.answer(key)
    }

    /// Claim in Redis. Redis unreachable: refused as `unavailable` (retryable), or, failing open,
    /// run without a key (nothing is kept, so no retry replays it).
    #[cfg(feature = "redis")]
    async fn claim_shared(
        &self,
        shared: &crate::coordination::Coordination,
        key: &SentKey,
        mut ticket: Ticket,
        args: &str,
        look: bool,
    ) -> Result<Claim, Error> {
        use trails_coord::claims::Claimed;
        // An empty claim id only looks.
        let claim = if look { String::new() } else { ticket.claim.to_string() };
        let found = match shared.coordinator.claim(ticket.key_of(), args, &claim, self.keeping(&ticket.caller)).await {
            Ok(Claimed::New) => {
                if !look {
                    ticket.held = Some(Held::Shared(shared.coordinator.clone()));
                }
                Found::New(ticket)
            }
            Ok(Claimed::OtherArguments) => Found::OtherArguments,
            Ok(Claimed::Running) => Found::Running,
            Ok(Claimed::Full) => Found::Full,
            Ok(Claimed::Result(text)) => Found::Result(text),
            Err(error) => {
                // The claim may have been made even so (a reply lost to a timeout): free it, or a
                // retry would find it "still running" until it is presumed abandoned.
                let (coordinator, of, claim) = (shared.coordinator.clone(), ticket.key_of_owned(), claim.clone());
                tokio::spawn(async move {
                    let of = trails_coord::claims::KeyOf { caller: &of.0, tool: &of.1, key: &of.2 };
                    let _ = coordinator.free(of, &claim).await;
                });
                shared.failed("the idempotency key", &error)?;
                Found::New(ticket)
            }
        };
        found.answer(key)
    }

    /// Keep the result of the call `ticket` let run (committed before it answers), or free the
    /// key when the call failed so a retry runs. A result that cannot be kept is logged, and the
    /// key freed: the retry then runs again rather than waiting on a key that never settles.
    pub async fn settle(&self, mut ticket: Ticket, result: Option<&ToolResult>) {
        let conn = match ticket.held.take() {
            None => return,
            Some(Held::Ledger(conn)) => conn,
            #[cfg(feature = "redis")]
            Some(Held::Shared(coordinator)) => return self.settle_shared(&coordinator, &ticket, result).await,
        };
        let text = result.map(|r| serde_json::to_string(r).expect("a tool result serialises"));
        let (caller, tool, key, claim) = (ticket.caller.clone(), ticket.tool.clone(), ticket.key.clone(), ticket.claim);
        let retention = self.retention;
        let done = tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let kept = match &text {
                Some(text) => keep_result(&tx, (&caller, &tool, &key, claim), text, retention)?,
                None => Settling::Freed,
            };
            if kept != Settling::Kept {
                tx.execute(
                    "DELETE FROM idempotency_key WHERE caller = ?1 AND tool = ?2 AND key = ?3 AND claim = ?4 AND result IS NULL",
                    params![caller, tool, key, claim],
                )?;
            }
            tx.commit()?;
            Ok::<_, rusqlite::Error>((kept, text.map_or(0, |t| t.len())))
        })
        .await;
        match done {
            Ok(Ok((Settling::Kept | Settling::Freed, _))) => {}
            Ok(Ok((Settling::Gone, _))) => tracing::warn!(
                "an idempotency key was pruned, or claimed again, while its call ran; its result is not kept"
            ),
            Ok(Ok((Settling::TooLarge, bytes))) => tracing::warn!(
                bytes,
                "an idempotent call's result is larger than its caller may keep; it is not kept, and a retry runs again"
            ),
            Ok(Err(error)) => tracing::error!(%error, "could not keep an idempotent call's result"),
            Err(error) => tracing::error!(%error, "could not keep an idempotent call's result"),
        }
    }
}

impl Ledger {
    #[cfg(feature = "redis")]
    async fn settle_shared(
        &self,
        coordinator: &trails_coord::Coordinator,
        ticket: &Ticket,
        result: Option<&ToolResult>,
    ) {
        use trails_coord::claims::Settled;
        let claim = ticket.claim.to_string();
        let done = match result {
            Some(result) => {
                let text = serde_json::to_string(result).expect("a tool result serialises");
                match coordinator.settle(ticket.key_of(), &claim, &text, self.keeping(&ticket.caller)).await {
                    Ok(Settled::Kept) => Ok(()),
                    Ok(Settled::Gone) => {
                        tracing::warn!("an idempotency key expired, or was claimed again, while its call ran; its result is not kept");
                        Ok(())
                    }
                    Ok(Settled::TooLarge) => {
                        tracing::warn!(
                            bytes = text.len(),
                            "an idempotent call's result is larger than its caller may keep; it is not kept, and a retry runs again"
                        );
                        Ok(())
                    }
                    // Not kept: free the key, so the retry runs rather than wait on it.
                    Err(error) => Err(error),
                }
            }
            None => coordinator.free(ticket.key_of(), &claim).await,
        };
        if let Err(error) = done {
            tracing::error!(%error, "could not keep an idempotent call's result");
            if let Err(error) = coordinator.free(ticket.key_of(), &claim).await {
                tracing::error!(%error, "could not free an idempotency key; a retry waits for it to be presumed abandoned");
            }
        }
    }
}

/// What the table held for a claimed key.
enum Found {
    New(Ticket),
    OtherArguments,
    Running,
    Result(String),
    /// A new key, but the kept results are at `total_bytes`.
    Full,
}

/// What settling a claim did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settling {
    Kept,
    /// The call failed: the key is free again.
    Freed,
    /// The claim was pruned, or claimed again, while the call ran.
    Gone,
    /// Larger than the caller's byte bound: the key is free again.
    TooLarge,
}

impl Found {
    /// The claim for a key found so.
    fn answer(self, key: &SentKey) -> Result<Claim, Error> {
        let conflict = |message: &str| {
            FieldError::refuse(
                key.source.field(),
                FieldCode::Unique,
                message,
                &key.value,
                json!("a key not used before, or the same arguments as its first call"),
            )
        };
        match self {
            Found::New(ticket) => Ok(Claim::Run(ticket)),
            Found::OtherArguments => {
                Err(conflict("this idempotency key was first used with other arguments; use a new key for a new call"))
            }
            Found::Running => Err(conflict("the first call with this idempotency key is still running; retry later")),
            Found::Full => Err(Error::unavailable(
                "this server keeps as many idempotent results as it may ([idempotency] max_bytes): a new key is \
                 refused until older ones expire; retry later, or send the call without a key (it runs, and no \
                 retry replays it)",
            )
            .retry_after(FULL_RETRY_AFTER)),
            Found::Result(text) => {
                let result: ToolResult = serde_json::from_str(&text).map_err(Error::internal)?;
                Ok(Claim::Replay(Box::new(result)))
            }
        }
    }
}

/// What a refused key says: its field error's message, else the error's own.
fn refused_message(error: &Error) -> String {
    match error {
        Error::Validation { errors, .. } => errors.first().map_or_else(|| error.to_string(), |e| e.message.clone()),
        other => other.to_string(),
    }
}

fn open(path: &Path) -> rusqlite::Result<Connection> {
    // A kept result must survive the process: the claim and the result commit durably.
    let conn = crate::ledger::open(path)?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS idempotency_key (
            caller TEXT NOT NULL, tool TEXT NOT NULL, key TEXT NOT NULL,
            arguments TEXT NOT NULL, result TEXT, created_at INTEGER NOT NULL, claim INTEGER, bytes INTEGER,
            PRIMARY KEY (caller, tool, key)
         );
         CREATE INDEX IF NOT EXISTS idempotency_key_age ON idempotency_key (created_at);
         CREATE INDEX IF NOT EXISTS idempotency_key_caller_age ON idempotency_key (caller, created_at);",
    )?;
    // A table an earlier build made has no claim ids: its rows (finished, or claimed by a process
    // that is gone) are never settled by this one, so they need none.
    let has_claim: bool = conn.query_row(
        "SELECT COUNT(*) > 0 FROM pragma_table_info('idempotency_key') WHERE name = 'claim'",
        [],
        |row| row.get(0),
    )?;
    if !has_claim {
        conn.execute_batch("ALTER TABLE idempotency_key ADD COLUMN claim INTEGER")?;
    }
    count_bytes(&conn)?;
    Ok(conn)
}

/// The bytes each caller's kept results hold (`idempotency_usage`; `''` is the total), kept by
/// triggers, so every statement that keeps or drops a result counts it — pruning, eviction,
/// expiry — and none can forget to. A table an earlier build made is counted once, here.
fn count_bytes(conn: &Connection) -> rusqlite::Result<()> {
    let column = |name: &str| {
        conn.query_row("SELECT COUNT(*) > 0 FROM pragma_table_info('idempotency_key') WHERE name = ?1", [name], |row| {
            row.get::<_, bool>(0)
        })
    };
    let counted = column("bytes")?;
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE;
         {add}
         CREATE TABLE IF NOT EXISTS idempotency_usage (caller TEXT PRIMARY KEY, bytes INTEGER NOT NULL) WITHOUT ROWID;
         CREATE INDEX IF NOT EXISTS idempotency_key_caller_bytes ON idempotency_key (caller, created_at, bytes)
            WHERE result IS NOT NULL;
         CREATE TRIGGER IF NOT EXISTS idempotency_key_kept AFTER UPDATE OF bytes ON idempotency_key
         BEGIN
            INSERT INTO idempotency_usage (caller, bytes)
               VALUES (NEW.caller, IFNULL(NEW.bytes, 0) - IFNULL(OLD.bytes, 0)),
                      ('', IFNULL(NEW.bytes, 0) - IFNULL(OLD.bytes, 0))
               ON CONFLICT (caller) DO UPDATE SET bytes = bytes + excluded.bytes;
         END;
         CREATE TRIGGER IF NOT EXISTS idempotency_key_dropped AFTER DELETE ON idempotency_key
            WHEN OLD.bytes IS NOT NULL
         BEGIN
            UPDATE idempotency_usage SET bytes = bytes - OLD.bytes WHERE caller IN (OLD.caller, '');
            DELETE FROM idempotency_usage WHERE caller = OLD.caller AND bytes <= 0;
         END;
         {fill}
         COMMIT;",
        add = if counted { "" } else { "ALTER TABLE idempotency_key ADD COLUMN bytes INTEGER;" },
        fill = if counted {
            ""
        } else {
            "UPDATE idempotency_key SET bytes = length(CAST(result AS BLOB)) WHERE result IS NOT NULL;"
        },
    ))
}

/// The bytes `caller`'s kept results hold (`''`: everyone's).
fn kept_bytes(conn: &Connection, caller: &str) -> rusqlite::Result<u64> {
    let bytes: Option<i64> = conn
        .query_row("SELECT bytes FROM idempotency_usage WHERE caller = ?1", [caller], |row| row.get(0))
        .optional()?;
    Ok(bytes.unwrap_or(0).max(0) as u64)
}

/// Keep `text` as the result of the claim `(caller, tool, key, claim)`, within the caller's byte
/// bound: its oldest finished keys go first until the result fits.
fn keep_result(
    tx: &rusqlite::Transaction<'_>,
    (caller, tool, key, claim): (&str, &str, &str, i64),
    text: &str,
    retention: Retention,
) -> rusqlite::Result<Settling> {
    let (bytes, bound) = (text.len() as u64, retention.bytes_of(caller));
    if bytes > bound {
        return Ok(Settling::TooLarge);
    }
    if kept_bytes(tx, caller)? + bytes > bound {
        tx.execute(
            "DELETE FROM idempotency_key WHERE rowid IN (
                SELECT rowid FROM (
                    SELECT rowid, SUM(bytes) OVER (ORDER BY created_at DESC, rowid DESC) AS newer
                    FROM idempotency_key WHERE caller = ?1 AND result IS NOT NULL)
                WHERE newer > ?2)",
            params![caller, (bound - bytes) as i64],
        )?;
    }
    let kept = tx.execute(
        "UPDATE idempotency_key SET result = ?5, bytes = ?6 WHERE caller = ?1 AND tool = ?2 AND key = ?3 AND claim = ?4",
        params![caller, tool, key, claim, text, bytes as i64],
    )?;
    Ok(if kept == 1 { Settling::Kept } else { Settling::Gone })
}

/// Drop keys past their retention, then `caller`'s oldest finished ones beyond `max_keys` (per
/// caller, so one caller's many keys never push out another's; both walk an index).
fn prune_keys(tx: &rusqlite::Transaction<'_>, now: i64, retention: Retention, caller: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM idempotency_key WHERE created_at < ?1", params![now - retention.keep.as_secs() as i64])?;
    tx.execute(
        "DELETE FROM idempotency_key WHERE rowid IN (
            SELECT rowid FROM idempotency_key WHERE caller = ?1 AND result IS NOT NULL
            ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?2)",
        params![caller, retention.max_keys as i64],
    )?;
    Ok(())
}

/// The idempotency guard. A key (`_meta.trails.idempotency_key`, or `Idempotency-Key` on
/// `/invoke`) promises a replay only where a retry cannot do the work twice: on a capability not
/// declared `idempotent` it is refused. Otherwise the key is claimed once the earlier guards
/// passed the call (a replay discloses the first call's result, so it passes the same checks),
/// and settled before the answer goes out, however the call ended (a panic inside it is a
/// failure the guards see like any other): a retry sent the moment a failure arrives finds the
/// key free. A refused key is an error answer, never an `isError`
/// result: nothing ran. A key that cannot be checked now (the replicas' Redis away) is the
/// retryable `unavailable` result a budget that cannot be checked gives: nothing ran either.
pub struct IdempotencyGuard(pub Arc<Ledger>);

impl Guard for IdempotencyGuard {
    fn call<'a>(&'a self, call: Call, next: Next<'a>) -> GuardFuture<'a> {
        Box::pin(async move {
            let Some(key) = call.ctx().extension::<SentKey>().cloned() else { return next.run(call).await };
            // A dry run claims no key; whether one was used before is looked up and said.
            if let Some(dry) = call.dry_run() {
                let tool = call.tool();
                match self.0.look(&key, call.ctx().caller(), tool.id(), call.arguments()).await {
                    Ok(Claim::Run(_)) => {}
                    Ok(Claim::Replay(_)) => dry.note(
                        "idempotency",
                        "this idempotency key was used for these arguments: the call would return the first call's \
                         result without running again",
                        false,
                        serde_json::json!({ "replay": true }),
                    ),
                    Err(refused) => dry.note("idempotency", refused_message(&refused), true, serde_json::json!({})),
                }
                return next.run(call).await;
            }
            // `KeyCheck`, earlier, refused a key of a capability that takes none.
            let tool = call.tool();
            let ticket = match self.0.claim(&key, call.ctx().caller(), tool.id(), call.arguments()).await {
                Ok(Claim::Replay(result)) => return Ok(Answer::replay(*result)),
                Ok(Claim::Run(ticket)) => ticket,
                // Keys that cannot be checked now (Redis away): the retryable `unavailable`
                // result a budget that cannot be checked gives too. Nothing ran.
                Err(error @ Error::Domain(_)) => return call.failed(error),
                // Also when the key could not be looked up (logged with the detail): nothing ran.
                Err(error) => return Err(call.refuse(error)),
            };
            let answer = next.run(call).await;
            // Only a call that did its work is replayed; a failure (also one answered as an
            // `isError` result) frees the key, so its retry runs.
            let kept = answer.as_ref().ok().map(Answer::result).filter(|result| !result.is_error);
            self.0.settle(ticket, kept).await;
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert(conn: &Connection, caller: &str, key: &str, created_at: i64, finished: bool) {
        conn.execute(
            "INSERT INTO idempotency_key (caller, tool, key, arguments, result, created_at) VALUES (?1, 't', ?2, 'a', ?3, ?4)",
            params![caller, key, finished.then_some("{}"), created_at],
        )
        .unwrap();
    }

    fn keys(conn: &Connection, caller: &str) -> Vec<String> {
        let mut statement = conn.prepare("SELECT key FROM idempotency_key WHERE caller = ?1 ORDER BY key").unwrap();
        statement.query_map([caller], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    }

    #[tokio::test]
    async fn a_call_presumed_abandoned_that_finishes_late_leaves_the_new_claim_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite3");
        let ledger = Ledger::new(
            path.clone(),
            Retention { keep: Duration::from_secs(3600), max_keys: 100, ..Retention::default() },
        );
        let key = SentKey { value: json!("k-1"), source: Source::Meta };
        let arguments = json!({ "title": "Passkeys" });
        let Claim::Run(first) = ledger.claim(&key, Some("agent"), "t", &arguments).await.unwrap() else { panic!() };
        // Eleven minutes on, the first call is presumed dead and a retry claims the key anew.
        open(&path).unwrap().execute("UPDATE idempotency_key SET created_at = created_at - 660", []).unwrap();
        let Claim::Run(second) = ledger.claim(&key, Some("agent"), "t", &arguments).await.unwrap() else { panic!() };
        // The first call fails after all: the second's claim stays, so a third call cannot run.
        ledger.settle(first, None).await;
        let third = ledger.claim(&key, Some("agent"), "t", &arguments).await;
        assert!(matches!(third, Err(Error::Validation { .. })), "still running: {third:?}");
        ledger.settle(second, Some(&ToolResult::success(String::new(), None))).await;
        let replay = ledger.claim(&key, Some("agent"), "t", &arguments).await.unwrap();
        assert!(matches!(replay, Claim::Replay(_)), "{replay:?}");
    }

    #[tokio::test]
    async fn kept_results_are_bounded_in_bytes_per_caller_for_anonymous_callers_and_in_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite3");
        let retention =
            Retention { caller_bytes: 3_500, anonymous_bytes: 2_500, total_bytes: 5_500, ..Retention::default() };
        let ledger = Ledger::new(path.clone(), retention);
        // A result whose JSON is about 1,000 bytes.
        let result = ToolResult::success("r".repeat(960), None);
        let arguments = json!({});
        let run = |caller: Option<&'static str>, key: &str| {
            let key = SentKey { value: json!(key), source: Source::Meta };
            let (ledger, result, arguments) = (&ledger, result.clone(), arguments.clone());
            async move {
                match ledger.claim(&key, caller, "t", &arguments).await? {
                    Claim::Run(ticket) => {
                        ledger.settle(ticket, Some(&result)).await;
                        Ok::<_, Error>(false)
                    }
                    Claim::Replay(_) => Ok(true),
                }
            }
        };
        let replays = |caller, key| async move { run(caller, key).await.unwrap() };
        for n in 0..5 {
            assert!(!replays(Some("ana"), ["a0", "a1", "a2", "a3", "a4"][n]).await);
        }
        // Ana's three newest fit her 3,500 bytes; her two oldest went.
        assert!(
            replays(Some("ana"), "a4").await && replays(Some("ana"), "a3").await && replays(Some("ana"), "a2").await
        );
        assert!(!replays(Some("ana"), "a0").await, "the oldest went first");
        // Anonymous callers, together, keep 2,500 bytes: two results.
        for key in ["n0", "n1", "n2"] {
            assert!(!replays(None, key).await);
        }
        assert!(replays(None, "n2").await && replays(None, "n1").await && !replays(None, "n0").await);
        let conn = open(&path).unwrap();
        let counted = |caller: &str| kept_bytes(&conn, caller).unwrap();
        let actual = |caller: &str| -> u64 {
            conn.query_row(
                "SELECT IFNULL(SUM(length(CAST(result AS BLOB))), 0) FROM idempotency_key
                 WHERE result IS NOT NULL AND (caller = ?1 OR ?1 = '')",
                [caller],
                |row| row.get::<_, i64>(0),
            )
            .unwrap() as u64
        };
        for caller in ["caller:ana", "anonymous", ""] {
            assert_eq!(counted(caller), actual(caller), "{caller}: the triggers count what is kept");
        }
        assert!(counted("caller:ana") <= 3_500 && counted("anonymous") <= 2_500);
        // A result larger than the caller may keep is not kept: its retry runs again.
        let large = ToolResult::success("r".repeat(4_000), None);
        let key = SentKey { value: json!("big"), source: Source::Meta };
        let Claim::Run(ticket) = ledger.claim(&key, Some("bo"), "t", &arguments).await.unwrap() else { panic!() };
        ledger.settle(ticket, Some(&large)).await;
        assert!(matches!(ledger.claim(&key, Some("bo"), "t", &arguments).await.unwrap(), Claim::Run(_)));
        // Bo takes the total past 5,500 bytes: a new key is refused, retryable, for anyone (a dry
        // run's look too); a kept one still replays.
        assert!(counted("") < 5_500, "{}", counted(""));
        assert!(!replays(Some("bo"), "b0").await);
        assert!(counted("") >= 5_500, "{}", counted(""));
        for look in [false, true] {
            let key = SentKey { value: json!("c0"), source: Source::Meta };
            let Err(Error::Domain(refused)) = ledger.find(&key, Some("cy"), "t", &arguments, look).await else {
                panic!("a new key is refused")
            };
            assert_eq!(refused.kind(), trails_core::error::ErrorKind::Unavailable, "{refused:?}");
            assert!(refused.retryable() && refused.retry_after_secs() == Some(60));
            assert!(refused.message().contains("max_bytes"), "{refused}");
        }
        assert!(replays(Some("bo"), "b0").await);
    }

    #[test]
    fn a_ledger_an_earlier_build_made_is_counted_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite3");
        let conn = crate::ledger::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE idempotency_key (
                caller TEXT NOT NULL, tool TEXT NOT NULL, key TEXT NOT NULL,
                arguments TEXT NOT NULL, result TEXT, created_at INTEGER NOT NULL, claim INTEGER,
                PRIMARY KEY (caller, tool, key));
             INSERT INTO idempotency_key VALUES ('caller:ana', 't', 'k', 'a', 'abcdé', 1, 1);
             INSERT INTO idempotency_key VALUES ('anonymous', 't', 'k', 'a', NULL, 1, 2);",
        )
        .unwrap();
        drop(conn);
        let conn = open(&path).unwrap();
        assert_eq!(kept_bytes(&conn, "caller:ana").unwrap(), 6, "bytes, not characters");
        assert_eq!(kept_bytes(&conn, "").unwrap(), 6);
        assert_eq!(kept_bytes(&conn, "anonymous").unwrap(), 0, "a running claim holds nothing");
        drop(conn);
        assert_eq!(kept_bytes(&open(&path).unwrap(), "").unwrap(), 6, "counted once");
    }

    #[test]
    fn pruning_keeps_each_callers_newest_finished_keys_and_drops_expired_ones() {
        let dir = std::env::temp_dir().join(format!("trails-idempotency-{}", uuid::Uuid::new_v4().simple()));
        let mut conn = open(&dir.join("keys.sqlite3")).unwrap();
        let now = 1_000_000;
        // A busy caller with five finished keys and one still running; a quiet one with two.
        for (n, key) in ["a1", "a2", "a3", "a4", "a5"].iter().enumerate() {
            insert(&conn, "caller:busy", key, now - 10 + n as i64, true);
        }
        insert(&conn, "caller:busy", "a0-running", now - 50, false);
        insert(&conn, "caller:quiet", "q1", now - 40, true);
        insert(&conn, "caller:quiet", "q2", now - 30, true);
        insert(&conn, "anonymous", "expired", now - 7200, true);

        let retention = Retention { keep: Duration::from_secs(3600), max_keys: 3, ..Retention::default() };
        for caller in ["caller:busy", "caller:quiet"] {
            let tx = conn.transaction().unwrap();
            prune_keys(&tx, now, retention, caller).unwrap();
            tx.commit().unwrap();
        }

        assert_eq!(keys(&conn, "caller:busy"), ["a0-running", "a3", "a4", "a5"], "newest three, and the running one");
        assert_eq!(keys(&conn, "caller:quiet"), ["q1", "q2"], "another caller's keys are not pushed out");
        assert!(keys(&conn, "anonymous").is_empty(), "past retention");
        let _ = std::fs::remove_dir_all(dir);
    }
}
