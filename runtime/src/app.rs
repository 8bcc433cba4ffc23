//! The app entry point every Trails binary shares: `trails::App::new().state(…).run()`.

use std::any::Any;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use rmcp::ServiceExt;

use crate::auth::{sha256_hex, ScopeSet};
use crate::config::Settings;
use crate::ctx::AppState;
use crate::mcp::{Shared, TrailsServer, Transport};
use crate::registry::Registry;

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

#[derive(Parser)]
#[command(about = "A Trails MCP server", long_about = None)]
struct Cli {
    /// trails.toml to read (settings are also taken from TRAILS_* environment variables).
    #[arg(long, global = true, env = "TRAILS_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio or Streamable HTTP (default: HTTP on 127.0.0.1:8080, path /mcp).
    Serve {
        /// Speak MCP on stdin/stdout (logs go to stderr).
        #[arg(long, conflicts_with = "http")]
        stdio: bool,
        /// Listen for Streamable HTTP on ADDR.
        #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = crate::config::DEFAULT_HTTP_BIND)]
        http: Option<SocketAddr>,
    },
    /// Print the tool descriptors a caller with SCOPES would list.
    Tools {
        /// Comma-separated scopes (default: the process scopes).
        #[arg(long)]
        scopes: Option<String>,
    },
    /// Print the SHA-256 of a token, for `[[http.tokens]]` in trails.toml.
    HashToken { token: String },
}

impl App {
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
    pub fn build(self, settings: Settings) -> Result<Server, String> {
        let registry = Registry::collect().map_err(|e| e.to_string())?;
        let shared = Shared::new(registry, settings, self.state, self.name, self.version)?;
        Ok(Server { shared: Arc::new(shared) })
    }

    /// Parse the command line and run. Logs go to stderr (never stdout: that is the stdio wire).
    pub fn run(self) -> ExitCode {
        let cli = Cli::parse();
        init_logging();
        let settings = match Settings::load(cli.config.as_deref()) {
            Ok(settings) => settings,
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::from(2);
            }
        };
        match cli.command {
            Command::HashToken { token } => {
                println!("{}", sha256_hex(&token));
                ExitCode::SUCCESS
            }
            Command::Tools { scopes } => {
                let scopes = match scopes.map(|s| ScopeSet::parse_list(s.split(','))) {
                    Some(Ok(set)) => set,
                    Some(Err(error)) => {
                        eprintln!("error: {error}");
                        return ExitCode::from(2);
                    }
                    None => settings.process_scopes,
                };
                match self.build(settings) {
                    Ok(server) => {
                        let _ = writeln!(std::io::stdout().lock(), "{}", server.tools_json(scopes));
                        ExitCode::SUCCESS
                    }
                    Err(error) => fail(&error),
                }
            }
            Command::Serve { stdio, http } => {
                let bind = http.unwrap_or(settings.http_bind);
                let server = match self.build(settings) {
                    Ok(server) => server,
                    Err(error) => return fail(&error),
                };
                let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
                    Ok(runtime) => runtime,
                    Err(error) => return fail(&format!("cannot start the async runtime: {error}")),
                };
                let result = runtime.block_on(async move {
                    if stdio {
                        server.serve_stdio().await
                    } else {
                        let listener = tokio::net::TcpListener::bind(bind)
                            .await
                            .map_err(|e| format!("cannot listen on {bind}: {e}"))?;
                        server.serve_http(listener).await
                    }
                });
                match result {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(error) => fail(&error),
                }
            }
        }
    }
}

fn fail(error: &str) -> ExitCode {
    eprintln!("error: {error}");
    ExitCode::FAILURE
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TRAILS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).try_init();
}

/// A built server: serve it over a transport, embed its router, or switch tools at run time.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

impl Server {
    /// The `tools/list` payload for `scopes`, as the wire carries it.
    pub fn tools_json(&self, scopes: ScopeSet) -> String {
        let tools = self.shared.catalog.list(scopes);
        serde_json::to_string_pretty(tools.as_ref()).expect("tools serialise")
    }

    /// The axum application (`/mcp`, `/.well-known/capabilities`, `/healthz`) for `bind`.
    pub fn router(&self, bind: SocketAddr) -> axum::Router {
        crate::http::router(self.shared.clone(), bind)
    }

    pub async fn serve_http(&self, listener: tokio::net::TcpListener) -> Result<(), String> {
        let bind = listener.local_addr().map_err(|e| e.to_string())?;
        tracing::info!("serving MCP at http://{bind}/mcp");
        axum::serve(listener, self.router(bind))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| e.to_string())
    }

    pub async fn serve_stdio(&self) -> Result<(), String> {
        tracing::info!("serving MCP on stdio");
        let server = TrailsServer::new(self.shared.clone(), Transport::Stdio);
        let running = server.serve(rmcp::transport::stdio()).await.map_err(|e| e.to_string())?;
        running.waiting().await.map_err(|e| e.to_string())?;
        Ok(())
    }

    /// Enable or disable a tool; connected sessions get `notifications/tools/list_changed`.
    pub async fn set_tool_enabled(&self, name: &str, enabled: bool) -> Result<bool, String> {
        self.shared.set_tool_enabled(name, enabled).await
    }
}
