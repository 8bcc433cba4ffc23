//! Configuration: `trails.toml` (the [`Config`] sections, unknown keys refused) plus `TRAILS_*`
//! environment overrides, resolved and validated once into [`Settings`]. Every failure is a
//! [`ConfigError`] that names the file, key or variable to fix.

mod file;
mod oauth;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use file::{
    AuthConfig, BudgetConfig, CapabilityConfig, Config, CoordinationConfig, HttpConfig, IdempotencyConfig,
    IntrospectionConfig, KgConfig, ManifestConfig, McpConfig, OAuthConfig, PolicyConfig, ProjectConfig,
    TelemetryConfig, TokenBudget, TokenConfig, ValidationErrors,
};
#[cfg(feature = "oauth")]
pub(crate) use oauth::OAuthSettings;

use trails_core::auth::{BadTokenHash, ScopeSet, TokenEntry, TokenTable, UnknownScope};

/// The sections of `trails.toml` the server itself reads (the fields of [`Config`]); any other
/// belongs to a part (`trails::part`).
pub const SECTIONS: &[&str] = &[
    "project",
    "mcp",
    "http",
    "capability",
    "kg",
    "policy",
    "budget",
    "idempotency",
    "auth",
    "telemetry",
    "coordination",
];

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
/// Most resources one subscriber watches when `[mcp] max_subscriptions` is unset.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 64;
/// Most notifications waiting per subscriber when `[mcp] subscription_queue` is unset.
pub const DEFAULT_SUBSCRIPTION_QUEUE: usize = 256;
/// Most characters one `trails.kg.*` result carries when `[mcp] tool_window_chars` is unset.
pub const DEFAULT_TOOL_WINDOW_CHARS: usize = 4096;

/// Largest tool result when `[mcp] max_result_bytes` is unset: room for four instances at
/// [`DEFAULT_MAX_INSTANCE_BYTES`], and about 250k tokens — more than a model should read at once.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1024 * 1024;
pub use trails_governance::budget::{BudgetLimit, BudgetSettings};
/// Why the Cedar policy files (`[policy] files`) could not be loaded.
#[cfg(feature = "cedar")]
pub use trails_governance::policy::PolicyError;
pub use trails_kg::DEFAULT_MAX_INSTANCE_BYTES;

/// Why configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file named by `--config` / `TRAILS_CONFIG` could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or has an unknown key or a value of the wrong type.
    #[error("{}{source}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Parse {
        /// The file, when one was read.
        path: Option<PathBuf>,
        /// The TOML parser's error (line, column, key).
        source: toml::de::Error,
    },
    /// A value in the file outside its domain.
    #[error("{key} = `{value}`: {expected}")]
    Value {
        /// The key, with its table (`[project] env`).
        key: &'static str,
        /// What it held.
        value: String,
        /// What it may hold.
        expected: &'static str,
    },
    /// A scope list in the file or `TRAILS_MCP_SCOPES`.
    #[error("{what}: {source}")]
    Scope {
        /// Which setting held it.
        what: String,
        /// The unknown scope.
        source: UnknownScope,
    },
    /// A part's section (`[name]`) with a key or value the part does not accept.
    #[error("[{section}]: {message}")]
    Section {
        /// The section.
        section: String,
        /// What the part's reading of it said.
        message: String,
    },
    /// A section no part of this server reads.
    #[error("[{section}] is not a section of this server's trails.toml{}", nearest.as_ref().map(|n| format!(": did you mean [{n}]?")).unwrap_or_default())]
    UnknownSection {
        /// The section.
        section: String,
        /// The section read that is spelt nearest to it, if any is near.
        nearest: Option<String>,
    },
    /// A `[[http.tokens]]` hash.
    #[error(transparent)]
    TokenHash(#[from] BadTokenHash),
    /// An environment variable with a value outside its domain.
    #[error("{name}=`{value}`: {expected}")]
    Env {
        /// The variable.
        name: &'static str,
        /// What it held.
        value: String,
        /// What it may hold.
        expected: String,
    },
}

