//! A built server and how it is served: over HTTP (the axum router) or stdio, until shutdown.

#[cfg(feature = "http")]
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

#[cfg(feature = "stdio")]
use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

#[cfg(feature = "http")]
use crate::http::ConnectionLimits;
use crate::state::{Control, Running, Shared};
#[cfg(feature = "stdio")]
use crate::{mcp::TrailsServer, method::Transport};
use trails_core::auth::ScopeSet;
use trails_core::pipeline::NoSuchTool;

/// The parts' background tasks, started: told to stop when this is dropped, and ended if they
/// have not within the grace period.
#[must_use = "the background tasks are told to stop when this is dropped"]
pub struct Started {
    stopping: CancellationToken,
    running: Vec<tokio::task::JoinHandle<()>>,
    grace: std::time::Duration,
}

impl Drop for Started {
    fn drop(&mut self) {
        self.stopping.cancel();
        let (running, grace) = (std::mem::take(&mut self.running), self.grace);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        runtime.spawn(async move {
            for mut task in running {
                match tokio::time::timeout(grace, &mut task).await {
                    Ok(Ok(())) => {}
                    Ok(Err(error)) if error.is_panic() => tracing::error!("a part's background task panicked"),
                    Ok(Err(_)) => {}
                    Err(_) => {
                        tracing::warn!("a part's background task did not stop within the grace period: ended");
                        task.abort();
                    }
                }
            }
        });
    }
}

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
    /// No `Host` policy fits the address (`0.0.0.0` without `[http] allowed_hosts`), or it has
    /// entries that are not host names.
    #[error("{0}")]
    HostPolicy(String),
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

    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The `tools/list` payload for `scopes`, as the wire carries it.
    pub fn tools_json(&self, scopes: ScopeSet) -> String {
        let tools = self.shared.tools(trails_core::pipeline::View::of(scopes));
        serde_json::to_string_pretty(tools.as_ref()).expect("tools serialise")
    }

    /// Call meta capability `id` (`trails.meta.gen.shape`) as the developer at the terminal — a
    /// caller with every scope the environment allows (`production` hides `dev`) — through the
    /// same dispatch as `tools/call`: `Ok` with the result's text (what `tools/call` puts in
    /// `content[0]`), or `Err` with the JSON-RPC error object.
    pub(crate) async fn call_meta(
        &self,
        id: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<String, String> {
        let encoded = |refusal: &trails_core::pipeline::Refusal| {
            serde_json::to_string(&crate::wire::call::refusal(refusal)).expect("errors serialise")
        };
        let Some(name) = self.shared.pipeline.catalog.name_of(id) else {
            return Err(encoded(&trails_core::pipeline::Refusal::UnknownTool { name: id.to_owned() }));
        };
        let caller = trails_core::auth::Caller {
            name: Some("cli".to_owned()),
            client: None,
            scopes: ScopeSet::up_to(trails_core::auth::Scope::Dev),
        };
        match crate::method::call(
            &self.shared,
            name,
            Some(arguments),
            caller,
            crate::method::Via::Invoke,
            Default::default(),
        )
        .await
        {
            Ok(answer) => {
                let text = answer.result().text().unwrap_or_default().to_owned();
                if answer.result().is_error {
                    Err(text)
                } else {
                    Ok(text)
                }
            }
            Err(refusal) => Err(encoded(&refusal)),
        }
    }

    /// The axum application (`/mcp`, `/.well-known/capabilities`, `/healthz`) for `bind`, to
    /// embed in your own server, which then owns connection limits and shutdown. What
    /// [`Server::serve_http`] adds is then not done: half-opened and idle sessions are closed only
    /// when requests come (the next `initialize`, or any session's request after a sweep
    /// interval), and freed memory is not handed back to the system when quiet.
    #[cfg(feature = "http")]
    pub fn router(&self, bind: SocketAddr) -> axum::Router {
        crate::http::router(self.shared.clone(), bind, CancellationToken::new()).0
    }

    /// Serve HTTP on `listener` until SIGINT or SIGTERM, within the `[http]` connection limits;
    /// then stop accepting, close sessions and their event streams, and give requests in flight
    /// `[http] shutdown_grace_secs` to finish (a second signal ends them at once). A call
    /// inside a session that rmcp serves is cancelled with the session; one the hot path serves
    /// runs on within the grace period, as a stateless one does, its event stream closed.
    #[cfg(feature = "http")]
    pub async fn serve_http(&self, listener: tokio::net::TcpListener) -> Result<(), ServeError> {
        self.serve_http_until(listener, shutdown_signal(), shutdown_signal()).await
    }

    /// [`Server::serve_http`] until `shutdown` completes (`again`: end the grace period early).
    #[cfg(feature = "http")]
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

    /// Serve one MCP client on stdin/stdout until it closes stdin (or stdout). Every line gets
    /// an answer: one that is not a well-formed message is answered with a JSON-RPC error, and
    /// a line is at most `[http] max_body_bytes` long.
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(&self) -> Result<(), ServeError> {
        tracing::info!("serving MCP on stdio");
        let _parts = self.start_parts();
        let server = TrailsServer::new(self.shared.clone(), Transport::Stdio);
        let max_line = self.shared.http.max_body_bytes;
        let guarded = crate::mcp::stdio::guarded(tokio::io::stdin(), tokio::io::stdout(), max_line);
        let (stdout_closed, written) = (guarded.stdout_closed, guarded.written);
        let serving = async {
            match server.serve(guarded.rmcp).await {
                Ok(running) => {
                    let cancel = running.cancellation_token();
                    tokio::spawn(async move {
                        stdout_closed.cancelled().await;
                        cancel.cancel();
                    });
                    running.waiting().await.map(drop).map_err(|e| ServeError::Stdio(Box::new(e)))
                }
                Err(e) => Err(ServeError::Stdio(Box::new(e))),
            }
        };
        let served = tokio::select! {
            served = serving => served,
            never = crate::memory::give_back_when_quiet() => match never {},
        };
        // rmcp's side is dropped by now: let what it wrote last reach stdout.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), written).await;
        served
    }

    /// Start the parts' background tasks ([`Assembly::background`](crate::part::Assembly::background)),
    /// which [`Server::serve_http`] and [`Server::serve_stdio`] do themselves; a program that
    /// serves [`Server::router`] its own way calls this, inside its Tokio runtime. They are told
    /// to stop when the returned value is dropped, and ended if they have not a grace period
    /// (`[http] shutdown_grace_secs`) later. Each task starts once per server, with the first
    /// serve (or call): a later one starts nothing, and a clone serving beside it shares them.
    pub fn start_parts(&self) -> Started {
        let stopping = CancellationToken::new();
        let tasks = std::mem::take(&mut *self.shared.background.lock().unwrap_or_else(|p| p.into_inner()));
        let running = tasks
            .into_iter()
            .map(|task| tokio::spawn(task(Running { control: self.control(), stopping: stopping.clone() })))
            .collect();
        Started { stopping, running, grace: self.shared.http.shutdown_grace }
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

/// SIGINT (Ctrl-C) or SIGTERM (what `docker stop`, systemd and Kubernetes send).
#[cfg(feature = "http")]
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
