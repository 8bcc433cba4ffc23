//! `[http]` and `[auth] anonymous`: where HTTP listens, whom it lets in, and the bounds that keep
//! a client from holding it.

use std::net::SocketAddr;
use std::time::Duration;

use trails_core::auth::{TokenEntry, TokenTable};

use super::file::{AuthConfig, HttpConfig};
use super::{scopes, within, ConfigError, Env};

/// Where HTTP listens when neither `[http] bind` nor `TRAILS_HTTP_BIND` says.
pub const DEFAULT_HTTP_BIND: &str = "127.0.0.1:8080";
/// Largest request body accepted when `[http] max_body_bytes` is unset.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Connections served at once when `[http] max_connections` is unset.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Largest request head when `[http] max_header_bytes` is unset.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 16 * 1024;
/// Most concurrent MCP sessions when `[http] max_sessions` is unset.
pub const DEFAULT_MAX_SESSIONS: usize = 1000;

/// `[http]` and `[auth] anonymous`, validated, with their `TRAILS_*` overrides.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpSettings {
    /// The listen address.
    pub bind: SocketAddr,
    /// `Host` values accepted besides the loopback names.
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted.
    pub allowed_origins: Vec<String>,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// Keep MCP sessions for 2025-* clients.
    pub sessions: bool,
    /// Answer stateless `tools/list`, `tools/call` and resource requests without rmcp.
    pub hot_path: bool,
    /// `[http] invoke`: serve `POST /invoke/{id}` and `GET /openapi.json`.
    pub invoke_enabled: bool,
    /// `[http] shapes`: serve `GET /shapes.ttl` and `GET /shapes/{name}`.
    pub shapes_enabled: bool,
    /// Most concurrent MCP sessions (and as many `subscriptions/listen` requests besides).
    pub max_sessions: usize,
    /// How long a session may go without a client request before it expires (its notifications
    /// are held back from then on, so they cannot keep an abandoned session alive).
    pub session_idle: Duration,
    /// Sessions anonymous callers may hold together.
    pub max_anonymous_sessions: usize,
    /// Time a new session has to send `notifications/initialized`.
    pub session_init: Duration,
    /// Connections served at once.
    pub max_connections: usize,
    /// Time to receive a request head (and the longest a keep-alive connection idles).
    pub header_timeout: Duration,
    /// Time to receive a request body.
    pub body_timeout: Duration,
    /// Largest request head.
    pub max_header_bytes: usize,
    /// Time requests in flight get to finish once shutdown starts.
    pub shutdown_grace: Duration,
    /// `[[http.tokens]]`, hashed.
    #[cfg_attr(not(any(feature = "http", feature = "testing")), allow(dead_code))]
    pub(crate) tokens: TokenTable,
    /// `[http] public_url`: how clients reach this server.
    pub public_url: Option<String>,
    /// `[auth] anonymous`: requests without a token are served (as the anonymous caller).
    pub anonymous: bool,
}