/// Everything the server needs, validated.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Settings {
    /// `TRAILS_ENV=production` / `[project] env`: `dev` tools are hidden entirely.
    pub production: bool,
    /// Scopes this process serves at most.
    pub process_scopes: ScopeSet,
    /// The stdio token (`TRAILS_MCP_TOKEN`), hashed.
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) stdio_token: Option<TokenTable>,
    /// `[[http.tokens]]`, hashed.
    #[cfg_attr(not(any(feature = "http", feature = "testing")), allow(dead_code))]
    pub(crate) http_tokens: TokenTable,
    /// A denied tool answers exactly like an unknown one.
    pub mask_denied: bool,
    /// How validation failures reach the client.
    pub validation_errors: ValidationErrors,
    /// The HTTP listen address.
    pub http_bind: SocketAddr,
    /// `Host` values accepted besides the loopback names.
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted.
    pub allowed_origins: Vec<String>,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// Keep MCP sessions for 2025-* clients.
    pub http_sessions: bool,
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
    pub session_idle: std::time::Duration,
    /// Sessions anonymous callers may hold together.
    pub max_anonymous_sessions: usize,
    /// Time a new session has to send `notifications/initialized`.
    pub session_init: std::time::Duration,
    /// Connections served at once.
    pub max_connections: usize,
    /// Time to receive a request head (and the longest a keep-alive connection idles).
    pub header_timeout: std::time::Duration,
    /// Time to receive a request body.
    pub body_timeout: std::time::Duration,
    /// Largest request head.
    pub max_header_bytes: usize,
    /// Time requests in flight get to finish once shutdown starts.
    pub shutdown_grace: std::time::Duration,
    /// Most resources one subscriber watches.
    pub max_subscriptions: usize,
    /// Most notifications waiting per subscriber (drop-oldest beyond).
    pub subscription_queue: usize,
    /// Most characters of text one `trails.kg.*` tool result carries.
    pub tool_window_chars: usize,
    /// Largest tool result, in bytes of JSON text.
    pub max_result_bytes: usize,
    /// Serve the capability manifest.
    pub manifest_enabled: bool,
    /// The embedded store's data directory.
    pub kg_path: PathBuf,
    /// Base IRI of instances.
    pub kg_base: String,
    /// How hard the embedded store syncs a commit.
    pub kg_synchronous: trails_kg::Synchronous,
    /// A remote store to serve instead of the embedded one.
    pub kg_remote: Option<RemoteKg>,
    /// Heaviest instance the store accepts, when configured (unset: the store's own bound).
    pub kg_max_instance_bytes: Option<usize>,
    /// Provenance activities kept at most.
    pub provenance_keep: usize,
    /// Provenance older than this is dropped.
    pub provenance_max_age: chrono::Duration,
    /// `[policy] files`: Cedar policies.
    pub policy_files: Vec<PathBuf>,
    /// `[policy] entities`: Cedar entities JSON.
    pub policy_entities: Option<PathBuf>,
    /// `[budget]` and the tokens' own budgets.
    pub budget: BudgetSettings,
    /// `[idempotency] retention_secs`.
    pub idempotency_retention: Duration,
    /// `[idempotency] max_keys`.
    pub idempotency_max_keys: usize,
    /// `[http] public_url`: how clients reach this server.
    pub public_url: Option<String>,
    /// `[auth.oauth]`: the OAuth resource server.
    pub(crate) oauth: Option<oauth::OAuthSettings>,
    /// `[telemetry]` and the `OTEL_*` variables.
    pub(crate) telemetry: Telemetry,
    /// `[auth] anonymous`: HTTP requests without a token are served (as the anonymous caller).
    pub anonymous_http: bool,
    /// `[coordination]`: Redis, shared by the replicas.
    pub(crate) coordination: Option<Coordination>,
    /// The sections the parts read (`trails::part::Assembly::section`).
    pub(crate) sections: toml::Table,
}

/// `[coordination]`, resolved.
#[derive(Clone)]
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) struct Coordination {
    pub(crate) url: String,
    /// `None`: `trails:<app name>:`.
    pub(crate) prefix: Option<String>,
    pub(crate) timeout: Duration,
    pub(crate) fail_open: bool,
}

impl std::fmt::Debug for Coordination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The password never reaches a log.
        f.debug_struct("Coordination")
            .field("url", &redacted_url(&self.url))
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .field("fail_open", &self.fail_open)
            .finish()
    }
}

/// `url` as it may be shown: not at all when it may hold credentials (no parsing: a malformed
/// URL must not leak its password either).
fn redacted_url(url: &str) -> String {
    match url.contains('@') {
        true => "<a URL with credentials, not shown>".to_owned(),
        false => url.to_owned(),
    }
}

