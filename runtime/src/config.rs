//! `trails.toml` plus environment overrides, resolved once into [`Settings`].

use std::net::SocketAddr;
use std::path::Path;

use serde::Deserialize;

use crate::auth::{ScopeSet, TokenEntry, TokenTable};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub project: ProjectConfig,
    #[serde(default)]
    pub mcp: McpConfig,
    #[serde(default)]
    pub http: HttpConfig,
    #[serde(default)]
    pub capability: CapabilityConfig,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    /// `production` hides `dev` tools entirely.
    pub env: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Scopes this process serves (default `["runtime"]`).
    pub scopes: Option<Vec<String>>,
    /// A denied tool answers exactly like an unknown one (no probing).
    #[serde(default)]
    pub mask_denied: bool,
    /// `jsonrpc` (default): -32602 errors; `tool_result`: `isError` results (SEP-1303 style).
    pub validation_errors: Option<ValidationErrors>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValidationErrors {
    #[default]
    Jsonrpc,
    ToolResult,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    pub bind: Option<SocketAddr>,
    /// `Host` values accepted besides the loopback names (needed for a non-loopback bind).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted; requests without `Origin` always pass.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    pub max_body_bytes: Option<usize>,
    /// Keep MCP sessions for 2025-* clients (default true). 2026-07-28 is always stateless.
    pub sessions: Option<bool>,
    /// Most concurrent MCP sessions (idle ones expire after 5 minutes).
    pub max_sessions: Option<usize>,
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    pub name: String,
    /// SHA-256 of the token, hex (`<app> hash-token TOKEN` prints it).
    pub sha256: String,
    pub scopes: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityConfig {
    #[serde(default)]
    pub manifest: ManifestConfig,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestConfig {
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

pub const DEFAULT_HTTP_BIND: &str = "127.0.0.1:8080";
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
pub const DEFAULT_MAX_SESSIONS: usize = 1000;

/// Everything the server needs, validated.
#[derive(Debug, Clone)]
pub struct Settings {
    pub production: bool,
    pub process_scopes: ScopeSet,
    /// The stdio token (`TRAILS_MCP_TOKEN`), hashed.
    pub stdio_token: Option<TokenTable>,
    pub http_tokens: TokenTable,
    pub mask_denied: bool,
    pub validation_errors: ValidationErrors,
    pub http_bind: SocketAddr,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub max_body_bytes: usize,
    pub http_sessions: bool,
    pub max_sessions: usize,
    pub manifest_enabled: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::resolve(Config::default(), &|_| None).expect("defaults are valid")
    }
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parse `trails.toml` text; unknown keys are errors.
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }
}

impl Settings {
    /// Apply environment overrides (`env` looks a variable up) and validate.
    pub fn resolve(config: Config, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, String> {
        let production = env("TRAILS_ENV").or(config.project.env).is_some_and(|e| e == "production");
        let process_scopes = match env("TRAILS_MCP_SCOPES") {
            Some(list) => ScopeSet::parse_list(list.split(','))?,
            None => match &config.mcp.scopes {
                Some(list) => ScopeSet::parse_list(list.iter().map(String::as_str))?,
                None => ScopeSet::parse_list(["runtime"])?,
            },
        };
        let stdio_token = env("TRAILS_MCP_TOKEN")
            .filter(|t| !t.is_empty())
            .map(|token| TokenTable::new(vec![TokenEntry::from_plain("stdio", &token, process_scopes)]));
        let mut entries = Vec::new();
        for token in &config.http.tokens {
            let scopes = ScopeSet::parse_list(token.scopes.iter().map(String::as_str))
                .map_err(|e| format!("token `{}`: {e}", token.name))?;
            entries.push(TokenEntry::from_hex(&token.name, &token.sha256, scopes)?);
        }
        let validation_errors = match env("TRAILS_VALIDATION_ERRORS").as_deref() {
            Some("tool_result") => ValidationErrors::ToolResult,
            Some("jsonrpc") => ValidationErrors::Jsonrpc,
            Some(other) => return Err(format!("TRAILS_VALIDATION_ERRORS=`{other}`: use jsonrpc or tool_result")),
            None => config.mcp.validation_errors.unwrap_or_default(),
        };
        let mask_denied = match env("TRAILS_MASK_DENIED") {
            Some(v) => matches!(v.as_str(), "1" | "true" | "yes"),
            None => config.mcp.mask_denied,
        };
        let http_bind = match env("TRAILS_HTTP_BIND") {
            Some(addr) => addr.parse().map_err(|e| format!("TRAILS_HTTP_BIND=`{addr}`: {e}"))?,
            None => config.http.bind.unwrap_or_else(|| DEFAULT_HTTP_BIND.parse().expect("valid default")),
        };
        Ok(Settings {
            production,
            process_scopes,
            stdio_token,
            http_tokens: TokenTable::new(entries),
            mask_denied,
            validation_errors,
            http_bind,
            allowed_hosts: config.http.allowed_hosts,
            allowed_origins: config.http.allowed_origins,
            max_body_bytes: config.http.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
            http_sessions: config.http.sessions.unwrap_or(true),
            max_sessions: config.http.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS),
            manifest_enabled: config.capability.manifest.enabled,
        })
    }

    /// Read `path` (if any) and the process environment.
    pub fn load(path: Option<&Path>) -> Result<Settings, String> {
        let config = match path {
            Some(path) => Config::load(path)?,
            None => Config::default(),
        };
        Settings::resolve(config, &|name| std::env::var(name).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_and_env_resolve() {
        let config: Config = toml::from_str(
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
        let err = toml::from_str::<Config>("[mcp]\nscopez = []").unwrap_err().to_string();
        assert!(err.contains("unknown field `scopez`"), "{err}");
        let config: Config = toml::from_str("[[http.tokens]]\nname = \"x\"\nsha256 = \"zz\"\nscopes = [\"dev\"]").unwrap();
        assert!(Settings::resolve(config, &|_| None).unwrap_err().contains("64 hex"));
    }
}
