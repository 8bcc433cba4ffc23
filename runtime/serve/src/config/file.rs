//! The `trails.toml` file as written: every section, unknown keys refused.

use std::net::SocketAddr;

use serde::Deserialize;

/// `trails.toml`, parsed but not yet validated (see [`Settings`](super::Settings)). Sections
/// besides these (and [`SECTIONS`](super::SECTIONS) names them) are the parts' own: each is read
/// by the part it belongs to, and one that no part reads stops the start.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Config {
    /// `[project]`
    #[serde(default)]
    pub project: ProjectConfig,
    /// `[mcp]`
    #[serde(default)]
    pub mcp: McpConfig,
    /// `[http]`
    #[serde(default)]
    pub http: HttpConfig,
    /// `[capability]`
    #[serde(default)]
    pub capability: CapabilityConfig,
    /// `[kg]`
    #[serde(default)]
    pub kg: KgConfig,
    /// `[policy]`
    #[serde(default)]
    pub policy: PolicyConfig,
    /// `[budget]`
    #[serde(default)]
    pub budget: BudgetConfig,
    /// `[idempotency]`
    #[serde(default)]
    pub idempotency: IdempotencyConfig,
    /// `[auth]`
    #[serde(default)]
    pub auth: AuthConfig,
    /// `[telemetry]`
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    /// `[coordination]`
    #[serde(default)]
    pub coordination: CoordinationConfig,
    /// `[tasks]`
    #[serde(default)]
    pub tasks: TasksConfig,
    /// The other sections: the parts' own, each read by its part (`trails::part::Assembly::section`).
    #[serde(skip)]
    pub sections: toml::Table,
}

/// `[coordination]`: what several replicas of this server share, in Redis (the `redis` feature):
/// budgets, idempotency keys, the change feed behind notifications, the provenance-pruning lease.
/// Unset, each process keeps its own.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoordinationConfig {
    /// `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS (`TRAILS_REDIS_URL` is
    /// preferred when the URL holds a password: keep it out of files).
    pub url: Option<String>,
    /// Put before every key this server writes (default `trails:<app name>:`), so apps can share
    /// one Redis; replicas of one app must use the same.
    pub prefix: Option<String>,
    /// Milliseconds one Redis command may take before Redis counts as unavailable (default 1000,
    /// 10 to 60000).
    pub timeout_ms: Option<u64>,
    /// Redis unavailable mid-run: let calls through without charging budgets or keeping keys
    /// (`true`), or refuse them with a retryable `unavailable` error (`false`, the default).
    pub fail_open: Option<bool>,
}

/// `[telemetry]`: OpenTelemetry export (the `otel` feature). The standard `OTEL_*` variables
/// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, …) work
/// too; what is set here wins.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryConfig {
    /// The collector's OTLP/HTTP base URL (`http://collector:4318`); traces go to `/v1/traces`
    /// and metrics to `/v1/metrics` under it.
    pub otlp_endpoint: Option<String>,
    /// The `service.name` of what is exported (default: `OTEL_SERVICE_NAME`, else the app's name).
    pub service_name: Option<String>,
}

/// `[auth]`: who callers are, besides `[[http.tokens]]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// Serve HTTP requests that carry no token, as the anonymous caller (`runtime` tools only;
    /// default true). False: every route but `/healthz` and the OAuth metadata answers 401, so a
    /// host asks its user to sign in as it connects.
    pub anonymous: Option<bool>,
    /// `[auth.oauth]`: accept access tokens an OAuth 2.1 authorization server issues for this
    /// server (the `oauth` feature).
    pub oauth: Option<OAuthConfig>,
}

/// `[auth.oauth]`: this server as an OAuth 2.1 resource server (MCP authorization).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// The authorization server's issuer identifier; its metadata is discovered under it (RFC 8414,
    /// then OpenID Connect discovery).
    pub issuer: String,
    /// The `aud` access tokens must carry (default: the resource, `<[http] public_url>/mcp`).
    pub audience: Option<String>,
    /// OAuth scope → Trails scope (`runtime`, `builder`, `dev`); default: each Trails scope under
    /// its own name.
    pub scopes: Option<std::collections::BTreeMap<String, String>>,
    /// JWS algorithms accepted (default: RS256/384/512, PS256/384/512, ES256, ES384, EdDSA; no
    /// HMAC, no `none`).
    pub algorithms: Option<Vec<String>>,
    /// Seconds of clock skew allowed on `exp` and `nbf` (default 60, at most 300).
    pub leeway_secs: Option<u64>,
    /// Fewest seconds between two fetches of the issuer's keys for a token signed by a key it
    /// does not know (default 10): a flood of unknown key ids cannot make it hammer the issuer.
    pub key_refetch_secs: Option<u64>,
    /// PEM file of CA certificates trusted for the issuer besides the system's roots.
    pub ca_file: Option<std::path::PathBuf>,
    /// `[auth.oauth.introspection]`: check opaque tokens at the issuer (RFC 7662).
    pub introspection: Option<IntrospectionConfig>,
}

