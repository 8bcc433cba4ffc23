//! `trails::App::new().state(…).run()`: build the server once from the linked tables and the
//! settings, then serve it or answer a command.

use std::any::Any;
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use super::command::{Cli, Command};
use crate::auth::{sha256_hex, ScopeSet};
use crate::config::Settings;
use crate::registry::{Registry, RegistryError};
use crate::server::{AppState, BadDescriptor, ServeError, Server, Shared};

/// A Trails application: the linked capabilities plus shared state.
pub struct App {
    state: Option<AppState>,
    name: String,
    version: String,
}

impl Default for App {
    fn default() -> Self {
        App::new()
    }
}

/// Why a server could not be built from the linked tables.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Duplicate names, or a pattern that does not compile here.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A descriptor rmcp cannot read (a Trails bug).
    #[error(transparent)]
    Descriptor(#[from] BadDescriptor),
}

impl App {
    /// An app serving everything linked into this binary, named `trails-app`.
    pub fn new() -> App {
        App { state: None, name: "trails-app".into(), version: env!("CARGO_PKG_VERSION").into() }
    }

    /// Shared state handlers read with `ctx.state::<T>()`.
    pub fn state<T: Any + Send + Sync>(mut self, state: T) -> App {
        self.state = Some(Arc::new(state));
        self
    }

    /// The `serverInfo` name and version clients see.
    pub fn named(mut self, name: impl Into<String>, version: impl Into<String>) -> App {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Assemble the server once: collect the registry, parse descriptors, render the manifest.
    pub fn build(self, settings: Settings) -> Result<Server, BuildError> {
        let registry = Registry::collect()?;
        let shared = Shared::new(&registry, settings, self.state, self.name, self.version)?;
        Ok(Server::new(Arc::new(shared)))
    }

    /// Parse the command line and run. Logs go to stderr (never stdout: that is the stdio wire).
    /// Exit codes: 0 success, 1 a failure while serving, 2 bad configuration or arguments.
    pub fn run(self) -> ExitCode {
        let cli = Cli::parse();
        init_logging();
        let settings = match Settings::load(cli.config.as_deref()) {
            Ok(settings) => settings,
            Err(error) => return fail(&error, ExitCode::from(2)),
        };
        match cli.command {
            Command::HashToken { token } => {
                println!("{}", sha256_hex(&token));
                ExitCode::SUCCESS
            }
            Command::Tools { scopes } => {
                let scopes = match scopes.map(|s| ScopeSet::parse_list(s.split(','))) {
                    Some(Ok(set)) => set,
                    Some(Err(error)) => return fail(&error, ExitCode::from(2)),
                    None => settings.process_scopes,
                };
                match self.build(settings) {
                    Ok(server) => {
                        let _ = writeln!(std::io::stdout().lock(), "{}", server.tools_json(scopes));
                        ExitCode::SUCCESS
                    }
                    Err(error) => fail(&error, ExitCode::FAILURE),
                }
            }
            Command::Serve { stdio, http } => {
                let bind = http.unwrap_or(settings.http_bind);
                let server = match self.build(settings) {
                    Ok(server) => server,
                    Err(error) => return fail(&error, ExitCode::FAILURE),
                };
                match serve(server, stdio, bind) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(error) => fail(&error, ExitCode::FAILURE),
                }
            }
        }
    }
}

fn serve(server: Server, stdio: bool, bind: SocketAddr) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(ServeError::Runtime)?;
    runtime.block_on(async move {
        if stdio {
            server.serve_stdio().await
        } else {
            let listener =
                tokio::net::TcpListener::bind(bind).await.map_err(|source| ServeError::Bind { addr: bind, source })?;
            server.serve_http(listener).await
        }
    })
}

fn fail(error: &dyn std::fmt::Display, code: ExitCode) -> ExitCode {
    eprintln!("error: {error}");
    code
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TRAILS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).try_init();
}
