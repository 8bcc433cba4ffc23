//! [`Server`] over HTTP: the axum router, and serving it within the `[http]` connection limits
//! until shutdown.

use std::future::Future;
use std::net::SocketAddr;

use tokio_util::sync::CancellationToken;

use super::{ServeError, Server};
use crate::http::ConnectionLimits;

impl Server {
    /// The axum application (`/mcp`, `/.well-known/capabilities`, `/healthz`) for `bind`, to
    /// embed in your own server, which then owns connection limits and shutdown. What
    /// [`Server::serve_http`] adds is then not done: half-opened and idle sessions are closed only
    /// when requests come (the next `initialize`, or any session's request after a sweep
    /// interval), and freed memory is not handed back to the system when quiet.
    pub fn router(&self, bind: SocketAddr) -> axum::Router {
        crate::http::router(self.shared.clone(), bind, CancellationToken::new()).0
    }

    /// Serve HTTP on `listener` until SIGINT or SIGTERM, within the `[http]` connection limits;
    /// then stop accepting, close sessions and their event streams, and give requests in flight
    /// `[http] shutdown_grace_secs` to finish (a second signal ends them at once). A call
    /// inside a session that rmcp serves is cancelled with the session; one the hot path serves
    /// runs on within the grace period, as a stateless one does, its event stream closed.
    pub async fn serve_http(&self, listener: tokio::net::TcpListener) -> Result<(), ServeError> {
        self.serve_http_until(listener, shutdown_signal(), shutdown_signal()).await
    }

    /// [`Server::serve_http`] until `shutdown` completes (`again`: end the grace period early).
    pub async fn serve_http_until(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()>,
        again: impl Future<Output = ()>,
    ) -> Result<(), ServeError> {
        let bind = listener.local_addr().map_err(ServeError::Http)?;
        let settings = &self.shared.http;
        let hosts = crate::http::startup_hosts(settings, bind).map_err(ServeError::HostPolicy)?;
        let _parts = self.start_parts();
        tracing::info!("serving MCP at http://{bind}/mcp");
        if hosts.iter().any(|host| host.trim() == crate::http::ANY_HOST) {
            tracing::warn!("[http] allowed_hosts has \"*\": any Host is answered; the DNS-rebinding defence is off");
        } else {
            tracing::info!(hosts = %hosts.join(", "), "answering requests whose Host is one of these ([http] allowed_hosts)");
        }
        let limits = ConnectionLimits {
            max_connections: settings.max_connections,
            header_timeout: settings.header_timeout,
            max_header_bytes: settings.max_header_bytes,
            shutdown_grace: settings.shutdown_grace,
        };
        let streams = CancellationToken::new();
        // However serving ends (this future dropped by a caller's timeout included), the tasks
        // the router started for its sessions end with it.
        let _end_session_tasks = streams.clone().drop_guard();
        let (app, upkeep) = crate::http::router(self.shared.clone(), bind, streams.clone());
        tokio::spawn(upkeep);
        let served = crate::http::serve(listener, app, limits, streams, shutdown, again);
        tokio::select! {
            served = served => served.map_err(ServeError::Http),
            never = crate::memory::give_back_when_quiet() => match never {},
        }
    }
}

/// SIGINT (Ctrl-C) or SIGTERM (what `docker stop`, systemd and Kubernetes send).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
