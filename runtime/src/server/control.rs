//! The handle a handler (or the embedding program) holds on the running server.

use std::sync::Arc;

use super::catalog::NoSuchTool;
use super::shared::Shared;

/// A handle handlers get through [`Ctx::control`](crate::Ctx::control) to change what the
/// server serves.
#[derive(Clone)]
pub struct Control(pub(crate) Arc<Shared>);

impl Control {
    /// Enable or disable a tool; connected sessions get `notifications/tools/list_changed`.
    /// `Ok(false)` when it already was in that state.
    pub async fn set_tool_enabled(&self, name: &str, enabled: bool) -> Result<bool, NoSuchTool> {
        self.0.set_tool_enabled(name, enabled)
    }
}
