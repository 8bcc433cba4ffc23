//! The served tool set: the registry's descriptors, the run-time enable/disable switch, and
//! `tools/list` answers cached per effective scope set.
//!
//! Nothing is parsed at start: the hot path's `tools/list` bytes are the macro-emitted
//! descriptors put side by side, and a descriptor becomes an rmcp `Tool` only the first time
//! rmcp's own path needs it (a session's `tools/list`, `tools` on the command line).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, OnceLock, RwLock};

use axum::body::Bytes;
use rmcp::model::{ListToolsResult, ServerResult, Tool};

use crate::auth::{Scope, ScopeSet};
use crate::registry::{Registry, ToolEntry};

/// One served tool: its static entry, and its descriptor as rmcp's `Tool` once something asked.
pub(crate) struct CatalogTool {
    pub(crate) entry: &'static ToolEntry,
    parsed: OnceLock<Tool>,
    /// `Some` when the capability's `version_status` is `deprecated`.
    deprecation: Option<Deprecation>,
}

/// A deprecated capability: what supersedes it (a capability that `deprecates` it), and whether
/// a call was logged already (once per process: a log line per call would drown the log).
struct Deprecation {
    superseded_by: Option<&'static str>,
    logged: std::sync::atomic::AtomicBool,
}

impl CatalogTool {
    /// Log the first call of a deprecated capability, naming what supersedes it.
    pub(crate) fn note_call(&self, caller: Option<&str>) {
        let Some(deprecation) = &self.deprecation else { return };
        if deprecation.logged.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let caller = caller.unwrap_or("anonymous");
        match deprecation.superseded_by {
            Some(successor) => tracing::warn!(
                capability = self.entry.id,
                caller,
                superseded_by = successor,
                "a deprecated capability was called (logged once)"
            ),
            None => {
                tracing::warn!(capability = self.entry.id, caller, "a deprecated capability was called (logged once)")
            }
        }
    }

    /// The descriptor as rmcp's `Tool`, parsed the first time it is asked for.
    pub(crate) fn tool(&self) -> &Tool {
        self.parsed.get_or_init(|| {
            // The descriptors are the macros' own output, and `tests/tests/registry.rs` reads
            // every one the fixture and example apps declare as rmcp does: failing here is a bug
            // in Trails' code generation, not something a request or a declaration can cause.
            let mut tool: Tool = serde_json::from_str(self.entry.descriptor).unwrap_or_else(|e| {
                panic!("descriptor of `{}` is not a valid MCP tool ({e}); this is a bug in Trails", self.entry.name)
            });
            // Borrow the static strings: `tools/list` on rmcp's path clones every tool per request.
            tool.name = Cow::Borrowed(self.entry.name);
            tool.description = Some(Cow::Borrowed(self.entry.description));
            tool
        })
    }
}

/// The served tool set.
pub(crate) struct Catalog {
    tools: Vec<CatalogTool>,
    /// Capability id → tool name (`POST /invoke/{id}` names the capability).
    names_by_id: HashMap<&'static str, &'static str>,
    production: bool,
    disabled: RwLock<BTreeSet<&'static str>>,
    /// `tools/list` answers by scope-set bits; cleared whenever the enabled set changes.
    listings: RwLock<HashMap<u8, Arc<Vec<Tool>>>>,
    /// The same answers serialised, by (scope-set bits, 2026-07-28 shape): what the hot path
    /// sends. Cleared with `listings`.
    encoded: RwLock<HashMap<(u8, bool), Bytes>>,
    /// The OpenAPI document by scope-set bits. Cleared with `listings`.
    openapi: RwLock<HashMap<u8, Bytes>>,
    /// Whether any input schema declares SEP-2243 `x-mcp-header` parameters (rmcp then checks
    /// `Mcp-Param-*` headers, which the hot path leaves to it).
    param_headers: bool,
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
    /// The registry's tools, in name order; nothing parsed yet.
    pub(crate) fn new(registry: &Registry, production: bool) -> Catalog {
        // The `trails.kg.*` and `trails.meta.kg.*` tools read node types: an app without any does not serve them.
        let has_kg = registry.node_types().next().is_some();
        // Which capability supersedes which.
        let successors: HashMap<&'static str, &'static str> =
            registry.tools().filter_map(|entry| Some((entry.deprecates()?, entry.id))).collect();
        let tools: Vec<CatalogTool> = registry
            .tools()
            .filter(|entry| has_kg || !crate::builtin::is_kg_tool(entry.id()))
            .map(|entry| {
                let deprecation = entry.deprecated().then(|| Deprecation {
                    superseded_by: successors.get(entry.id).copied(),
                    logged: std::sync::atomic::AtomicBool::new(false),
                });
                CatalogTool { entry, parsed: OnceLock::new(), deprecation }
            })
            .collect();
        let param_headers = tools.iter().any(|t| t.entry.descriptor.contains("x-mcp-header"));
        // Debug builds (every `cargo run` and test of an app) read every descriptor now, so a
        // code-generation bug stops the start where a developer sees it, not a later request.
        if cfg!(debug_assertions) {
            for tool in &tools {
                tool.tool();
            }
        }
        Catalog {
            names_by_id: tools.iter().map(|t| (t.entry.id, t.entry.name)).collect(),
            tools,
            production,
            disabled: RwLock::default(),
            listings: RwLock::default(),
            encoded: RwLock::default(),
            openapi: RwLock::default(),
            param_headers,
        }
    }

