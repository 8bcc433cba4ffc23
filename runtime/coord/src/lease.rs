//! Leases: work that one replica at a time should do (pruning provenance) is done by whoever
//! holds its lease. A lease is a key holding its holder's id, taken when free and renewed by its
//! holder; it lapses `ttl` after its last renewal, so a replica that dies frees it.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::{CoordError, Coordinator};

/// Take the lease if free, renew it if ours; 1 when we hold it after this.
static TAKE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local holder = redis.call('GET', KEYS[1])
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
elseif holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
",
    )
});

impl Coordinator {
    /// Hold the lease `name` for `ttl` more (taking it if no one holds it); whether this replica
    /// holds it now.
    pub async fn lease(&self, name: &str, ttl: Duration) -> Result<bool, CoordError> {
        let mut conn = self.connection();
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let held: i64 =
            TAKE.key(self.key("lease", name)).arg(&self.inner.replica).arg(ms).invoke_async(&mut conn).await?;
        Ok(held == 1)
    }
}
