//! The served tool set: the registry's descriptors parsed once into rmcp `Tool`s, the run-time
//! enable/disable switch, and `tools/list` answers cached per effective scope set.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use axum::body::Bytes;
use rmcp::model::{ListToolsResult, ServerResult, Tool};

use crate::auth::{Scope, ScopeSet};
use crate::registry::{Registry, ToolEntry};

/// One served tool: its static entry and its descriptor parsed once.
pub(crate) struct CatalogTool {
    pub(crate) entry: &'static ToolEntry,
    pub(crate) tool: Tool,
}

/// The served tool set.
pub(crate) struct Catalog {
    tools: Vec<CatalogTool>,
    production: bool,
    disabled: RwLock<BTreeSet<&'static str>>,
    /// `tools/list` answers by scope-set bits; cleared whenever the enabled set changes.
    listings: RwLock<HashMap<u8, Arc<Vec<Tool>>>>,
    /// The same answers serialised, by (scope-set bits, 2026-07-28 shape): what the hot path
    /// sends. Cleared with `listings`.
    encoded: RwLock<HashMap<(u8, bool), Bytes>>,
    /// Whether any input schema declares SEP-2243 `x-mcp-header` parameters (rmcp then checks
    /// `Mcp-Param-*` headers, which the hot path leaves to it).
    param_headers: bool,
}

/// A macro-emitted descriptor rmcp cannot read: a bug in Trails, reported with the tool.
#[derive(Debug, Clone, thiserror::Error)]
#[error("descriptor of `{tool}` is not a valid MCP tool ({reason}); this is a bug in Trails, please report it")]
pub struct BadDescriptor {
    /// The tool's MCP name.
    pub tool: &'static str,
    /// serde's message.
    pub reason: String,
}

/// Enabling or disabling a tool the server does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no tool named `{0}`")]
pub struct NoSuchTool(pub String);

/// What looking a tool up for a caller found.
pub(crate) enum Lookup<'a> {
    Found(&'a CatalogTool),
    /// Exists and is served, but needs a scope the caller lacks.
    Denied(&'a CatalogTool),
    /// Not served to anyone (unknown, disabled, or `dev` in production).
    Unknown,
}

impl Catalog {
    /// Parse every descriptor once. The descriptors come from the macros, so a parse failure is
    /// a bug in Trails, reported with the tool's name.
    pub(crate) fn new(registry: &Registry, production: bool) -> Result<Catalog, BadDescriptor> {
        // The `trails.kg.*` tools read node types: an app without any does not serve them.
        let has_kg = registry.node_types().next().is_some();
        let tools = registry
            .tools()
            .filter(|entry| has_kg || !entry.id().starts_with(crate::builtin::KG_TOOLS))
            .map(|entry| {
                serde_json::from_str::<Tool>(entry.descriptor)
                    .map(|mut tool| {
                        // Borrow the static strings: `tools/list` clones every tool per request.
                        tool.name = Cow::Borrowed(entry.name);
                        tool.description = Some(Cow::Borrowed(entry.description));
                        CatalogTool { entry, tool }
                    })
                    .map_err(|e| BadDescriptor { tool: entry.name, reason: e.to_string() })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let param_headers = tools.iter().any(|t| t.entry.descriptor.contains("x-mcp-header"));
        Ok(Catalog {
            tools,
            production,
            disabled: RwLock::default(),
            listings: RwLock::default(),
            encoded: RwLock::default(),
            param_headers,
        })
    }

    fn served(&self, entry: &ToolEntry) -> bool {
        let hidden_in_production = self.production && entry.scope == Scope::Dev;
        let disabled = self.disabled.read().unwrap_or_else(|p| p.into_inner()).contains(entry.name);
        !hidden_in_production && !disabled
    }

    /// The tools a caller with `scopes` sees, in name order.
    pub(crate) fn list(&self, scopes: ScopeSet) -> Arc<Vec<Tool>> {
        if let Some(cached) = self.listings.read().unwrap_or_else(|p| p.into_inner()).get(&scopes.bits()) {
            return cached.clone();
        }
        // Built under the write lock, which `set_enabled` also holds while it changes the enabled
        // set: a listing built from the old set cannot be cached after the change cleared it.
        let mut listings = self.listings.write().unwrap_or_else(|p| p.into_inner());
        listings
            .entry(scopes.bits())
            .or_insert_with(|| {
                Arc::new(
                    self.tools
                        .iter()
                        .filter(|t| self.served(t.entry) && scopes.contains(t.entry.scope))
                        .map(|t| t.tool.clone())
                        .collect(),
                )
            })
            .clone()
    }

    /// The `tools/list` result for `scopes` as rmcp serialises it, for 2026-07-28 peers
    /// (`current`: with `resultType` and cache hints) or older ones; serialised once.
    pub(crate) fn list_json(&self, scopes: ScopeSet, current: bool) -> Bytes {
        let key = (scopes.bits(), current);
        if let Some(cached) = self.encoded.read().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return cached.clone();
        }
        let mut encoded = self.encoded.write().unwrap_or_else(|p| p.into_inner());
        encoded
            .entry(key)
            .or_insert_with(|| {
                let mut result =
                    ServerResult::ListToolsResult(ListToolsResult::with_all_items(self.list(scopes).as_ref().clone()));
                crate::http::shape_result(&mut result, current);
                Bytes::from(serde_json::to_vec(&result).expect("tool descriptors serialise"))
            })
            .clone()
    }

    /// Whether any tool's input schema declares SEP-2243 `x-mcp-header` parameters.
    pub(crate) fn declares_param_headers(&self) -> bool {
        self.param_headers
    }

    pub(crate) fn lookup(&self, name: &str, scopes: ScopeSet) -> Lookup<'_> {
        let Ok(index) = self.tools.binary_search_by(|t| t.entry.name.cmp(name)) else { return Lookup::Unknown };
        let tool = &self.tools[index];
        if !self.served(tool.entry) {
            Lookup::Unknown
        } else if scopes.contains(tool.entry.scope) {
            Lookup::Found(tool)
        } else {
            Lookup::Denied(tool)
        }
    }

    /// Enable or disable a tool; `Ok(true)` when that changed anything.
    pub(crate) fn set_enabled(&self, name: &str, enabled: bool) -> Result<bool, NoSuchTool> {
        let Some(tool) = self.tools.iter().find(|t| t.entry.name == name) else {
            return Err(NoSuchTool(name.to_owned()));
        };
        // Both caches locked across the change (in the order the builders take them), so no
        // listing of the old set survives it.
        let mut encoded = self.encoded.write().unwrap_or_else(|p| p.into_inner());
        let mut listings = self.listings.write().unwrap_or_else(|p| p.into_inner());
        let mut disabled = self.disabled.write().unwrap_or_else(|p| p.into_inner());
        let changed = if enabled { disabled.remove(tool.entry.name) } else { disabled.insert(tool.entry.name) };
        if changed {
            listings.clear();
            encoded.clear();
        }
        Ok(changed)
    }
}
