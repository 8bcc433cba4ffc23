//! Idempotency keys: the declared `idempotent`, honoured. A call of an `idempotent` capability
//! may carry a key (`_meta.trails.idempotency_key` over MCP, the `Idempotency-Key` header on
//! `/invoke`). The first call with a key runs and its result is kept; a retry with the same key,
//! caller, capability and arguments gets that result again without running anything (marked
//! `_meta.trails.replayed`); the same key with other arguments is refused (`unique`, HTTP 409),
//! and so is a retry while the first call still runs. A call that fails (a JSON-RPC error) keeps
//! nothing, so its retry runs. Keys persist in the ledger's SQLite file ([`crate::ledger`]),
//! committed before the call answers, so a replay survives `kill -9`; they are kept
//! `[idempotency] retention_secs` and at most `max_keys` per caller. Keeping keys is the `ledger`
//! feature's; built without it, a call that carries a key is refused: no replay is promised.

use serde_json::{json, Value};

use trails_core::error::Error;
use trails_core::validate::{FieldCode, FieldError};

#[cfg(feature = "ledger")]
mod replay;
#[cfg(feature = "ledger")]
pub use replay::{IdempotencyGuard, Ledger, Retention};

/// Longest key accepted.
pub const MAX_KEY_CHARS: usize = 255;

/// Where the key came from, to name it in errors as the client sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `_meta.trails.idempotency_key` of a `tools/call`.
    Meta,
    /// The `Idempotency-Key` header of `POST /invoke/{id}`.
    Header,
}

impl Source {
    pub fn field(self) -> &'static str {
        match self {
            Source::Meta => "_meta/trails/idempotency_key",
            Source::Header => "Idempotency-Key",
        }
    }
}

/// A key as a client sent it (not yet checked).
#[derive(Debug, Clone)]
pub struct SentKey {
    pub value: Value,
    pub source: Source,
}

impl SentKey {
    /// The key of a `tools/call`'s `_meta`, if any.
    pub fn from_meta(meta: Option<&serde_json::Map<String, Value>>) -> Option<SentKey> {
        let value = meta?.get("trails")?.get("idempotency_key")?;
        Some(SentKey { value: value.clone(), source: Source::Meta })
    }

    /// The key text, or why it is not one.
    #[cfg_attr(not(feature = "ledger"), allow(dead_code))]
    fn checked(&self) -> Result<&str, Error> {
        let refuse = |message: &str| {
            FieldError::refuse(
                self.source.field(),
                FieldCode::Pattern,
                format!("{} {message}", self.source.field()),
                &self.value,
                json!(format!("1 to {MAX_KEY_CHARS} visible ASCII characters")),
            )
        };
        let Some(text) = self.value.as_str() else { return Err(refuse("must be a string")) };
        if text.is_empty() || text.len() > MAX_KEY_CHARS || !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(refuse(&format!("must be 1 to {MAX_KEY_CHARS} visible ASCII characters")));
        }
        Ok(text)
    }
}

/// What can be said of a call's key before anything looks at the call past its validation: that
/// the capability takes one (it is `idempotent`) and that it is one (1 to 255 visible ASCII
/// characters). It stands right after the policies, so a malformed key is refused as malformed —
/// before a precondition reads the store or the user is asked anything; nothing is claimed.
#[cfg(feature = "ledger")]
pub struct KeyCheck;

#[cfg(feature = "ledger")]
impl trails_core::pipeline::Guard for KeyCheck {
    fn call<'a>(
        &'a self,
        call: trails_core::pipeline::Call,
        next: trails_core::pipeline::Next<'a>,
    ) -> trails_core::pipeline::GuardFuture<'a> {
        Box::pin(async move {
            let Some(key) = call.ctx().extension::<SentKey>() else { return next.run(call).await };
            let tool = call.tool();
            if !tool.idempotent() {
                let message = format!(
                    "{} is not declared `idempotent`: a retry could do the work twice, so no key can promise a replay",
                    tool.id()
                );
                let refused = FieldError::refuse(
                    key.source.field(),
                    FieldCode::OneOf,
                    message,
                    &key.value,
                    json!("no idempotency key"),
                );
                return Err(call.refuse(refused));
            }
            if let Err(malformed) = key.checked() {
                return Err(call.refuse(malformed));
            }
            next.run(call).await
        })
    }
}

/// Built without the `ledger` feature, keys cannot be kept: a call that carries one is refused
/// (nothing runs), so no client retries on a promise of replay the server cannot keep.
pub struct NoKeys;

impl trails_core::pipeline::Guard for NoKeys {
    fn call<'a>(
        &'a self,
        call: trails_core::pipeline::Call,
        next: trails_core::pipeline::Next<'a>,
    ) -> trails_core::pipeline::GuardFuture<'a> {
        Box::pin(async move {
            let Some(key) = call.ctx().extension::<SentKey>().cloned() else { return next.run(call).await };
            let message = "this server keeps no idempotency keys (built without trails-mcp's `ledger` feature): send the call without one";
            let refused = FieldError::refuse(
                key.source.field(),
                FieldCode::OneOf,
                message,
                &key.value,
                json!("no idempotency key"),
            );
            Err(call.refuse(refused))
        })
    }
}