/// Where OpenTelemetry exports to, if anywhere.
#[derive(Debug, Clone, Default)]
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) struct Telemetry {
    /// `[telemetry] otlp_endpoint`, the base URL.
    pub(crate) endpoint: Option<String>,
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (the exporter
    /// reads it itself).
    pub(crate) from_env: bool,
    pub(crate) service_name: Option<String>,
}

impl Telemetry {
    /// Export is asked for (and `OTEL_SDK_DISABLED` does not turn it off).
    pub(crate) fn wanted(&self) -> bool {
        self.endpoint.is_some() || self.from_env
    }
}

/// A budget window when `[budget] window_secs` is unset.
pub const DEFAULT_BUDGET_WINDOW: Duration = Duration::from_secs(3600);

/// A remote SPARQL 1.1 store's endpoints and credentials.
#[derive(Clone)]
pub struct RemoteKg {
    /// The query URL.
    pub query_url: String,
    /// The update URL.
    pub update_url: String,
    /// User and password for updates, if the endpoint needs them.
    pub credentials: Option<(String, String)>,
    /// PEM CA certificates trusted for `https://` besides the system's roots.
    pub ca_file: Option<PathBuf>,
}

impl std::fmt::Debug for RemoteKg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The password never reaches a log.
        f.debug_struct("RemoteKg")
            .field("query_url", &self.query_url)
            .field("update_url", &self.update_url)
            .field("user", &self.credentials.as_ref().map(|(user, _)| user))
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

/// Where the embedded store lives when neither `[kg] path` nor `TRAILS_KG_PATH` says.
pub const DEFAULT_KG_PATH: &str = "trails-data";

impl Default for Settings {
    fn default() -> Self {
        Settings::resolve(Config::default(), &|_| None).expect("defaults are valid")
    }
}

impl Config {
    /// Read and parse a `trails.toml`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
        Config::parse(&text).map_err(|error| match error {
            ConfigError::Parse { source, .. } => ConfigError::Parse { path: Some(path.to_owned()), source },
            other => other,
        })
    }

    /// Parse `trails.toml` text; unknown keys in its sections are errors. Sections besides
    /// [`SECTIONS`] are kept for the parts to read.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let parse_error = |source| ConfigError::Parse { path: None, source };
        let mut config: Config = toml::from_str(text).map_err(parse_error)?;
        let mut whole: toml::Table = toml::from_str(text).map_err(parse_error)?;
        whole.retain(|section: &str, _| !SECTIONS.contains(&section));
        config.sections = whole;
        Ok(config)
    }
}

fn scopes<'a>(what: &str, items: impl IntoIterator<Item = &'a str>) -> Result<ScopeSet, ConfigError> {
    ScopeSet::parse_list(items).map_err(|source| ConfigError::Scope { what: what.to_owned(), source })
}