/// `[auth.oauth.introspection]`: the client this server authenticates as at the issuer's
/// introspection endpoint.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntrospectionConfig {
    /// Its client id.
    pub client_id: String,
    /// Its secret (`TRAILS_OAUTH_CLIENT_SECRET` is preferred: keep it out of files).
    pub client_secret: Option<String>,
}

/// `[tasks]`: capabilities declared `task` (MCP's Tasks extension), kept in the ledger.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TasksConfig {
    /// A call that ends within this many milliseconds is answered as a plain result; one that
    /// runs on becomes a task (default 500, 0 to 60000; `task = "required"` is always a task).
    pub inline_ms: Option<u64>,
    /// Seconds a task is kept from its creation, result included; one still running then is
    /// stopped (default 3600, 10 to 31 days).
    pub ttl_secs: Option<u64>,
    /// How often a client is asked to poll, in milliseconds (default 1000, 100 to 60000).
    pub poll_interval_ms: Option<u64>,
    /// Most tasks one caller may have running at once (default 64, 1 to 10000).
    pub max_live_per_caller: Option<usize>,
    /// Most tasks kept per caller, ended ones with their results; past it the oldest ended go
    /// (default 1000, 1 to 1000000).
    pub max_kept_per_caller: Option<usize>,
    /// Seconds a server's hold on the tasks it runs lasts unrenewed: one that died leaves them
    /// failed this long after (default 15, 2 to 600).
    pub lease_secs: Option<u64>,
}

/// `[idempotency]`: how long idempotency keys (and the results they replay) are kept.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdempotencyConfig {
    /// Seconds a key is kept after its first call (default 86400, at most 31 days).
    pub retention_secs: Option<u64>,
    /// Most finished keys kept per caller; the oldest go first (default 10000, 1 to 1000000).
    pub max_keys: Option<usize>,
    /// Most bytes of kept results per caller; the oldest go first, and a larger result is not
    /// kept (default 16777216, 1024 to 2^40).
    pub max_bytes_per_caller: Option<u64>,
    /// The same for all anonymous callers together, who share one key space (default 4194304).
    pub max_bytes_anonymous: Option<u64>,
    /// Most bytes of kept results in all; past it a new key is refused, retryable, until keys
    /// expire (default 268435456).
    pub max_bytes: Option<u64>,
}

/// `[budget]`: what each caller may spend per window on capabilities that declare a `cost`.
/// A `[[http.tokens]]` entry's own `budget` replaces these limits for that token.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    /// Length of a budget window in seconds (default 3600, at most 31 days). A caller's spending
    /// restarts when its window ends.
    pub window_secs: Option<u64>,
    /// Model tokens a caller may spend per window (unset: unlimited).
    pub tokens: Option<u64>,
    /// US dollars a caller may spend per window (unset: unlimited).
    pub usd: Option<f64>,
}

/// A token's own budget (`budget = { tokens = …, usd = … }` in `[[http.tokens]]`); an unset side
/// is unlimited.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenBudget {
    /// Model tokens per window.
    pub tokens: Option<u64>,
    /// US dollars per window.
    pub usd: Option<f64>,
}

/// `[policy]`: the Cedar policies that `policy_required` capabilities need.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// Cedar policy files (relative to the working directory, like `[kg] path`); a capability's
    /// `policy_required` names policies in them by their `@id("…")` annotation
    /// (`TRAILS_POLICY_FILES`, `:`-separated, overrides).
    #[serde(default)]
    pub files: Vec<std::path::PathBuf>,
    /// A Cedar entities JSON file (principals' groups and attributes), optional
    /// (`TRAILS_POLICY_ENTITIES`).
    pub entities: Option<std::path::PathBuf>,
}

