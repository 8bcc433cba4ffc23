//! Task records (MCP tasks) shared by the replicas: one hash per task, its fields as the caller
//! names them, with a version that every write checks and bumps (a write that lost a race is
//! told so and redone by its caller); the running tasks of each owner in a sorted set by expiry
//! (their count is the owner's cap), and every running task in one sorted set by lease (what a
//! replica that died left behind is found there). A record expires with its hash.

use std::collections::HashMap;
use std::sync::LazyLock;

use redis::Script;

use crate::{CoordError, Coordinator};

/// Write a task's fields if its version is still `ARGV[1]` (`''`: it must not exist yet), and —
/// for a new running task — its owner has fewer than `ARGV[4]` running (pruned of expired ones
/// first); a new task past the owner's `ARGV[9]` kept records drops its oldest ended ones.
/// `ARGV`: expected version, expiry (ms), lease (ms), cap (0: none), running (0/1), now (ms), id,
/// whether to set the idempotency index ('1'), most kept, the tasks' key prefix, then field,
/// value pairs. `KEYS`: the hash, the owner's running set, the leases, the idempotency index, the
/// owner's kept set. -1 written, -2 lost the race, n ≥ 0 the owner's running count (full).
static PUT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local version = redis.call('HGET', KEYS[1], 'v')
if ARGV[1] == '' then
  if version then return -2 end
elseif version ~= ARGV[1] then
  return -2
end
local expires, lease, cap, running, now, id = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]), ARGV[7]
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
if ARGV[1] == '' and running == '1' and cap > 0 then
  local live = redis.call('ZCARD', KEYS[2])
  if live >= cap then return live end
end
redis.call('DEL', KEYS[1])
local next = 1
if version then next = tonumber(version) + 1 end
redis.call('HSET', KEYS[1], 'v', next)
for i = 11, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIREAT', KEYS[1], expires)
if running == '1' then
  redis.call('ZADD', KEYS[2], expires, id)
  if ARGV[1] == '' then redis.call('ZADD', KEYS[3], lease, id) end
else
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
end
redis.call('PEXPIREAT', KEYS[2], expires, 'GT')
if ARGV[8] == '1' then redis.call('SET', KEYS[4], id, 'PXAT', expires) end
if ARGV[1] == '' then
  redis.call('ZADD', KEYS[5], expires, id)
  redis.call('PEXPIREAT', KEYS[5], expires, 'GT')
  local over = redis.call('ZCARD', KEYS[5]) - tonumber(ARGV[9])
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
      if over <= 0 then break end
      local status = redis.call('HGET', ARGV[10] .. old, 'status')
      if not status or status == 'completed' or status == 'failed' or status == 'cancelled' then
        redis.call('DEL', ARGV[10] .. old)
        redis.call('ZREM', KEYS[5], old)
        over = over - 1
      end
    end
  end
end
return -1
",
    )
});

/// What a write of a task's record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    Written,
    /// Another write came first (or the task exists already / no longer): read it again.
    Lost,
    /// The owner has this many running: no new one.
    Full(usize),
}

/// One write of a task's record ([`Coordinator::task_put`]).
#[derive(Debug, Clone)]
pub struct TaskWrite<'a> {
    pub id: &'a str,
    /// Who may read it: its running tasks are counted together.
    pub owner: &'a str,
    /// The version read (`None`: a new task).
    pub version: Option<u64>,
    /// Every field of the record (the hash is replaced).
    pub fields: Vec<(String, String)>,
    /// When it expires, and (a new running task) until when its lease holds, in milliseconds.
    pub expires_ms: i64,
    pub lease_ms: i64,
    /// Whether it is still running (working or waiting for input).
    pub running: bool,
    /// The owner's most running tasks (checked for a new one).
    pub cap: usize,
    /// The owner's most records (a new one drops the oldest ended past it).
    pub kept: usize,
    /// The idempotency index to point at it (`tool`, `key`).
    pub keyed: Option<(&'a str, &'a str)>,
    pub now_ms: i64,
}

impl Coordinator {
    fn task_key(&self, id: &str) -> String {
        self.key("task", id)
    }

    fn running_key(&self, owner: &str) -> String {
        self.key("tasks-running", owner)
    }

    fn kept_key(&self, owner: &str) -> String {
        self.key("tasks-kept", owner)
    }

    fn leases_key(&self) -> String {
        self.key("tasks-leases", "")
    }