impl Settings {
    /// Apply environment overrides (`env` looks a variable up) and validate.
    pub fn resolve(config: Config, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, ConfigError> {
        // An unknown environment name must not silently mean "not production" (dev tools served).
        const ENVIRONMENTS: &str = "use production or development";
        let production = match (env("TRAILS_ENV"), config.project.env) {
            (Some(value), _) => match value.as_str() {
                "production" => true,
                "development" => false,
                _ => return Err(ConfigError::Env { name: "TRAILS_ENV", value, expected: ENVIRONMENTS.to_owned() }),
            },
            (None, Some(value)) => match value.as_str() {
                "production" => true,
                "development" => false,
                _ => return Err(ConfigError::Value { key: "[project] env", value, expected: ENVIRONMENTS }),
            },
            (None, None) => false,
        };
        let process_scopes = match env("TRAILS_MCP_SCOPES") {
            Some(list) => scopes("TRAILS_MCP_SCOPES", list.split(','))?,
            None => match &config.mcp.scopes {
                Some(list) => scopes("[mcp] scopes", list.iter().map(String::as_str))?,
                None => ScopeSet::up_to(trails_core::auth::Scope::Runtime),
            },
        };
        let stdio_token = env("TRAILS_MCP_TOKEN")
            .filter(|t| !t.is_empty())
            .map(|token| TokenTable::new(vec![TokenEntry::from_plain("stdio", &token, process_scopes)]));
        let usd = |key: &'static str, value: Option<f64>| match value {
            Some(v) if !(v.is_finite() && v >= 0.0) => {
                Err(ConfigError::Value { key, value: v.to_string(), expected: "a number of dollars, 0 or more" })
            }
            v => Ok(v),
        };
        let window_secs = within(
            "[budget] window_secs",
            config.budget.window_secs,
            DEFAULT_BUDGET_WINDOW.as_secs(),
            1..=2_678_400,
            "1 to 2678400",
        )?;
        let mut budget = BudgetSettings {
            window: Duration::from_secs(window_secs),
            default: BudgetLimit { tokens: config.budget.tokens, usd: usd("[budget] usd", config.budget.usd)? },
            by_caller: std::collections::HashMap::new(),
        };
        for token in &config.http.tokens {
            if let Some(own) = token.budget {
                let limit = BudgetLimit { tokens: own.tokens, usd: usd("[[http.tokens]] budget.usd", own.usd)? };
                budget.by_caller.insert(token.name.clone(), limit);
            }
        }
        let mut entries = Vec::new();
        for (index, token) in config.http.tokens.iter().enumerate() {
            if token.name.trim().is_empty() {
                // Provenance, budgets and idempotency keys name the caller by it.
                let expected = "a name: logs, provenance, budgets and idempotency keys name the caller by it";
                return Err(ConfigError::Value { key: "[[http.tokens]] name", value: token.name.clone(), expected });
            }
            if config.http.tokens[..index].iter().any(|earlier| earlier.name == token.name) {
                // A session belongs to the token name that opened it, and provenance names the
                // caller by it: two tokens with one name would be one caller.
                let expected = "a name no other token has";
                return Err(ConfigError::Value { key: "[[http.tokens]] name", value: token.name.clone(), expected });
            }
            let granted = scopes(&format!("token `{}`", token.name), token.scopes.iter().map(String::as_str))?;
            entries.push(TokenEntry::from_hex(&token.name, &token.sha256, granted)?);
        }
        let validation_errors = match env("TRAILS_VALIDATION_ERRORS") {
            Some(value) => match value.as_str() {
                "tool_result" => ValidationErrors::ToolResult,
                "jsonrpc" => ValidationErrors::Jsonrpc,
                _ => {
                    let expected = "use jsonrpc or tool_result".to_owned();
                    return Err(ConfigError::Env { name: "TRAILS_VALIDATION_ERRORS", value, expected });
                }
            },
            None => config.mcp.validation_errors.unwrap_or_default(),
        };
        let mask_denied = match env("TRAILS_MASK_DENIED") {
            Some(v) => matches!(v.as_str(), "1" | "true" | "yes"),
            None => config.mcp.mask_denied,
        };
        let http_bind = match env("TRAILS_HTTP_BIND") {
            Some(value) => match value.parse() {
                Ok(addr) => addr,
                Err(e) => return Err(ConfigError::Env { name: "TRAILS_HTTP_BIND", value, expected: format!("{e}") }),
            },
            None => config.http.bind.unwrap_or_else(|| DEFAULT_HTTP_BIND.parse().expect("valid default")),
        };
        // Bounded above too: each is a per-subscriber memory (and per-write work) bound.
        let max_subscriptions = within(
            "[mcp] max_subscriptions",
            config.mcp.max_subscriptions,
            DEFAULT_MAX_SUBSCRIPTIONS,
            1..=4096,
            "1 to 4096",
        )?;
        let subscription_queue = within(
            "[mcp] subscription_queue",
            config.mcp.subscription_queue,
            DEFAULT_SUBSCRIPTION_QUEUE,
            1..=4096,
            "1 to 4096",
        )?;
        let tool_window_chars = within(
            "[mcp] tool_window_chars",
            config.mcp.tool_window_chars,
            DEFAULT_TOOL_WINDOW_CHARS,
            1024..=65536,
            "1024 to 65536",
        )?;
        let max_result_bytes = within(
            "[mcp] max_result_bytes",
            config.mcp.max_result_bytes,
            DEFAULT_MAX_RESULT_BYTES,
            4096..=64 * 1024 * 1024,
            "4096 to 67108864",
        )?;
        // Unset keeps the store's own bound (`Kg::with_max_instance_bytes`, or the default).
        let kg_max_instance_bytes = match config.kg.max_instance_bytes {
            None => None,
            value => Some(within(
                "[kg] max_instance_bytes",
                value,
                DEFAULT_MAX_INSTANCE_BYTES,
                1024..=64 * 1024 * 1024,
                "1024 to 67108864",
            )?),
        };
        // A `trails.kg.*` window is characters (up to 4 bytes each): it must fit in a result.
        if max_result_bytes < 4 * tool_window_chars {
            return Err(ConfigError::Value {
                key: "[mcp] max_result_bytes",
                value: max_result_bytes.to_string(),
                expected: "at least 4 × [mcp] tool_window_chars (a window of 4-byte characters must fit in a result)",
            });
        }
        let seconds = |key, value, default, range, expected| {
            within(key, value, default, range, expected).map(Duration::from_secs)
        };
        let session_idle =
            seconds("[http] session_idle_secs", config.http.session_idle_secs, 300, 1..=86_400, "1 to 86400 seconds")?;
        // Up to an hour; only the grace period may be 0 (exit at once).
        let hour = "1 to 3600 seconds";
        let header_timeout =
            seconds("[http] header_timeout_secs", config.http.header_timeout_secs, 10, 1..=3600, hour)?;
        let body_timeout = seconds("[http] body_timeout_secs", config.http.body_timeout_secs, 30, 1..=3600, hour)?;
        let shutdown_grace =
            seconds("[http] shutdown_grace_secs", config.http.shutdown_grace_secs, 5, 0..=3600, "0 to 3600 seconds")?;
        let session_init = seconds("[http] session_init_secs", config.http.session_init_secs, 10, 1..=3600, hour)?;
        let max_sessions = config.http.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS);
        let max_anonymous_sessions = match config.http.max_anonymous_sessions {
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
            config.http.max_connections,
            DEFAULT_MAX_CONNECTIONS,
            1..=1_000_000,
            "1 to 1000000",
        )?;
        let max_header_bytes = within(
            "[http] max_header_bytes",
            config.http.max_header_bytes,
            DEFAULT_MAX_HEADER_BYTES,
            8192..=1_048_576,
            "8192 to 1048576 (hyper reads heads in at least 8 KiB)",
        )?;
        let kg_base = config.kg.base.unwrap_or_else(|| trails_kg::DEFAULT_BASE.to_owned());
        if oxrdf::NamedNode::new(format!("{}/x", kg_base.trim_end_matches('/'))).is_err() {
            return Err(ConfigError::Value { key: "[kg] base", value: kg_base, expected: "an absolute IRI" });
        }
        let query_url = env("TRAILS_KG_QUERY_URL").or(config.kg.query_url);
        let kg_remote = match query_url {
            None => None,
            Some(query_url) => {
                let update_url =
                    env("TRAILS_KG_UPDATE_URL").or(config.kg.update_url).unwrap_or_else(|| query_url.clone());
                for (key, url) in [("[kg] query_url", &query_url), ("[kg] update_url", &update_url)] {
                    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
                    let parsed = url.parse::<http::Uri>();
                    if !scheme_ok || parsed.is_err() {
                        let expected = "an http:// or https:// URL";
                        return Err(ConfigError::Value { key, value: url.clone(), expected });
                    }
                    // Never echo the URL here: it holds a secret.
                    if parsed.ok().and_then(|uri| uri.authority().map(|a| a.as_str().contains('@'))).unwrap_or(false) {
                        let expected = "a URL without user or password (use [kg] user and TRAILS_KG_PASSWORD)";
                        return Err(ConfigError::Value { key, value: "<a URL with credentials>".into(), expected });
                    }
                }
                let ca_file = env("TRAILS_KG_CA_FILE").map(PathBuf::from).or(config.kg.ca_file);
                let user = env("TRAILS_KG_USER").or(config.kg.user);
                let password = env("TRAILS_KG_PASSWORD").or(config.kg.password);
                let credentials = match (user, password) {
                    (Some(user), Some(password)) => Some((user, password)),
                    (None, None) => None,
                    _ => {
                        return Err(ConfigError::Value {
                            key: "[kg] user / password",
                            value: "one of the two".into(),
                            expected: "both (TRAILS_KG_USER and TRAILS_KG_PASSWORD) or neither",
                        })
                    }
                };
                Some(RemoteKg { query_url, update_url, credentials, ca_file })
            }
        };
        let public_url = oauth::public_url(env("TRAILS_HTTP_PUBLIC_URL").or(config.http.public_url))?;
        let oauth = oauth::resolve(config.auth.oauth, public_url.as_deref(), env)?;
        let telemetry = {
            let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
            let set = |name| env(name).is_some_and(|v| !v.trim().is_empty());
            let endpoint = config.telemetry.otlp_endpoint.map(|e| e.trim().trim_end_matches('/').to_owned());
            if let Some(endpoint) = &endpoint {
                if !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
                    || endpoint.parse::<http::Uri>().is_err()
                {
                    let expected = "the collector's OTLP/HTTP base URL, e.g. http://collector:4318";
                    return Err(ConfigError::Value {
                        key: "[telemetry] otlp_endpoint",
                        value: endpoint.clone(),
                        expected,
                    });
                }
            }
            Telemetry {
                endpoint: endpoint.filter(|_| !disabled),
                from_env: !disabled
                    && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
                service_name: config.telemetry.service_name,
            }
        };
        let coordination = match env("TRAILS_REDIS_URL")
            .filter(|url| !url.trim().is_empty())
            .or(config.coordination.url)
        {
            None => None,
            Some(url) => {
                let url = url.trim().to_owned();
                if !(url.starts_with("redis://") || url.starts_with("rediss://")) || url.parse::<http::Uri>().is_err() {
                    return Err(ConfigError::Value {
                        key: "[coordination] url",
                        value: redacted_url(&url),
                        expected: "a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379",
                    });
                }
                let timeout_ms = within(
                    "[coordination] timeout_ms",
                    config.coordination.timeout_ms,
                    1000,
                    10..=60_000,
                    "10 to 60000",
                )?;
                if config.coordination.prefix.as_deref().is_some_and(|p| p.is_empty() || p.len() > 200) {
                    return Err(ConfigError::Value {
                        key: "[coordination] prefix",
                        value: config.coordination.prefix.unwrap_or_default(),
                        expected: "1 to 200 bytes",
                    });
                }
                Some(Coordination {
                    url,
                    prefix: config.coordination.prefix,
                    timeout: Duration::from_millis(timeout_ms),
                    fail_open: config.coordination.fail_open.unwrap_or(false),
                })
            }
        };
        Ok(Settings {
            coordination,
            sections: config.sections,
            anonymous_http: config.auth.anonymous.unwrap_or(true),
            public_url,
            oauth,
            telemetry,
            production,
            process_scopes,
            stdio_token,
            http_tokens: TokenTable::new(entries),
            mask_denied,
            validation_errors,
            http_bind,
            // An empty variable is an unset one (as `KEY=` in a compose file means).
            allowed_hosts: match env("TRAILS_HTTP_ALLOWED_HOSTS").filter(|list| !list.trim().is_empty()) {
                Some(list) => list.split(',').map(str::trim).filter(|h| !h.is_empty()).map(str::to_owned).collect(),
                None => config.http.allowed_hosts,
            },
            allowed_origins: config.http.allowed_origins,
            max_body_bytes: config.http.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
            http_sessions: config.http.sessions.unwrap_or(true),
            hot_path: config.http.hot_path.unwrap_or(true),
            invoke_enabled: config.http.invoke.unwrap_or(true),
            shapes_enabled: config.http.shapes.unwrap_or(true),
            max_sessions,
            max_anonymous_sessions,
            session_init,
            session_idle,
            max_connections,
            header_timeout,
            body_timeout,
            max_header_bytes,
            shutdown_grace,
            max_subscriptions,
            subscription_queue,
            tool_window_chars,
            max_result_bytes,
            manifest_enabled: config.capability.manifest.enabled,
            kg_path: env("TRAILS_KG_PATH")
                .map(PathBuf::from)
                .or(config.kg.path)
                .unwrap_or_else(|| PathBuf::from(DEFAULT_KG_PATH)),
            kg_base,
            kg_synchronous: config.kg.synchronous.unwrap_or_default(),
            kg_remote,
            kg_max_instance_bytes,
            provenance_keep: config.kg.provenance_keep.unwrap_or(100_000),
            provenance_max_age: chrono::Duration::days(i64::from(config.kg.provenance_max_age_days.unwrap_or(90))),
            policy_files: match env("TRAILS_POLICY_FILES") {
                Some(list) => std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()).collect(),
                None => config.policy.files,
            },
            policy_entities: env("TRAILS_POLICY_ENTITIES").map(PathBuf::from).or(config.policy.entities),
            budget,
            idempotency_retention: Duration::from_secs(within(
                "[idempotency] retention_secs",
                config.idempotency.retention_secs,
                86_400,
                1..=2_678_400,
                "1 to 2678400",
            )?),
            idempotency_max_keys: within(
                "[idempotency] max_keys",
                config.idempotency.max_keys,
                10_000,
                1..=1_000_000,
                "1 to 1000000",
            )?,
        })
    }

    /// Read `path` (if any) and the process environment.
    pub fn load(path: Option<&Path>) -> Result<Settings, ConfigError> {
        let config = match path {
            Some(path) => Config::load(path)?,
            None => Config::default(),
        };
        Settings::resolve(config, &|name| std::env::var(name).ok())
    }
}