/// `[kg]`: the knowledge-graph store.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KgConfig {
    /// Data directory of the embedded store, created on first start (default `trails-data`,
    /// relative to the working directory; `TRAILS_KG_PATH` overrides).
    pub path: Option<std::path::PathBuf>,
    /// Base IRI of instances (`<base>/<Label>/<key>`); keep it stable: agents hold these IRIs.
    pub base: Option<String>,
    /// `full` (default: fsync per commit) or `normal` (survives a crash, not a power loss).
    pub synchronous: Option<trails_kg::Synchronous>,
    /// SPARQL 1.1 query URL of a remote store; setting it serves the knowledge graph from that
    /// endpoint instead of the embedded store (`TRAILS_KG_QUERY_URL`).
    pub query_url: Option<String>,
    /// SPARQL 1.1 update URL of the remote store (default: `query_url`; `TRAILS_KG_UPDATE_URL`).
    pub update_url: Option<String>,
    /// User for the remote store's updates (`TRAILS_KG_USER`).
    pub user: Option<String>,
    /// Password for the remote store (`TRAILS_KG_PASSWORD` is preferred: keep it out of files).
    pub password: Option<String>,
    /// PEM file of CA certificates trusted for an `https://` remote store besides the system's
    /// roots (a private CA; `TRAILS_KG_CA_FILE`).
    pub ca_file: Option<std::path::PathBuf>,
    /// Heaviest instance the store accepts, in bytes of text: every literal and IRI it holds
    /// (blob bytes are stored apart and not counted; default 256 KiB; 1024 to 67108864).
    pub max_instance_bytes: Option<usize>,
    /// Provenance activities kept at most (default 100000; the oldest go first).
    pub provenance_keep: Option<usize>,
    /// Provenance activities older than this many days are dropped (default 90).
    pub provenance_max_age_days: Option<u32>,
}

/// `[project]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    /// `production` hides `dev` tools entirely; `development` (the default) does not.
    pub env: Option<String>,
}

/// `[mcp]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Scopes this process serves (default `["runtime"]`).
    pub scopes: Option<Vec<String>>,
    /// A denied tool answers exactly like an unknown one (no probing).
    #[serde(default)]
    pub mask_denied: bool,
    /// `jsonrpc` (default): -32602 errors; `tool_result`: `isError` results (SEP-1303 style).
    pub validation_errors: Option<ValidationErrors>,
    /// Most resources one session (or one `subscriptions/listen`) may watch (default 64).
    pub max_subscriptions: Option<usize>,
    /// Most notifications waiting per subscriber; beyond it the oldest is dropped and counted
    /// (default 256).
    pub subscription_queue: Option<usize>,
    /// Most characters of text a model is shown of one tool result, any tool's (default 4096;
    /// 1024 to 65536): what does not fit is named, with the call that continues it.
    pub tool_window_chars: Option<usize>,
    /// Largest tool result in bytes of JSON, content blocks (images, audio) included (default
    /// 1 MiB; 4096 to 67108864): blocks cannot be cut, so a result over it is an `isError`
    /// result naming the size. Text is held to `tool_window_chars` first.
    pub max_result_bytes: Option<usize>,
    /// Keys that seal the `requestState` of input-required results (protocol 2026-07-28): base64
    /// of 32 random bytes each (`openssl rand -base64 32`); the first seals, every one opens, so a
    /// new key goes first and the old one stays until its states expired. Every replica needs
    /// the same. Unset: a key drawn at start (states then hold within this process only).
    /// `TRAILS_REQUEST_STATE_KEYS` (comma-separated) overrides.
    #[serde(default)]
    pub request_state_keys: Vec<String>,
    /// Seconds a `requestState` opens after it was issued: how long a user has to answer
    /// (default 600; 10 to 86400).
    pub request_state_secs: Option<u64>,
}

/// How validation failures reach the client (`runtime/guide/07-wire-contract.md`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValidationErrors {
    /// A JSON-RPC `-32602` error with `data.fields` (the default).
    #[default]
    Jsonrpc,
    /// An `isError: true` result with the same list in `structuredContent` (SEP-1303 style).
    ToolResult,
}