    /// The tools a caller with `scopes` sees, in name order.
    fn visible(&self, scopes: ScopeSet) -> impl Iterator<Item = &CatalogTool> {
        self.tools.iter().filter(move |t| self.served(t.entry) && scopes.contains(t.entry.scope))
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
            .or_insert_with(|| Arc::new(self.visible(scopes).map(|t| t.tool().clone()).collect()))
            .clone()
    }

    /// The `tools/list` result for `scopes` as rmcp serialises it, for 2026-07-28 peers
    /// (`current`: with `resultType` and cache hints) or older ones; built once, from the
    /// descriptors as the macros wrote them.
    pub(crate) fn list_json(&self, scopes: ScopeSet, current: bool) -> Bytes {
        let key = (scopes.bits(), current);
        if let Some(cached) = self.encoded.read().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return cached.clone();
        }
        let mut encoded = self.encoded.write().unwrap_or_else(|p| p.into_inner());
        encoded.entry(key).or_insert_with(|| self.encode_list(scopes, current)).clone()
    }

    /// rmcp's serialisation of an empty listing, with the descriptors in its `tools` array. Each
    /// descriptor is the JSON rmcp writes for that `Tool` (compact, the same members; only their
    /// order may differ): `tests/tests/registry.rs` holds every declared tool to that.
    fn encode_list(&self, scopes: ScopeSet, current: bool) -> Bytes {
        let mut empty = ServerResult::ListToolsResult(ListToolsResult::with_all_items(Vec::new()));
        crate::http::shape_result(&mut empty, current);
        let empty = serde_json::to_vec(&empty).expect("an empty listing serialises");
        const TOOLS: &[u8] = br#""tools":["#;
        let at =
            empty.windows(TOOLS.len()).position(|w| w == TOOLS).expect("a listing has a `tools` array") + TOOLS.len();
        let visible: Vec<&str> = self.visible(scopes).map(|t| t.entry.descriptor).collect();
        let mut bytes = Vec::with_capacity(empty.len() + visible.iter().map(|d| d.len() + 1).sum::<usize>());
        bytes.extend_from_slice(&empty[..at]);
        for (i, descriptor) in visible.into_iter().enumerate() {
            if i > 0 {
                bytes.push(b',');
            }
            bytes.extend_from_slice(descriptor.as_bytes());
        }
        bytes.extend_from_slice(&empty[at..]);
        Bytes::from(bytes)
    }

    /// The OpenAPI document for `scopes`: what `render` makes of the visible tools, built once
    /// per enabled set (cleared with the listings).
    pub(crate) fn openapi_json(
        &self,
        scopes: ScopeSet,
        render: impl FnOnce(Vec<&'static ToolEntry>) -> String,
    ) -> Bytes {
        if let Some(cached) = self.openapi.read().unwrap_or_else(|p| p.into_inner()).get(&scopes.bits()) {
            return cached.clone();
        }
        let mut documents = self.openapi.write().unwrap_or_else(|p| p.into_inner());
        documents
            .entry(scopes.bits())
            .or_insert_with(|| Bytes::from(render(self.visible(scopes).map(|t| t.entry).collect())))
            .clone()
    }

    /// Whether any tool's input schema declares SEP-2243 `x-mcp-header` parameters.
    pub(crate) fn declares_param_headers(&self) -> bool {
        self.param_headers
    }

    /// The tool name of capability `id`, if the server has it (served or not).
    pub(crate) fn name_of(&self, id: &str) -> Option<&'static str> {
        self.names_by_id.get(id).copied()
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
        // Every cache locked across the change (in the order the builders take them), so no
        // listing of the old set survives it.
        let mut openapi = self.openapi.write().unwrap_or_else(|p| p.into_inner());
        let mut encoded = self.encoded.write().unwrap_or_else(|p| p.into_inner());
        let mut listings = self.listings.write().unwrap_or_else(|p| p.into_inner());
        let mut disabled = self.disabled.write().unwrap_or_else(|p| p.into_inner());
        let changed = if enabled { disabled.remove(tool.entry.name) } else { disabled.insert(tool.entry.name) };
        if changed {
            listings.clear();
            encoded.clear();
            openapi.clear();
        }
        Ok(changed)
    }
}