/// `value` (or `default` when unset) if it is within `range`; the error saying `expected` if not.
fn within<T: Copy + PartialOrd + ToString>(
    key: &'static str,
    value: Option<T>,
    default: T,
    range: std::ops::RangeInclusive<T>,
    expected: &'static str,
) -> Result<T, ConfigError> {
    match value {
        None => Ok(default),
        Some(n) if range.contains(&n) => Ok(n),
        Some(n) => Err(ConfigError::Value { key, value: n.to_string(), expected }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_and_env_resolve() {
        let config = Config::parse(
            r#"
            [project]
            env = "production"
            [mcp]
            scopes = ["builder"]
            mask_denied = true
            [[http.tokens]]
            name = "ci"
            sha256 = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
            scopes = ["dev"]
            "#,
        )
        .unwrap();
        let env = |name: &str| (name == "TRAILS_VALIDATION_ERRORS").then(|| "tool_result".to_owned());
        let settings = Settings::resolve(config, &env).unwrap();
        assert!(settings.production && settings.mask_denied);
        assert_eq!(settings.process_scopes.names(), ["runtime", "builder"]);
        assert_eq!(settings.validation_errors, ValidationErrors::ToolResult);
        assert_eq!(settings.http_tokens.verify("secret").unwrap().name, "ci");
    }

    #[test]
    fn bad_config_is_a_clear_error() {
        let err = Config::parse("[mcp]\nscopez = []").unwrap_err().to_string();
        assert!(err.contains("unknown field `scopez`"), "{err}");
        let config = Config::parse("[[http.tokens]]\nname = \"x\"\nsha256 = \"zz\"\nscopes = [\"dev\"]").unwrap();
        let err = Settings::resolve(config, &|_| None).unwrap_err();
        assert!(matches!(err, ConfigError::TokenHash(_)), "{err}");
        assert!(err.to_string().contains("64 hex"), "{err}");
        let hash = "0".repeat(64);
        let twice = format!(
            "[[http.tokens]]\nname = \"ci\"\nsha256 = \"{hash}\"\nscopes = [\"dev\"]\n\
             [[http.tokens]]\nname = \"ci\"\nsha256 = \"{}\"\nscopes = [\"runtime\"]",
            "1".repeat(64)
        );
        let err = Settings::resolve(Config::parse(&twice).unwrap(), &|_| None).unwrap_err().to_string();
        assert!(err.contains("[[http.tokens]] name") && err.contains("ci"), "{err}");
        let err =
            Settings::resolve(Config::default(), &|n| (n == "TRAILS_MCP_SCOPES").then(|| "root".into())).unwrap_err();
        assert_eq!(err.to_string(), "TRAILS_MCP_SCOPES: unknown scope `root`; scopes are runtime, builder and dev");
    }

    #[test]
    fn telemetry_is_wanted_from_the_file_or_the_standard_variables() {
        let parse = |toml: &str| Config::parse(toml).unwrap();
        let none = Settings::resolve(Config::default(), &|_| None).unwrap();
        assert!(!none.telemetry.wanted());
        let file = Settings::resolve(parse("[telemetry]\notlp_endpoint = \"http://c:4318/\""), &|_| None).unwrap();
        assert_eq!(file.telemetry.endpoint.as_deref(), Some("http://c:4318"));
        let env = |name: &str| (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "http://c:4318".to_owned());
        assert!(Settings::resolve(Config::default(), &env).unwrap().telemetry.wanted());
        let off = |name: &str| env(name).or_else(|| (name == "OTEL_SDK_DISABLED").then(|| "true".to_owned()));
        assert!(!Settings::resolve(Config::default(), &off).unwrap().telemetry.wanted());
        let bad = Settings::resolve(parse("[telemetry]\notlp_endpoint = \"collector:4318\""), &|_| None).unwrap_err();
        assert!(bad.to_string().starts_with("[telemetry] otlp_endpoint"), "{bad}");
    }
}
