//! The handle a handler (or the embedding program) holds on the running server.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::shared::Shared;
use trails_core::pipeline::NoSuchTool;

/// A handle on the running server, which it attaches to every call: a handler gets it with
/// `ctx.extension::<Control>()` (`None` outside a server, as in a handler's unit test) to change
/// what the server serves.
#[derive(Clone)]
pub struct Control(pub(crate) Arc<Shared>);

impl Control {
    /// Enable or disable a tool; connected sessions get `notifications/tools/list_changed`.
    /// `Ok(false)` when it already was in that state.
    pub async fn set_tool_enabled(&self, name: &str, enabled: bool) -> Result<bool, NoSuchTool> {
        self.0.set_tool_enabled(name, enabled)
    }

    /// One of the app's own resources (`#[resource]`: a fixed URI, or one a template names)
    /// changed: the sessions and listeners subscribed to `uri` get
    /// `notifications/resources/updated` (on this replica: an app with several tells each).
    pub fn resource_updated(&self, uri: &str) {
        self.0.resource_updated(uri)
    }
}

/// A part's handle on the running server, given to its background tasks.
#[derive(Clone)]
pub struct Running {
    pub(crate) control: Control,
    pub(crate) stopping: CancellationToken,
}

impl Running {
    /// Change what the server serves (switch tools on and off).
    pub fn control(&self) -> &Control {
        &self.control
    }

    /// Completes when the server stops serving: the task should end then.
    pub async fn stopping(&self) {
        self.stopping.cancelled().await
    }
}
