//! A built server: its parts' background tasks, its control handle, and why serving stops.
//! How it is served is each transport's (`http.rs`, `stdio.rs`).

use std::net::SocketAddr;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::state::{Control, Running, Shared};
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
    pub(super) shared: Arc<Shared>,
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
