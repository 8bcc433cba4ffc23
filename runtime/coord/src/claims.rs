//! Idempotency claims: one hash per (caller, tool, key) holding the arguments' digest, the claim
//! id, when it was made and, once the call finished, its result. Claiming is one script, so two
//! replicas given the same key at once see one run and one "still running". Each caller's settled
//! keys are also in a sorted set by age, which bounds how many a caller keeps, beside a hash of
//! their sizes, which bounds the bytes they hold. Every caller's bytes (`idem-usage`), the total
//! (`idem-total`) and when each caller last settled (`idem-active`) are shared: a caller idle past
//! retention has nothing kept (its keys and sets expired), so its bytes leave the total then.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::{CoordError, Coordinator};

/// Callers idle past retention (`keep`, seconds) leave the shared counts: KEYS[usage], KEYS[active]
/// and KEYS[total] are `idem-usage`, `idem-active` and `idem-total`. Sets `now_ms`.
fn forget_idle(usage: usize, active: usize, total: usize) -> String {
    format!(
        r"
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local idle_before = now_ms - keep * 1000 - 1
for _, c in ipairs(redis.call('ZRANGEBYSCORE', KEYS[{active}], '-inf', idle_before)) do
  redis.call('DECRBY', KEYS[{total}], tonumber(redis.call('HGET', KEYS[{usage}], c) or 0))
  redis.call('HDEL', KEYS[{usage}], c)
end
redis.call('ZREMRANGEBYSCORE', KEYS[{active}], '-inf', idle_before)
"
    )
}

/// `{'new'}`, `{'other'}`, `{'running'}`, `{'full'}` (a new key while the kept results hold
/// `total_bytes`) or `{'result', text}`. A key past its retention, or claimed and unsettled past
/// the abandonment timeout, is claimed afresh. An empty claim id only looks: it answers the same
/// and writes nothing (a dry run).
static CLAIM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        r"
local now = tonumber(redis.call('TIME')[1])
local keep, abandoned = tonumber(ARGV[3]), tonumber(ARGV[4])
local v = redis.call('HMGET', KEYS[1], 'args', 'result', 'created')
if v[1] then
  local age = now - tonumber(v[3])
  if not (age > keep or (not v[2] and age > abandoned)) then
    if v[1] ~= ARGV[1] then return {{'other'}} end
    if not v[2] then return {{'running'}} end
    return {{'result', v[2]}}
  end
end
if tonumber(redis.call('GET', KEYS[4]) or 0) >= tonumber(ARGV[5]) then
  {forget}
  if tonumber(redis.call('GET', KEYS[4]) or 0) >= tonumber(ARGV[5]) then return {{'full'}} end
end
if ARGV[2] == '' then return {{'new'}} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'args', ARGV[1], 'claim', ARGV[2], 'created', now)
redis.call('EXPIRE', KEYS[1], keep)
return {{'new'}}
",
        forget = forget_idle(2, 3, 4).replace('\n', "\n  "),
    ))
});

/// Keep the result of this claim (not another's that took the key over); then drop the caller's
/// keys past retention and its oldest settled beyond `max_keys` or `caller_bytes` (ordered by
/// when they settled, in milliseconds). 1 when kept, 0 when the claim is gone, 2 when the result
/// is larger than `caller_bytes` (not kept).
static SETTLE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        r"
if redis.call('HGET', KEYS[1], 'claim') ~= ARGV[1] then return 0 end
local keep, max, caller, bound = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
local bytes = string.len(ARGV[2])
if bytes > bound then return 2 end
{forget}
local used = tonumber(redis.call('HGET', KEYS[4], caller) or 0)
-- The caller's sizes expired with its keys: nothing of what it counted is kept.
if redis.call('EXISTS', KEYS[3]) == 0 and used > 0 then
  redis.call('DECRBY', KEYS[6], used)
  used = 0
end
local function drop(key)
  local size = tonumber(redis.call('HGET', KEYS[3], key) or 0)
  redis.call('HDEL', KEYS[3], key)
  redis.call('ZREM', KEYS[2], key)
  redis.call('DECRBY', KEYS[6], size)
  used = used - size
