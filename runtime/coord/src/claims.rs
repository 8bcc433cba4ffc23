//! Idempotency claims: one hash per (caller, tool, key) holding the arguments' digest, the claim
//! id, when it was made and, once the call finished, its result. Claiming is one script, so two
//! replicas given the same key at once see one run and one "still running". Each caller's settled
//! keys are also in a sorted set by age, which bounds how many a caller keeps.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::{CoordError, Coordinator};

/// `{'new'}`, `{'other'}`, `{'running'}` or `{'result', text}`. A key past its retention, or
/// claimed and unsettled past the abandonment timeout, is claimed afresh. An empty claim id only
/// looks: it answers the same and writes nothing (a dry run).
static CLAIM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local now = tonumber(redis.call('TIME')[1])
local keep, abandoned = tonumber(ARGV[3]), tonumber(ARGV[4])
local v = redis.call('HMGET', KEYS[1], 'args', 'result', 'created')
if v[1] then
  local age = now - tonumber(v[3])
  if not (age > keep or (not v[2] and age > abandoned)) then
    if v[1] ~= ARGV[1] then return {'other'} end
    if not v[2] then return {'running'} end
    return {'result', v[2]}
  end
  if ARGV[2] == '' then return {'new'} end
  redis.call('DEL', KEYS[1])
end
if ARGV[2] == '' then return {'new'} end
redis.call('HSET', KEYS[1], 'args', ARGV[1], 'claim', ARGV[2], 'created', now)
redis.call('EXPIRE', KEYS[1], keep)
return {'new'}
",
    )
});

/// Keep the result of this claim (not another's that took the key over); then drop the caller's
/// keys past retention and the oldest settled beyond `max_keys` (ordered by when they settled, in
/// milliseconds). 1 when kept.
static SETTLE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[1], 'claim') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'result', ARGV[2])
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local keep, max = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], now_ms, KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now_ms - keep * 1000 - 1)
local over = redis.call('ZCARD', KEYS[2]) - max
if over > 0 then
  for _, key in ipairs(redis.call('ZRANGE', KEYS[2], 0, over - 1)) do
    -- A key expired and claimed again since is running, not settled: it is not this set's to drop.
    if redis.call('HEXISTS', key, 'result') == 1 then redis.call('DEL', key) end
  end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
end
redis.call('EXPIRE', KEYS[2], keep)
return 1
",
    )
});

/// Free this claim's key if it is still this claim's and unsettled.
static FREE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[1], 'claim') == ARGV[1] and redis.call('HEXISTS', KEYS[1], 'result') == 0 then
  return redis.call('DEL', KEYS[1])
end
return 0
",
    )
});

/// The key a call carries, and whose it is.
#[derive(Debug, Clone, Copy)]
pub struct KeyOf<'a> {
    /// As the ledger names callers.
    pub caller: &'a str,
    pub tool: &'a str,
    pub key: &'a str,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// Nobody had the key: this call runs.
    New,
    /// The key's first call had other arguments.
    OtherArguments,
    /// The key's first call has not finished.
    Running,
    /// The first call's result, as it was settled.
    Result(String),
}

/// How long keys are kept.
#[derive(Debug, Clone, Copy)]
pub struct Keeping {
    /// A key is forgotten this long after its claim.
    pub keep: Duration,
    /// At most this many settled keys per caller (the oldest go first).
    pub max_keys: usize,
    /// A claim unsettled this long is presumed dead (its replica stopped mid-call).
    pub abandoned_after: Duration,
}

impl Coordinator {
    fn claim_key(&self, of: KeyOf<'_>) -> String {
        // Lengths first: no caller, tool or key can make two triples one name.
        let rest = format!("{}:{}:{}:{}:{}", of.caller.len(), of.caller, of.tool.len(), of.tool, of.key);
        self.key("idem", &rest)
    }

    /// Claim `of` for a call with these `arguments` (their digest) under the id `claim` (empty:
    /// only look, and claim nothing).
    pub async fn claim(
        &self,
        of: KeyOf<'_>,
        arguments: &str,
        claim: &str,
        keeping: Keeping,
    ) -> Result<Claimed, CoordError> {
        let mut conn = self.connection();
        let found: Vec<String> = CLAIM
            .key(self.claim_key(of))
            .arg(arguments)
            .arg(claim)
            .arg(keeping.keep.as_secs().max(1))
            .arg(keeping.abandoned_after.as_secs())
            .invoke_async(&mut conn)
            .await?;
        let mut found = found.into_iter();
        match (found.next().as_deref(), found.next()) {
            (Some("new"), None) => Ok(Claimed::New),
            (Some("other"), None) => Ok(Claimed::OtherArguments),
            (Some("running"), None) => Ok(Claimed::Running),
            (Some("result"), Some(result)) => Ok(Claimed::Result(result)),
            (first, _) => Err(CoordError::Unexpected(format!("an idempotency claim answered {first:?}"))),
        }
    }

    /// Keep the result of the call `claim` let run; whether it was kept (false: the key was
    /// claimed again meanwhile, or expired).
    pub async fn settle(&self, of: KeyOf<'_>, claim: &str, result: &str, keeping: Keeping) -> Result<bool, CoordError> {
        let mut conn = self.connection();
        let kept: i64 = SETTLE
            .key(self.claim_key(of))
            .key(self.key("idem-settled", of.caller))
            .arg(claim)
            .arg(result)
            .arg(keeping.keep.as_secs().max(1))
            .arg(keeping.max_keys)
            .invoke_async(&mut conn)
            .await?;
        Ok(kept == 1)
    }

    /// Free the key of a call that failed (or was abandoned), so a retry runs.
    pub async fn free(&self, of: KeyOf<'_>, claim: &str) -> Result<(), CoordError> {
        let mut conn = self.connection();
        let _: i64 = FREE.key(self.claim_key(of)).arg(claim).invoke_async(&mut conn).await?;
        Ok(())
    }
}
