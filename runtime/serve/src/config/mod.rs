//! Configuration: `trails.toml` (the [`Config`] sections, unknown keys refused) plus `TRAILS_*`
//! environment overrides. Each section is resolved where it is used: the server's own sections
//! here, one file each ([`McpSettings`], [`HttpSettings`], the telemetry), into [`Settings`];
//! a part's section by that part, when the server is assembled (`part::builtin` for the built-in
//! parts, `trails::part::Assembly::section` for an app's). Every failure is a [`ConfigError`]
//! that names the file, key or variable to fix.

mod file;
mod http;
mod mcp;
mod telemetry;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use file::{
    AuthConfig, BudgetConfig, CapabilityConfig, Config, CoordinationConfig, HttpConfig, IdempotencyConfig,
    IntrospectionConfig, KgConfig, ManifestConfig, McpConfig, OAuthConfig, PolicyConfig, ProjectConfig, TasksConfig,
    TelemetryConfig, TokenBudget, TokenConfig, ValidationErrors,
};
pub use http::{
    HttpSettings, DEFAULT_HTTP_BIND, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_SESSIONS,
};
pub(crate) use mcp::RequestStateKeys;
pub use mcp::{
    McpSettings, DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_SUBSCRIPTIONS, DEFAULT_SUBSCRIPTION_QUEUE,
    DEFAULT_TOOL_WINDOW_CHARS,
};
pub(crate) use telemetry::Telemetry;

use trails_core::auth::{BadTokenHash, ScopeSet, UnknownScope};

/// The sections of `trails.toml` the server and its built-in parts read (the fields of
/// [`Config`]); any other belongs to an app's part (`trails::part`).
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
    "tasks",
];

/// Why the Cedar policies (`[policy] files`) could not be loaded.
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

/// Everything the server needs: its own sections validated, and the parts' sections as written
/// (each resolved by its part when the server is assembled, with the same environment).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Settings {
    /// `[project]`, `[mcp]` and `[capability]`: what is served, to whom.
    pub mcp: McpSettings,
    /// `[http]` and `[auth] anonymous`.
    pub http: HttpSettings,
    /// `[telemetry]` and the `OTEL_*` variables.
    pub(crate) telemetry: Telemetry,
    /// The parts' sections.
    pub(crate) parts: PartSections,
    /// Where the parts look their `TRAILS_*` overrides up.
    pub(crate) env: Env,
}

/// The parts' sections as written: the built-in parts' (each handed only its own, by
/// `part::builtin::parts`) and the app's parts' (`Assembly::section`).
#[derive(Debug, Clone, Default)]
pub(crate) struct PartSections {
    pub(crate) kg: KgConfig,
    pub(crate) policy: PolicyConfig,
    pub(crate) budget: BudgetConfig,
    pub(crate) idempotency: IdempotencyConfig,
    /// `[[http.tokens]]`' own budgets (the ledger's to keep): token name, budget.
    pub(crate) token_budgets: Vec<(String, TokenBudget)>,
    pub(crate) oauth: Option<OAuthConfig>,
    pub(crate) coordination: CoordinationConfig,
    pub(crate) tasks: TasksConfig,
    /// Every other section: the app's parts'.
    pub(crate) other: toml::Table,
}

/// How an environment variable is looked up: the process's, or the one a test or an embedding
/// program passed to [`Settings::resolve`].
#[derive(Clone)]
pub(crate) struct Env(Arc<Lookup>);

type Lookup = dyn Fn(&str) -> Option<String> + Send + Sync;

impl Env {
    pub(crate) fn new(lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Env {
        Env(Arc::new(lookup))
    }

    /// The variable's value, if set.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        (self.0)(name)
    }
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Values may be secrets.
        f.write_str("Env")
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings::resolve(Config::default(), |_| None).expect("defaults are valid")
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

pub(crate) fn scopes<'a>(what: &str, items: impl IntoIterator<Item = &'a str>) -> Result<ScopeSet, ConfigError> {
    ScopeSet::parse_list(items).map_err(|source| ConfigError::Scope { what: what.to_owned(), source })
}

