//! What the replicas of one Trails server share, kept in Redis: budget windows ([`budget`]),
//! idempotency claims and results ([`claims`]), the change feed behind notifications ([`feed`]),
//! leases ([`lease`]) and MCP tasks' records ([`tasks`]). Every step that must be atomic across replicas is one Lua script (one
//! round trip), and every clock reading is the Redis server's (`TIME`), so replicas whose clocks
//! differ still agree on when a window ends or a key expires.
//!
//! This crate knows Redis and nothing of Trails: callers, tools and feed entries are strings. The
//! governance guards and the serving layer map them to and from their own types.
//!
//! Redis is used as a single instance (or a primary with replicas that fail over): scripts touch
//! keys they derive, which Redis Cluster would refuse.

pub mod budget;
pub mod claims;
pub mod feed;
pub mod lease;
pub mod tasks;

use std::sync::Once;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// Why coordination failed.
#[derive(Debug, thiserror::Error)]
pub enum CoordError {
    /// `[coordination] url` is not a Redis URL.
    #[error("`[coordination] url` is not a Redis URL ({url}): {detail}")]
    Url {
        /// The URL, its password hidden.
        url: String,
        detail: String,
    },
    /// Redis could not be reached (at start, or since).
    #[error("Redis at {url} is unreachable: {detail}")]
    Unreachable {
        /// The URL, its password hidden.
        url: String,
        detail: String,
    },
    /// A command failed.
    #[error("Redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// Redis answered something this version does not read (another program's key?).
    #[error("Redis answered what this version cannot read: {0}")]
    Unexpected(String),
}

impl CoordError {
    /// Whether the failure is Redis being out of reach (or too slow) rather than a refusal: the
    /// caller may retry, and a fail-open set-up may go on without it.
    pub fn is_unavailable(&self) -> bool {
        match self {
            CoordError::Unreachable { .. } => true,
            CoordError::Redis(error) => {
                error.is_io_error()
                    || error.is_timeout()
                    || error.is_connection_dropped()
                    || error.is_connection_refusal()
                    || matches!(error.kind(), redis::ErrorKind::Server(redis::ServerErrorKind::BusyLoading))
            }
            _ => false,
        }
    }
}

/// How often an idle connection is checked.
const KEEPALIVE: Duration = Duration::from_secs(1);

/// How to reach Redis.
#[derive(Debug, Clone)]
pub struct Options {
    /// `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS.
    pub url: String,
    /// Put before every key this server writes, so several apps can share one Redis.
    pub prefix: String,
    /// How long one command may take before it counts as Redis being unavailable.
    pub timeout: Duration,
}

/// One replica's connection to what the replicas share. Cheap to clone: clones share the
/// connection.
#[derive(Clone)]
pub struct Coordinator {
    inner: std::sync::Arc<Inner>,
}

struct Inner {
    client: redis::Client,
    manager: ConnectionManager,
    prefix: String,
    replica: String,
    url: String,
    timeout: Duration,
}

impl std::fmt::Debug for Coordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coordinator").field("url", &self.inner.url).field("replica", &self.inner.replica).finish()
    }
}

impl Coordinator {
    /// Connect, and check Redis answers (a start with Redis unreachable is refused: replicas
    /// that cannot share their state must not serve as though they did).
    pub async fn connect(options: Options) -> Result<Coordinator, CoordError> {
        let url = redacted(&options.url);
        if options.url.starts_with("rediss://") {
            install_crypto_provider();
        }
        let client = redis::Client::open(options.url.as_str())
            .map_err(|error| CoordError::Url { url: url.clone(), detail: error.to_string() })?;
        // Reconnects after a failure (on the runtime of the call that met it); a command meanwhile
        // waits for that reconnection, so a call waits a few `timeout`s at most on a Redis that
        // went away.
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.timeout))
            .set_response_timeout(Some(options.timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_secs(2));
        let unreachable =
            |error: redis::RedisError| CoordError::Unreachable { url: url.clone(), detail: error.to_string() };
        let mut manager = client.get_connection_manager_with_config(config).await.map_err(unreachable)?;
        let _: String = redis::cmd("PING").query_async(&mut manager).await.map_err(unreachable)?;
        let inner = Inner {
            client,
            manager,
            prefix: options.prefix,
            replica: uuid::Uuid::new_v4().simple().to_string(),
            url,
            timeout: options.timeout,
        };
        let inner = std::sync::Arc::new(inner);
        // The manager notices a lost connection only when a command fails on it, and reconnects
        // then: ping now and then, so that after Redis comes back the first call that needs it
        // finds a live connection instead of failing on the dead one. Until the last clone goes.
        let held = std::sync::Arc::downgrade(&inner);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(KEEPALIVE).await;
                let Some(inner) = held.upgrade() else { break };
                let mut conn = inner.manager.clone();
                drop(inner);
                let _ = redis::cmd("PING").query_async::<String>(&mut conn).await;
            }
        });
        Ok(Coordinator { inner })
    }

    /// This replica's id (random per process): the origin of its feed entries, the holder of
    /// its leases.
    pub fn replica(&self) -> &str {
        &self.inner.replica
    }

    /// The URL, its password hidden.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    fn key(&self, kind: &str, rest: &str) -> String {
        format!("{}{kind}:{rest}", self.inner.prefix)
    }

    fn connection(&self) -> ConnectionManager {
        self.inner.manager.clone()
    }
}

/// `url` with its password (if any) replaced by `***`, fit for logs and errors.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let user = rest[..at].split(':').next().unwrap_or_default();
            let hidden = if rest[..at].contains(':') { format!("{user}:***") } else { user.to_owned() };
            format!("{scheme}://{hidden}@{}", &rest[at + 1..])
        }
        None => url.to_owned(),
    }
}

/// `rediss://` runs rustls, which needs a process-wide crypto provider: aws-lc-rs, the one the
/// rest of the server uses. (Installing fails harmlessly when one is already installed.)
fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn passwords_never_reach_logs() {
        assert_eq!(redacted("redis://:s3cret@host:6379/0"), "redis://:***@host:6379/0");
        assert_eq!(redacted("rediss://app:s3cret@host"), "rediss://app:***@host");
        assert_eq!(redacted("redis://host:6379"), "redis://host:6379");
        assert_eq!(redacted("redis://app@host"), "redis://app@host");
        assert_eq!(redacted("redis://u:p%40ss@host/1"), "redis://u:***@host/1");
    }
}
