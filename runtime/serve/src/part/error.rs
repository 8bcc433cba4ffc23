//! Why a server could not be assembled.

use crate::config::ConfigError;
use std::process::ExitCode;
use trails_core::registry::RegistryError;
use trails_kg::StoreError;

/// Why a server could not be built from the linked tables, the settings and its parts.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Duplicate names, or a pattern that does not parse here.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The knowledge-graph store could not be opened.
    #[error("cannot open the knowledge graph: {0}")]
    Store(#[from] StoreError),
    /// A section of the configuration a part reads, or one no part reads.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The configuration asks for a part this binary was built without.
    #[error(
        "{what} needs trails-mcp's `{feature}` feature, which this binary was built without: enable it in Cargo.toml"
    )]
    NotBuiltIn {
        /// What the configuration or a declaration asks for.
        what: String,
        /// The cargo feature of `trails` that provides it.
        feature: &'static str,
    },
    /// The binary holds no capability, shape or node type of its own: most likely they live in
    /// a library crate that nothing in the binary names, so the linker left its tables out.
    #[error(
        "this binary serves no capability, shape or node type of its own. If they are declared in a library \
         crate, the linker left that crate out because nothing in this binary names it: name it with \
         `App::new().include(my_library::link)`, where `link` is an empty `pub fn link() {{}}` of that crate"
    )]
    NothingDeclared,
    /// A capability requires Cedar policies that are not configured or not found.
    #[cfg(feature = "cedar")]
    #[error(transparent)]
    Policy(#[from] trails_governance::policy::PolicyError),
    /// The OTLP exporters cannot be set up (an invalid `OTEL_EXPORTER_OTLP_*` value).
    #[error("telemetry: {0}")]
    Telemetry(String),
    /// `[auth.oauth]` cannot be set up (its `ca_file` cannot be read).
    #[error("{0}")]
    OAuth(String),
    /// `[coordination]`: Redis did not answer. Replicas that cannot share their budgets, keys
    /// and notifications do not serve as though they did.
    #[error("{0}")]
    Coordination(String),
    /// A part could not be assembled.
    #[error("{part}: {source}")]
    Part {
        /// The part's name.
        part: &'static str,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl BuildError {
    /// 2 for configuration to fix (like a bad trails.toml): missing policies, a part left out of
    /// the build; 1 otherwise.
    pub(crate) fn exit_code(&self) -> ExitCode {
        match self {
            BuildError::Registry(_) | BuildError::Store(_) | BuildError::Coordination(_) | BuildError::Part { .. } => {
                ExitCode::FAILURE
            }
            _ => ExitCode::from(2),
        }
    }
}