impl Settings {
    /// Validate the server's own sections, with `env` looking `TRAILS_*` (and `OTEL_*`)
    /// variables up. The parts' sections (`[kg]`, `[policy]`, `[budget]`, `[idempotency]`,
    /// `[coordination]`, `[auth.oauth]`, an app's own) are resolved by their parts, with the same
    /// `env`, when the server is built (`App::build`): their errors, and the variables that
    /// override them, come then.
    pub fn resolve(
        config: Config,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Result<Settings, ConfigError> {
        let env = Env::new(env);
        let Config {
            project,
            mcp,
            http,
            capability,
            kg,
            policy,
            budget,
            idempotency,
            auth,
            telemetry,
            coordination,
            tasks,
            sections,
        } = config;
        let token_budgets = http.tokens.iter().filter_map(|token| Some((token.name.clone(), token.budget?))).collect();
        Ok(Settings {
            mcp: McpSettings::resolve(project, mcp, capability, &env)?,
            http: HttpSettings::resolve(http, &auth, &env)?,
            telemetry: Telemetry::resolve(telemetry, &env)?,
            parts: PartSections {
                kg,
                policy,
                budget,
                idempotency,
                token_budgets,
                oauth: auth.oauth,
                coordination,
                tasks,
                other: sections,
            },
            env,
        })
    }

    /// Read `path` (if any); the process environment overrides it (the parts read their
    /// variables when the server is built).
    pub fn load(path: Option<&Path>) -> Result<Settings, ConfigError> {
        let config = match path {
            Some(path) => Config::load(path)?,
            None => Config::default(),
        };
        Settings::resolve(config, |name| std::env::var(name).ok())
    }

    /// The settings `toml` gives (no environment), for the crate's own tests.
    #[cfg(test)]
    pub(crate) fn from_toml(toml: &str) -> Settings {
        Settings::resolve(Config::parse(toml).unwrap(), |_| None).unwrap()
    }
}

/// `value` (or `default` when unset) if it is within `range`; the error saying `expected` if not.
pub(crate) fn within<T: Copy + PartialOrd + ToString>(
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
    fn request_state_keys_are_32_bytes_of_base64_the_environment_overrides_and_none_draws_one() {
        let key = |byte: u8| base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [byte; 32]);
        let toml = format!("[mcp]\nrequest_state_keys = [{:?}, {:?}]\nrequest_state_secs = 60\n", key(1), key(2));
        let settings = Settings::resolve(Config::parse(&toml).unwrap(), |_| None).unwrap();
        let keys = &settings.mcp.request_state;
        assert!(keys.configured && keys.keys == [[1; 32], [2; 32]], "in order: the first seals");
        assert_eq!(keys.lifetime, std::time::Duration::from_secs(60));
        assert!(!format!("{settings:?}").contains(&key(1)), "keys never in a log line");
        let env = move |name: &str| (name == "TRAILS_REQUEST_STATE_KEYS").then(|| key(3));
        assert_eq!(Settings::resolve(Config::parse(&toml).unwrap(), env).unwrap().mcp.request_state.keys, [[3; 32]]);
        for bad in ["not base64!", "c2hvcnQ="] {
            let toml = format!("[mcp]\nrequest_state_keys = [{bad:?}]\n");
            let error = Settings::resolve(Config::parse(&toml).unwrap(), |_| None).unwrap_err().to_string();
            assert!(error.contains("request_state_keys") && !error.contains(bad), "{error}");
        }
        let drawn = Settings::resolve(Config::default(), |_| None).unwrap().mcp.request_state;
        assert!(!drawn.configured && drawn.keys.len() == 1);
        assert_ne!(drawn.keys, Settings::resolve(Config::default(), |_| None).unwrap().mcp.request_state.keys);
    }

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
        let settings = Settings::resolve(config, env).unwrap();
        assert!(settings.mcp.production && settings.mcp.mask_denied);
        assert_eq!(settings.mcp.process_scopes.names(), ["runtime", "builder"]);
        assert_eq!(settings.mcp.validation_errors, ValidationErrors::ToolResult);
        assert_eq!(settings.http.tokens.verify("secret").unwrap().name, "ci");
    }

    #[test]
    fn bad_config_is_a_clear_error() {
        let err = Config::parse("[mcp]\nscopez = []").unwrap_err().to_string();
        assert!(err.contains("unknown field `scopez`"), "{err}");
        let config = Config::parse("[[http.tokens]]\nname = \"x\"\nsha256 = \"zz\"\nscopes = [\"dev\"]").unwrap();
        let err = Settings::resolve(config, |_| None).unwrap_err();
        assert!(matches!(err, ConfigError::TokenHash(_)), "{err}");
        assert!(err.to_string().contains("64 hex"), "{err}");
        let hash = "0".repeat(64);
        let twice = format!(
            "[[http.tokens]]\nname = \"ci\"\nsha256 = \"{hash}\"\nscopes = [\"dev\"]\n\
             [[http.tokens]]\nname = \"ci\"\nsha256 = \"{}\"\nscopes = [\"runtime\"]",
            "1".repeat(64)
        );
        let err = Settings::resolve(Config::parse(&twice).unwrap(), |_| None).unwrap_err().to_string();
        assert!(err.contains("[[http.tokens]] name") && err.contains("ci"), "{err}");
        let err =
            Settings::resolve(Config::default(), |n| (n == "TRAILS_MCP_SCOPES").then(|| "root".into())).unwrap_err();
        assert_eq!(err.to_string(), "TRAILS_MCP_SCOPES: unknown scope `root`; scopes are runtime, builder and dev");
    }

    /// `Settings` keeps the parts' sections as written until they resolve: its `{:?}` (and a
    /// `Config`'s) shows whether a secret is set, never the secret.
    #[test]
    fn no_secret_reaches_debug_output() {
        let toml = "[kg]\nquery_url = \"https://db.example/q\"\nuser = \"u\"\npassword = \"kg-sesame\"\n\
                    [coordination]\nurl = \"redis://:redis-sesame@cache:6379\"\n\
                    [http]\npublic_url = \"https://mcp.example.com\"\n\
                    [auth.oauth]\nissuer = \"https://id.example.com\"\n\
                    [auth.oauth.introspection]\nclient_id = \"rs\"\nclient_secret = \"oauth-sesame\"\n";
        let shown = format!("{:?} {:?}", Config::parse(toml).unwrap(), Settings::from_toml(toml));
        assert!(!shown.contains("sesame"), "{shown}");
        assert!(shown.contains("<set, not shown>") && shown.contains("\"u\""), "{shown}");
    }

    #[test]
    fn telemetry_is_wanted_from_the_file_or_the_standard_variables() {
        let parse = |toml: &str| Config::parse(toml).unwrap();
        let none = Settings::resolve(Config::default(), |_| None).unwrap();
        assert!(!none.telemetry.wanted());
        let file = Settings::resolve(parse("[telemetry]\notlp_endpoint = \"http://c:4318/\""), |_| None).unwrap();
        assert_eq!(file.telemetry.endpoint.as_deref(), Some("http://c:4318"));
        let env = |name: &str| (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "http://c:4318".to_owned());
        assert!(Settings::resolve(Config::default(), env).unwrap().telemetry.wanted());
        let off = move |name: &str| env(name).or_else(|| (name == "OTEL_SDK_DISABLED").then(|| "true".to_owned()));
        assert!(!Settings::resolve(Config::default(), off).unwrap().telemetry.wanted());
        let bad = Settings::resolve(parse("[telemetry]\notlp_endpoint = \"collector:4318\""), |_| None).unwrap_err();
        assert!(bad.to_string().starts_with("[telemetry] otlp_endpoint"), "{bad}");
    }
}
