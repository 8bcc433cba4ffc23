//! `[coordination]` (the `redis` feature).

use std::time::Duration;

use crate::config::{within, ConfigError, CoordinationConfig, Env};
use crate::part::{Assembly, BuildError, Part};

/// `[coordination]`: budgets, idempotency keys, the change feed and the pruning lease, shared
/// by the replicas in Redis.
pub(super) struct Coordination {
    url: String,
    /// `None`: `trails:<app name>:`.
    prefix: Option<String>,
    timeout: Duration,
    fail_open: bool,
}

impl Coordination {
    /// `None` when no URL is configured: each process keeps its own.
    pub(super) fn resolve(config: CoordinationConfig, env: &Env) -> Result<Option<Coordination>, ConfigError> {
        let Some(url) = super::redis_url(&config, env) else { return Ok(None) };
        let url = url.trim().to_owned();
        if !(url.starts_with("redis://") || url.starts_with("rediss://")) || url.parse::<http::Uri>().is_err() {
            return Err(ConfigError::Value {
                key: "[coordination] url",
                // The password never reaches a log (and a malformed URL is not parsed for it).
                value: match url.contains('@') {
                    true => "<a URL with credentials, not shown>".to_owned(),
                    false => url,
                },
                expected: "a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379",
            });
        }
        let timeout_ms = within("[coordination] timeout_ms", config.timeout_ms, 1000, 10..=60_000, "10 to 60000")?;
        if config.prefix.as_deref().is_some_and(|p| p.is_empty() || p.len() > 200) {
            return Err(ConfigError::Value {
                key: "[coordination] prefix",
                value: config.prefix.unwrap_or_default(),
                expected: "1 to 200 bytes",
            });
        }
        Ok(Some(Coordination {
            url,
            prefix: config.prefix,
            timeout: Duration::from_millis(timeout_ms),
            fail_open: config.fail_open.unwrap_or(false),
        }))
    }
}

impl Part for Coordination {
    fn name(&self) -> &'static str {
        "coordination"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let options = trails_coord::Options {
            prefix: self.prefix.unwrap_or_else(|| format!("trails:{}:", assembly.app_name())),
            url: self.url,
            timeout: self.timeout,
        };
        let replicas = crate::state::Replicas::connect(options, self.fail_open).map_err(BuildError::Coordination)?;
        assembly.provide(replicas);
        Ok(())
    }
}
