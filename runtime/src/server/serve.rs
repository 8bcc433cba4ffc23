//! A built server and how it is served: over HTTP (the axum router) or stdio, until shutdown.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;

use super::catalog::NoSuchTool;
use super::control::Control;
use super::shared::Shared;
use crate::auth::ScopeSet;
use crate::mcp::{TrailsServer, Transport};

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The HTTP listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// Accepting or serving HTTP connections failed.
    #[error("HTTP server failed: {0}")]
    Http(std::io::Error),
    /// The stdio MCP session could not start or ended with an error.
    #[error("stdio MCP session failed: {0}")]
    Stdio(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// A built server: serve it over a transport, embed its router, or switch tools at run time.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

impl Server {
    pub(crate) fn new(shared: Arc<Shared>) -> Server {
        Server { shared }
    }

    /// The `tools/list` payload for `scopes`, as the wire carries it.
    pub fn tools_json(&self, scopes: ScopeSet) -> String {
        let tools = self.shared.catalog.list(scopes);
        serde_json::to_string_pretty(tools.as_ref()).expect("tools serialise")
    }

    /// The axum application (`/mcp`, `/.well-known/capabilities`, `/healthz`) for `bind`.
    pub fn router(&self, bind: SocketAddr) -> axum::Router {
        crate::http::router(self.shared.clone(), bind)
    }

    /// Serve HTTP on `listener` until Ctrl-C.
    pub async fn serve_http(&self, listener: tokio::net::TcpListener) -> Result<(), ServeError> {
        let bind = listener.local_addr().map_err(ServeError::Http)?;
        tracing::info!("serving MCP at http://{bind}/mcp");
        axum::serve(listener, self.router(bind))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(ServeError::Http)
    }

    /// Serve one MCP client on stdin/stdout until it disconnects.
    pub async fn serve_stdio(&self) -> Result<(), ServeError> {
        tracing::info!("serving MCP on stdio");
        let server = TrailsServer::new(self.shared.clone(), Transport::Stdio);
        let running = server.serve(rmcp::transport::stdio()).await.map_err(|e| ServeError::Stdio(Box::new(e)))?;
        running.waiting().await.map_err(|e| ServeError::Stdio(Box::new(e)))?;
        Ok(())
    }

    /// A handle to change what this server serves while it runs.
    pub fn control(&self) -> Control {
        Control(self.shared.clone())
    }

    /// Enable or disable a tool; connected sessions get `notifications/tools/list_changed`.
    pub async fn set_tool_enabled(&self, name: &str, enabled: bool) -> Result<bool, NoSuchTool> {
        self.shared.set_tool_enabled(name, enabled)
    }
}