/// `[http]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    /// Address to listen on (default `127.0.0.1:8080`; `TRAILS_HTTP_BIND` overrides).
    pub bind: Option<SocketAddr>,
    /// `Host` values accepted besides the loopback names (needed for a non-loopback bind).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted; requests without `Origin` always pass.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Largest request body accepted (default 4 MiB).
    pub max_body_bytes: Option<usize>,
    /// Keep MCP sessions for 2025-* clients (default true). 2026-07-28 is always stateless.
    pub sessions: Option<bool>,
    /// Answer `tools/list`, `tools/call` and resource requests (stateless, or in a session) from
    /// the pre-computed tables instead of through rmcp (default true; the answers are the same,
    /// see `runtime/guide/04-serving.md`).
    pub hot_path: Option<bool>,
    /// Serve `POST /invoke/{id}` and the OpenAPI document describing it, `GET /openapi.json`
    /// (default true).
    pub invoke: Option<bool>,
    /// Serve the SHACL shapes at `GET /shapes.ttl` and `GET /shapes/{name}` (default true).
    pub shapes: Option<bool>,
    /// Most concurrent MCP sessions (idle ones expire after `session_idle_secs`).
    pub max_sessions: Option<usize>,
    /// Seconds a session may go without a client request before it expires (default 300).
    pub session_idle_secs: Option<u64>,
    /// Sessions anonymous callers may hold together (default half of `max_sessions`); the rest
    /// stays for callers with a token.
    pub max_anonymous_sessions: Option<usize>,
    /// Seconds a new session has to send `notifications/initialized` before it is closed
    /// (default 10).
    pub session_init_secs: Option<u64>,
    /// Connections served at once; the next is answered 503 (default 1024).
    pub max_connections: Option<usize>,
    /// Seconds to receive a request head, counted from when the server is ready for it — also
    /// how long an idle keep-alive connection stays open (default 10).
    pub header_timeout_secs: Option<u64>,
    /// Seconds to receive a request body once its head arrived; then 408 (default 30).
    pub body_timeout_secs: Option<u64>,
    /// Largest request head in bytes; larger is refused 431 (default 16384, at least 8192).
    pub max_header_bytes: Option<usize>,
    /// Seconds requests in flight get to finish after SIGINT/SIGTERM (default 5).
    pub shutdown_grace_secs: Option<u64>,
    /// Bearer tokens accepted on HTTP.
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
    /// How clients reach this server (`https://mcp.example.com`): the OAuth resource is
    /// `<public_url>/mcp` (`TRAILS_HTTP_PUBLIC_URL` overrides).
    pub public_url: Option<String>,
}

/// One `[[http.tokens]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// Shown in logs and provenance as the caller.
    pub name: String,
    /// SHA-256 of the token, hex (`<app> hash-token TOKEN` prints it).
    pub sha256: String,
    /// Scopes the token grants (each also grants the ones below it).
    pub scopes: Vec<String>,
    /// This token's budget per window, instead of `[budget]`'s.
    pub budget: Option<TokenBudget>,
}

/// `[capability]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityConfig {
    /// `[capability.manifest]`
    #[serde(default)]
    pub manifest: ManifestConfig,
}

/// `[capability.manifest]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestConfig {
    /// Serve `GET /.well-known/capabilities` (default true).
    #[serde(default = "yes")]
    pub enabled: bool,
}

impl Default for ManifestConfig {
    fn default() -> Self {
        ManifestConfig { enabled: true }
    }
}

fn yes() -> bool {
    true
}

/// How a secret is shown: whether it is set, never what it is.
fn secret<T>(value: &Option<T>) -> &'static str {
    match value {
        Some(_) => "<set, not shown>",
        None => "<unset>",
    }
}

// The sections that may hold a secret show it only as set or not, so that `{:?}` of a `Config`
// or of `Settings` (which keeps the parts' sections as written) never puts one in a log.

impl std::fmt::Debug for CoordinationConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password (`redis://:pw@host`).
        f.debug_struct("CoordinationConfig")
            .field("url", &secret(&self.url))
            .field("prefix", &self.prefix)
            .field("timeout_ms", &self.timeout_ms)
            .field("fail_open", &self.fail_open)
            .finish()
    }
}

impl std::fmt::Debug for IntrospectionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionConfig")
            .field("client_id", &self.client_id)
            .field("client_secret", &secret(&self.client_secret))
            .finish()
    }
}

impl std::fmt::Debug for KgConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KgConfig")
            .field("path", &self.path)
            .field("base", &self.base)
            .field("synchronous", &self.synchronous)
            .field("query_url", &self.query_url)
            .field("update_url", &self.update_url)
            .field("user", &self.user)
            .field("password", &secret(&self.password))
            .field("ca_file", &self.ca_file)
            .field("max_instance_bytes", &self.max_instance_bytes)
            .field("provenance_keep", &self.provenance_keep)
            .field("provenance_max_age_days", &self.provenance_max_age_days)
            .finish()
    }
}