end
for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', idle_before)) do drop(key) end
drop(KEYS[1])
redis.call('HSET', KEYS[1], 'result', ARGV[2])
redis.call('ZADD', KEYS[2], now_ms, KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], bytes)
redis.call('INCRBY', KEYS[6], bytes)
used = used + bytes
while redis.call('ZCARD', KEYS[2]) > max or used > bound do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if oldest == KEYS[1] then break end
  -- A key expired and claimed again since is running, not settled: it is not this set's to drop.
  if redis.call('HEXISTS', oldest, 'result') == 1 then redis.call('DEL', oldest) end
  drop(oldest)
end
redis.call('HSET', KEYS[4], caller, used)
redis.call('ZADD', KEYS[5], now_ms, caller)
redis.call('EXPIRE', KEYS[2], keep)
redis.call('EXPIRE', KEYS[3], keep)
return 1
",
        forget = forget_idle(4, 5, 6),
    ))
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
    /// A new key while the kept results hold `total_bytes`: refused, retryable.
    Full,
}

/// What settling a claim did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    Kept,
    /// The key was claimed again meanwhile, or expired.
    Gone,
    /// The result is larger than `caller_bytes`: not kept.
    TooLarge,
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
    /// At most this many bytes of settled results for this caller (its oldest go first).
    pub caller_bytes: u64,
    /// New keys are refused while all callers' settled results hold this many bytes.
    pub total_bytes: u64,
}

impl Coordinator {
    fn claim_key(&self, of: KeyOf<'_>) -> String {
        // Lengths first: no caller, tool or key can make two triples one name.
        let rest = format!("{}:{}:{}:{}:{}", of.caller.len(), of.caller, of.tool.len(), of.tool, of.key);
        self.key("idem", &rest)
    }

    /// `idem-usage`, `idem-active` and `idem-total`: every caller's bytes, when each last
    /// settled, and the total.
    fn shared_counts(&self) -> [String; 3] {
        [self.key("idem-usage", ""), self.key("idem-active", ""), self.key("idem-total", "")]
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
            .key(self.shared_counts().as_slice())
            .arg(arguments)
            .arg(claim)
            .arg(keeping.keep.as_secs().max(1))
            .arg(keeping.abandoned_after.as_secs())
            .arg(keeping.total_bytes)
            .invoke_async(&mut conn)
            .await?;
        let mut found = found.into_iter();
        match (found.next().as_deref(), found.next()) {
            (Some("new"), None) => Ok(Claimed::New),
            (Some("other"), None) => Ok(Claimed::OtherArguments),
            (Some("running"), None) => Ok(Claimed::Running),
            (Some("full"), None) => Ok(Claimed::Full),
            (Some("result"), Some(result)) => Ok(Claimed::Result(result)),
            (first, _) => Err(CoordError::Unexpected(format!("an idempotency claim answered {first:?}"))),
        }
    }

    /// Keep the result of the call `claim` let run.
    pub async fn settle(
        &self,
        of: KeyOf<'_>,
        claim: &str,
        result: &str,
        keeping: Keeping,
    ) -> Result<Settled, CoordError> {
        let mut conn = self.connection();
        let kept: i64 = SETTLE
            .key(self.claim_key(of))
            .key(self.key("idem-settled", of.caller))
            .key(self.key("idem-sizes", of.caller))
            .key(self.shared_counts().as_slice())
            .arg(claim)
            .arg(result)
            .arg(keeping.keep.as_secs().max(1))
            .arg(keeping.max_keys)
            .arg(of.caller)
            .arg(keeping.caller_bytes)
            .invoke_async(&mut conn)
            .await?;
        Ok(match kept {
            1 => Settled::Kept,
            2 => Settled::TooLarge,
            _ => Settled::Gone,
        })
    }

    /// Free the key of a call that failed (or was abandoned), so a retry runs.
    pub async fn free(&self, of: KeyOf<'_>, claim: &str) -> Result<(), CoordError> {
        let mut conn = self.connection();
        let _: i64 = FREE.key(self.claim_key(of)).arg(claim).invoke_async(&mut conn).await?;
        Ok(())
    }
}