impl HttpSettings {
    pub(super) fn resolve(http: HttpConfig, auth: &AuthConfig, env: &Env) -> Result<HttpSettings, ConfigError> {
        let mut entries = Vec::new();
        for (index, token) in http.tokens.iter().enumerate() {
            if token.name.trim().is_empty() {
                // Provenance, budgets and idempotency keys name the caller by it.
                let expected = "a name: logs, provenance, budgets and idempotency keys name the caller by it";
                return Err(ConfigError::Value { key: "[[http.tokens]] name", value: token.name.clone(), expected });
            }
            if http.tokens[..index].iter().any(|earlier| earlier.name == token.name) {
                // A session belongs to the token name that opened it, and provenance names the
                // caller by it: two tokens with one name would be one caller.
                let expected = "a name no other token has";
                return Err(ConfigError::Value { key: "[[http.tokens]] name", value: token.name.clone(), expected });
            }
            let granted = scopes(&format!("token `{}`", token.name), token.scopes.iter().map(String::as_str))?;
            entries.push(TokenEntry::from_hex(&token.name, &token.sha256, granted)?);
        }
        let bind = match env.get("TRAILS_HTTP_BIND") {
            Some(value) => match value.parse() {
                Ok(addr) => addr,
                Err(e) => return Err(ConfigError::Env { name: "TRAILS_HTTP_BIND", value, expected: format!("{e}") }),
            },
            None => http.bind.unwrap_or_else(|| DEFAULT_HTTP_BIND.parse().expect("valid default")),
        };
        let seconds = |key, value, default, range, expected| {
            within(key, value, default, range, expected).map(Duration::from_secs)
        };
        let session_idle =
            seconds("[http] session_idle_secs", http.session_idle_secs, 300, 1..=86_400, "1 to 86400 seconds")?;
        // Up to an hour; only the grace period may be 0 (exit at once).
        let hour = "1 to 3600 seconds";
        let header_timeout = seconds("[http] header_timeout_secs", http.header_timeout_secs, 10, 1..=3600, hour)?;
        let body_timeout = seconds("[http] body_timeout_secs", http.body_timeout_secs, 30, 1..=3600, hour)?;
        let shutdown_grace =
            seconds("[http] shutdown_grace_secs", http.shutdown_grace_secs, 5, 0..=3600, "0 to 3600 seconds")?;
        let session_init = seconds("[http] session_init_secs", http.session_init_secs, 10, 1..=3600, hour)?;
        let max_sessions = http.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS);
        let max_anonymous_sessions = match http.max_anonymous_sessions {
            None => max_sessions.div_ceil(2),
            Some(n) if n <= max_sessions => n,
            Some(n) => {
                let expected = "at most [http] max_sessions (0 refuses anonymous sessions)";
                let key = "[http] max_anonymous_sessions";
                return Err(ConfigError::Value { key, value: n.to_string(), expected });
            }
        };
        let max_connections = within(
            "[http] max_connections",
            http.max_connections,
            DEFAULT_MAX_CONNECTIONS,
            1..=1_000_000,
            "1 to 1000000",
        )?;
        let max_header_bytes = within(
            "[http] max_header_bytes",
            http.max_header_bytes,
            DEFAULT_MAX_HEADER_BYTES,
            8192..=1_048_576,
            "8192 to 1048576 (hyper reads heads in at least 8 KiB)",
        )?;
        Ok(HttpSettings {
            bind,
            // An empty variable is an unset one (as `KEY=` in a compose file means).
            allowed_hosts: match env.get("TRAILS_HTTP_ALLOWED_HOSTS").filter(|list| !list.trim().is_empty()) {
                Some(list) => list.split(',').map(str::trim).filter(|h| !h.is_empty()).map(str::to_owned).collect(),
                None => http.allowed_hosts,
            },
            allowed_origins: http.allowed_origins,
            max_body_bytes: http.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
            sessions: http.sessions.unwrap_or(true),
            hot_path: http.hot_path.unwrap_or(true),
            invoke_enabled: http.invoke.unwrap_or(true),
            shapes_enabled: http.shapes.unwrap_or(true),
            max_sessions,
            session_idle,
            max_anonymous_sessions,
            session_init,
            max_connections,
            header_timeout,
            body_timeout,
            max_header_bytes,
            shutdown_grace,
            tokens: TokenTable::new(entries),
            public_url: public_url(env.get("TRAILS_HTTP_PUBLIC_URL").or(http.public_url))?,
            anonymous: auth.anonymous.unwrap_or(true),
        })
    }
}

/// `public_url` checked: an absolute `http(s)://` URL without query or fragment, trailing `/`
/// removed.
fn public_url(value: Option<String>) -> Result<Option<String>, ConfigError> {
    let Some(value) = value else { return Ok(None) };
    let url = value.trim().trim_end_matches('/').to_owned();
    let expected = "an http:// or https:// URL without query or fragment (how clients reach this server)";
    let ok = (url.starts_with("http://") || url.starts_with("https://"))
        && !url.contains(['?', '#', ' '])
        && url.parse::<http::Uri>().is_ok_and(|uri| uri.host().is_some_and(|h| !h.is_empty()));
    match ok {
        true => Ok(Some(url)),
        false => Err(ConfigError::Value { key: "[http] public_url", value, expected }),
    }
}
