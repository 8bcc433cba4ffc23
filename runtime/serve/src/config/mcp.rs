//! `[project]`, `[mcp]` and `[capability]`: what this process serves, to whom, and how much of
//! it one answer carries.

use trails_core::auth::{ScopeSet, TokenEntry, TokenTable};

use super::file::{CapabilityConfig, McpConfig, ProjectConfig, ValidationErrors};
use super::{scopes, within, ConfigError, Env};

/// Most resources one subscriber watches when `[mcp] max_subscriptions` is unset.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 64;
/// Most notifications waiting per subscriber when `[mcp] subscription_queue` is unset.
pub const DEFAULT_SUBSCRIPTION_QUEUE: usize = 256;
/// Most characters of text a model is shown of one tool result when `[mcp] tool_window_chars`
/// is unset.
pub const DEFAULT_TOOL_WINDOW_CHARS: usize = 4096;
/// Largest tool result in bytes (content blocks: images, audio) when `[mcp] max_result_bytes` is
/// unset; text is held to the window long before.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1024 * 1024;

/// `[project]`, `[mcp]` and `[capability]`, validated, with their `TRAILS_*` overrides.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpSettings {
    /// `TRAILS_ENV=production` / `[project] env`: `dev` tools are hidden entirely.
    pub production: bool,
    /// Scopes this process serves at most.
    pub process_scopes: ScopeSet,
    /// The stdio token (`TRAILS_MCP_TOKEN`), hashed.
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) stdio_token: Option<TokenTable>,
    /// A denied tool answers exactly like an unknown one.
    pub mask_denied: bool,
    /// How validation failures reach the client.
    pub validation_errors: ValidationErrors,
    /// Most resources one subscriber watches.
    pub max_subscriptions: usize,
    /// Most notifications waiting per subscriber (drop-oldest beyond).
    pub subscription_queue: usize,
    /// Most characters of text a model is shown of one tool result.
    pub tool_window_chars: usize,
    /// Largest tool result, in bytes of JSON (content blocks included).
    pub max_result_bytes: usize,
    /// `[capability.manifest] enabled`: serve the capability manifest.
    pub manifest_enabled: bool,
    /// `[mcp] request_state_keys` and `request_state_secs`.
    pub(crate) request_state: RequestStateKeys,
}

/// Most seconds a `requestState` opens when `[mcp] request_state_secs` is unset.
pub const DEFAULT_REQUEST_STATE_SECS: u64 = 600;

/// The keys that seal `requestState` (at least one), and how long a state opens.
#[derive(Clone)]
pub(crate) struct RequestStateKeys {
    pub(crate) keys: Vec<[u8; 32]>,
    pub(crate) lifetime: std::time::Duration,
    /// Configured, not drawn at start.
    pub(crate) configured: bool,
}

impl std::fmt::Debug for RequestStateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestStateKeys")
            .field("keys", &format_args!("{} (not shown)", self.keys.len()))
            .field("lifetime", &self.lifetime)
            .field("configured", &self.configured)
            .finish()
    }
}

impl RequestStateKeys {
    fn resolve(mcp: &McpConfig, env: &Env) -> Result<RequestStateKeys, ConfigError> {
        use base64::Engine as _;
        use chacha20poly1305::aead::{Generate, Key};
        let (key, written): (&'static str, Vec<String>) = match env.get("TRAILS_REQUEST_STATE_KEYS") {
            Some(list) => ("TRAILS_REQUEST_STATE_KEYS", list.split(',').map(str::to_owned).collect()),
            None => ("[mcp] request_state_keys", mcp.request_state_keys.clone()),
        };
        let mut keys = Vec::new();
        for (n, written) in written.iter().map(|key| key.trim()).filter(|key| !key.is_empty()).enumerate() {
            let decoded = base64::engine::general_purpose::STANDARD.decode(written).ok();
            let Some(key32) = decoded.and_then(|bytes| <[u8; 32]>::try_from(bytes).ok()) else {
                return Err(ConfigError::Value {
                    key,
                    value: format!("key {} (not shown)", n + 1),
                    expected: "base64 of 32 random bytes each (`openssl rand -base64 32`)",
                });
            };
            keys.push(key32);
        }
        let configured = !keys.is_empty();
        if !configured {
            let drawn = Key::<chacha20poly1305::XChaCha20Poly1305>::try_generate().map_err(|error| {
                ConfigError::Value { key, value: error.to_string(), expected: "a random source to draw a key from" }
            })?;
            keys.push(drawn.into());
        }
        let secs = within(
            "[mcp] request_state_secs",
            mcp.request_state_secs,
            DEFAULT_REQUEST_STATE_SECS,
            10..=86400,
            "10 to 86400",
        )?;
        Ok(RequestStateKeys { keys, lifetime: std::time::Duration::from_secs(secs), configured })
    }
}

