//! Budget windows: one hash per caller (`since`, `tokens`, `usd`), charged by one script that
//! renews an ended window, checks the limit and adds the cost — atomically, so N replicas hand a
//! caller one budget, not N. The hash expires when its window ends.

use std::sync::LazyLock;

use redis::Script;

use crate::{CoordError, Coordinator};

/// Renew the window if it ended (or the clock went back before it began), refuse a cost over
/// the limit, else add it (ARGV[6] = 1: only say whether it would fit, and write nothing). A
/// limit of -1 is no limit. Returns `{admitted, since_ms, tokens,
/// usd, now_ms}`; dollars as text (a Lua number would be truncated to an integer).
static CHARGE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local v = redis.call('HMGET', KEYS[1], 'since', 'tokens', 'usd')
local since, tokens, usd = tonumber(v[1]), tonumber(v[2]) or 0, tonumber(v[3]) or 0
if since == nil or now - since >= window or now < since then
  since, tokens, usd = now, 0, 0
end
local cost_tokens, cost_usd = tonumber(ARGV[2]), tonumber(ARGV[3])
local max_tokens, max_usd = tonumber(ARGV[4]), tonumber(ARGV[5])
if (max_tokens >= 0 and tokens + cost_tokens > max_tokens) or (max_usd >= 0 and usd + cost_usd > max_usd + 1e-9) then
  return {0, since, tostring(tokens), tostring(usd), now}
end
if ARGV[6] == '1' then return {1, since, string.format('%.0f', tokens), string.format('%.17g', usd), now} end
tokens, usd = tokens + cost_tokens, usd + cost_usd
redis.call('HSET', KEYS[1], 'since', since, 'tokens', string.format('%.0f', tokens), 'usd', string.format('%.17g', usd))
redis.call('PEXPIREAT', KEYS[1], since + window)
return {1, since, string.format('%.0f', tokens), string.format('%.17g', usd), now}
",
    )
});

/// One charge to decide.
#[derive(Debug, Clone, Copy)]
pub struct Charge<'a> {
    /// Who pays (as the ledger names callers).
    pub caller: &'a str,
    /// The window's length.
    pub window_ms: i64,
    pub tokens: u64,
    pub usd: f64,
    /// The caller's limits (`None`: that side unlimited).
    pub max_tokens: Option<u64>,
    pub max_usd: Option<f64>,
    /// Only say whether it would fit (a dry run): nothing is added.
    pub peek: bool,
}

/// The caller's window after the charge (or before it, when refused).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spending {
    /// The charge fit and was added.
    pub admitted: bool,
    /// When the window began (Unix ms, Redis' clock).
    pub since_ms: i64,
    /// The Redis server's clock now (Unix ms).
    pub now_ms: i64,
    pub tokens: u64,
    pub usd: f64,
}

impl Coordinator {
    /// Charge, or refuse, in one round trip.
    pub async fn charge(&self, charge: Charge<'_>) -> Result<Spending, CoordError> {
        let mut conn = self.connection();
        let limit = |max: Option<String>| max.unwrap_or_else(|| "-1".to_owned());
        let (admitted, since_ms, tokens, usd, now_ms): (i64, i64, String, String, i64) = CHARGE
            .key(self.key("budget", charge.caller))
            .arg(charge.window_ms)
            .arg(charge.tokens)
            .arg(charge.usd)
            .arg(limit(charge.max_tokens.map(|max| max.to_string())))
            .arg(limit(charge.max_usd.map(|max| max.to_string())))
            .arg(u8::from(charge.peek))
            .invoke_async(&mut conn)
            .await?;
        let unexpected = |what: &str| CoordError::Unexpected(format!("budget {what} {tokens:?} / {usd:?}"));
        Ok(Spending {
            admitted: admitted == 1,
            since_ms,
            now_ms,
            tokens: tokens.parse::<f64>().map_err(|_| unexpected("tokens"))? as u64,
            usd: usd.parse().map_err(|_| unexpected("dollars"))?,
        })
    }
}
