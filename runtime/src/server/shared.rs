//! Everything one process serves, built once and shared by every connection and transport.

use crate::config::Settings;
use crate::kg::Kg;
use crate::registry::Registry;

use super::catalog::{BadDescriptor, Catalog, NoSuchTool};
use super::ctx::AppState;
use super::notifier::Notifier;

/// Everything built once per process and shared by every connection.
pub(crate) struct Shared {
    pub(crate) catalog: Catalog,
    pub(crate) settings: Settings,
    pub(crate) state: Option<AppState>,
    pub(crate) name: String,
    pub(crate) version: String,
    /// The capability manifest, rendered once.
    pub(crate) manifest: String,
    pub(crate) notifier: Notifier,
    /// The knowledge graph every call gets (`None`: the app declares no node type).
    pub(crate) kg: Option<Kg>,
}

impl Shared {
    pub(crate) fn new(
        registry: &Registry,
        settings: Settings,
        state: Option<AppState>,
        name: String,
        version: String,
        kg: Option<Kg>,
    ) -> Result<Shared, BadDescriptor> {
        let catalog = Catalog::new(registry, settings.production)?;
        let manifest = crate::projection::manifest(registry);
        Ok(Shared { catalog, settings, state, name, version, manifest, notifier: Notifier::default(), kg })
    }

    /// Enable or disable a tool at run time and tell every connected session.
    pub(crate) async fn set_tool_enabled(&self, name: &str, enabled: bool) -> Result<bool, NoSuchTool> {
        let changed = self.catalog.set_enabled(name, enabled)?;
        if changed {
            tracing::info!(tool = name, enabled, "tool availability changed");
            self.notifier.tool_list_changed().await;
        }
        Ok(changed)
    }
}