impl McpSettings {
    pub(super) fn resolve(
        project: ProjectConfig,
        mcp: McpConfig,
        capability: CapabilityConfig,
        env: &Env,
    ) -> Result<McpSettings, ConfigError> {
        // An unknown environment name must not silently mean "not production" (dev tools served).
        const ENVIRONMENTS: &str = "use production or development";
        let production = match (env.get("TRAILS_ENV"), project.env) {
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
        let process_scopes = match env.get("TRAILS_MCP_SCOPES") {
            Some(list) => scopes("TRAILS_MCP_SCOPES", list.split(','))?,
            None => match &mcp.scopes {
                Some(list) => scopes("[mcp] scopes", list.iter().map(String::as_str))?,
                None => ScopeSet::up_to(trails_core::auth::Scope::Runtime),
            },
        };
        let stdio_token = env
            .get("TRAILS_MCP_TOKEN")
            .filter(|t| !t.is_empty())
            .map(|token| TokenTable::new(vec![TokenEntry::from_plain("stdio", &token, process_scopes)]));
        let validation_errors = match env.get("TRAILS_VALIDATION_ERRORS") {
            Some(value) => match value.as_str() {
                "tool_result" => ValidationErrors::ToolResult,
                "jsonrpc" => ValidationErrors::Jsonrpc,
                _ => {
                    let expected = "use jsonrpc or tool_result".to_owned();
                    return Err(ConfigError::Env { name: "TRAILS_VALIDATION_ERRORS", value, expected });
                }
            },
            None => mcp.validation_errors.unwrap_or_default(),
        };
        let mask_denied = match env.get("TRAILS_MASK_DENIED") {
            Some(v) => matches!(v.as_str(), "1" | "true" | "yes"),
            None => mcp.mask_denied,
        };
        // Bounded above too: each is a per-subscriber memory (and per-write work) bound.
        let max_subscriptions =
            within("[mcp] max_subscriptions", mcp.max_subscriptions, DEFAULT_MAX_SUBSCRIPTIONS, 1..=4096, "1 to 4096")?;
        let subscription_queue = within(
            "[mcp] subscription_queue",
            mcp.subscription_queue,
            DEFAULT_SUBSCRIPTION_QUEUE,
            1..=4096,
            "1 to 4096",
        )?;
        let tool_window_chars = within(
            "[mcp] tool_window_chars",
            mcp.tool_window_chars,
            DEFAULT_TOOL_WINDOW_CHARS,
            1024..=65536,
            "1024 to 65536",
        )?;
        let max_result_bytes = within(
            "[mcp] max_result_bytes",
            mcp.max_result_bytes,
            DEFAULT_MAX_RESULT_BYTES,
            4096..=64 * 1024 * 1024,
            "4096 to 67108864",
        )?;
        // The window is characters (up to 4 bytes each): it must fit in a result.
        if max_result_bytes < 4 * tool_window_chars {
            return Err(ConfigError::Value {
                key: "[mcp] max_result_bytes",
                value: max_result_bytes.to_string(),
                expected: "at least 4 × [mcp] tool_window_chars (a window of 4-byte characters must fit in a result)",
            });
        }
        let request_state = RequestStateKeys::resolve(&mcp, env)?;
        Ok(McpSettings {
            request_state,
            production,
            process_scopes,
            stdio_token,
            mask_denied,
            validation_errors,
            max_subscriptions,
            subscription_queue,
            tool_window_chars,
            max_result_bytes,
            manifest_enabled: capability.manifest.enabled,
        })
    }
}