    fn keyed_key(&self, owner: &str, tool: &str, key: &str) -> String {
        // Lengths first: no owner, tool or key can make two triples one name.
        self.key("task-key", &format!("{}:{owner}:{}:{tool}:{key}", owner.len(), tool.len()))
    }

    /// Write a task's record (see [`TaskWrite`]).
    pub async fn task_put(&self, write: TaskWrite<'_>) -> Result<Put, CoordError> {
        let mut conn = self.connection();
        let (tool, key) = write.keyed.unwrap_or_default();
        let mut script = PUT.key(self.task_key(write.id));
        script
            .key(self.running_key(write.owner))
            .key(self.leases_key())
            .key(self.keyed_key(write.owner, tool, key))
            .key(self.kept_key(write.owner))
            .arg(write.version.map(|v| v.to_string()).unwrap_or_default())
            .arg(write.expires_ms)
            .arg(write.lease_ms)
            .arg(write.cap)
            .arg(if write.running { "1" } else { "0" })
            .arg(write.now_ms)
            .arg(write.id)
            .arg(if write.keyed.is_some() { "1" } else { "0" })
            .arg(write.kept)
            .arg(self.task_key(""));
        for (field, value) in &write.fields {
            script.arg(field).arg(value);
        }
        let answer: i64 = script.invoke_async(&mut conn).await?;
        Ok(match answer {
            -1 => Put::Written,
            -2 => Put::Lost,
            n => Put::Full(usize::try_from(n).unwrap_or(usize::MAX)),
        })
    }

    /// A task's record and its version; `None` when there is none (or it expired).
    pub async fn task_get(&self, id: &str) -> Result<Option<(u64, HashMap<String, String>)>, CoordError> {
        let mut conn = self.connection();
        let mut fields: HashMap<String, String> =
            redis::cmd("HGETALL").arg(self.task_key(id)).query_async(&mut conn).await?;
        let Some(version) = fields.remove("v") else { return Ok(None) };
        let version = version.parse().map_err(|_| CoordError::Unexpected(format!("a task's version `{version}`")))?;
        Ok(Some((version, fields)))
    }

    /// How many of `owner`'s tasks are running.
    pub async fn task_running(&self, owner: &str, now_ms: i64) -> Result<usize, CoordError> {
        let mut conn = self.connection();
        let (_, count): (i64, usize) = redis::pipe()
            .atomic()
            .cmd("ZREMRANGEBYSCORE")
            .arg(self.running_key(owner))
            .arg("-inf")
            .arg(now_ms)
            .cmd("ZCARD")
            .arg(self.running_key(owner))
            .query_async(&mut conn)
            .await?;
        Ok(count)
    }

    /// The task `owner` created for `tool` with idempotency key `key`, if one is kept.
    pub async fn task_keyed(&self, owner: &str, tool: &str, key: &str) -> Result<Option<String>, CoordError> {
        let mut conn = self.connection();
        Ok(redis::cmd("GET").arg(self.keyed_key(owner, tool, key)).query_async(&mut conn).await?)
    }

    /// The leases of `ids` (running tasks) hold until `lease_ms`.
    pub async fn task_renew(&self, ids: &[String], lease_ms: i64) -> Result<(), CoordError> {
        let mut conn = self.connection();
        let mut pipe = redis::pipe();
        for id in ids {
            pipe.cmd("ZADD").arg(self.leases_key()).arg("XX").arg(lease_ms).arg(id).ignore();
        }
        pipe.query_async::<()>(&mut conn).await?;
        Ok(())
    }

    /// The running tasks whose lease lapsed before `now_ms` (at most `limit`).
    pub async fn task_lapsed(&self, now_ms: i64, limit: usize) -> Result<Vec<String>, CoordError> {
        let mut conn = self.connection();
        Ok(redis::cmd("ZRANGEBYSCORE")
            .arg(self.leases_key())
            .arg("-inf")
            .arg(format!("({now_ms}"))
            .arg("LIMIT")
            .arg(0)
            .arg(limit)
            .query_async(&mut conn)
            .await?)
    }

    /// Forget task `id`'s lease (its record is gone: it expired).
    pub async fn task_forget(&self, id: &str) -> Result<(), CoordError> {
        let mut conn = self.connection();
        let _: i64 = redis::cmd("ZREM").arg(self.leases_key()).arg(id).query_async(&mut conn).await?;
        Ok(())
    }
}
