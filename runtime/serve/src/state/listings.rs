//! What the transports serve of the catalog: the descriptors as rmcp's `Tool`s, `tools/list`
//! answers and OpenAPI documents, each built once per view (scopes, less what guards hide) and kept while the catalog's
//! enabled set is the one they were built from (its generation).
//!
//! Nothing is parsed at start: the hot path's `tools/list` bytes are the macro-emitted
//! descriptors put side by side, and a descriptor becomes an rmcp `Tool` only the first time
//! rmcp's own path needs it (a session's `tools/list`, `tools` on the command line).

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, OnceLock, RwLock};

use bytes::Bytes;
use rmcp::model::Tool;
use rmcp::model::{ListToolsResult, ServerResult};
use serde_json::Value;

use trails_core::pipeline::{Catalog, View};
use trails_core::registry::ToolEntry;

/// Built from one generation of the enabled set.
type Cache<K, V> = RwLock<HashMap<K, (u64, V)>>;

pub(crate) struct Listings {
    /// Tool name → its descriptor as rmcp's `Tool`, once something asked.
    parsed: HashMap<&'static str, OnceLock<Tool>>,
    /// `tools/list` answers by view.
    listings: Cache<View, Arc<Vec<Tool>>>,
    /// The same over stdio, where the manifest is the resource `trails://capabilities`.
    stdio_listings: Cache<View, Arc<Vec<Tool>>>,
    /// The same answers serialised, by (view, 2026-07-28 shape): what the hot path
    /// sends.
    encoded: Cache<(View, bool), Bytes>,
    #[cfg(feature = "http")]
    /// The OpenAPI document by view.
    openapi: Cache<View, Bytes>,
    /// The capability manifest by view.
    manifest: Cache<View, Bytes>,
    /// `[capability.manifest] enabled`: without it, descriptors link to no manifest.
    manifest_served: bool,
    /// By tool name, the descriptors this app serves in place of the macros' (the `trails_kg_*`
    /// tools with its node types' labels and field names).
    own: HashMap<&'static str, String>,
    /// By tool name, the canonical descriptors it publishes in place of the macros' (its graphs
    /// and provenance: `projection::served::own_canonical`).
    own_canonical: HashMap<&'static str, String>,
}

impl Listings {
    pub(crate) fn new(
        catalog: &Catalog,
        manifest_served: bool,
        own: HashMap<&'static str, String>,
        own_canonical: HashMap<&'static str, String>,
    ) -> Listings {
        let listings = Listings {
            parsed: catalog.entries().map(|entry| (entry.name(), OnceLock::new())).collect(),
            listings: RwLock::default(),
            stdio_listings: RwLock::default(),
            encoded: RwLock::default(),
            #[cfg(feature = "http")]
            openapi: RwLock::default(),
            manifest: RwLock::default(),
            manifest_served,
            own,
            own_canonical,
        };
        // Debug builds (every `cargo run` and test of an app) read every descriptor now, so a
        // code-generation bug stops the start where a developer sees it, not a later request.
        if cfg!(debug_assertions) {
            for entry in catalog.entries() {
                listings.tool(entry);
            }
        }
        listings
    }

    /// The descriptor of `entry` (a tool of the catalog) as rmcp's `Tool`, parsed the first time
    /// it is asked for.
    pub(crate) fn tool(&self, entry: &'static ToolEntry) -> &Tool {
        self.parsed[entry.name()].get_or_init(|| {
            // The descriptors are the macros' own output, and `tests/tests/it/registry.rs` reads
            // every one the fixture and example apps declare as rmcp does: failing here is a bug
            // in Trails' code generation, not something a request or a declaration can cause.
            let mut tool: Tool = serde_json::from_str(&self.descriptor(entry)).unwrap_or_else(|e| {
                panic!("descriptor of `{}` is not a valid MCP tool ({e}); this is a bug in Trails", entry.name())
            });
            // Borrow the static strings: `tools/list` on rmcp's path clones every tool per request.
            tool.name = Cow::Borrowed(entry.name());
            tool.description = Some(Cow::Borrowed(entry.description()));
            tool
        })
    }

    /// The tools a caller with `view` sees, in name order.
    pub(crate) fn list(&self, catalog: &Catalog, view: View) -> Arc<Vec<Tool>> {
        cached(&self.listings, catalog, view, view, |tools| {
            Arc::new(tools.into_iter().map(|entry| self.tool(entry).clone()).collect())
        })
    }

    /// The same tools as [`list`](Self::list) for a stdio client: each `manifest_uri` names the
    /// resource `trails://capabilities` (a path relative to nothing means nothing there).
    pub(crate) fn list_stdio(&self, catalog: &Catalog, view: View) -> Arc<Vec<Tool>> {
        if !self.manifest_served {
            return self.list(catalog, view);
        }
        cached(&self.stdio_listings, catalog, view, view, |tools| {
            Arc::new(tools.into_iter().map(|entry| link_to_resource(self.tool(entry).clone())).collect())
        })
    }

    /// The `tools/list` result for `view` as rmcp serialises it, for 2026-07-28 peers
    /// (`current`: with `resultType` and cache hints) or older ones; built once, from the
    /// descriptors as the macros wrote them.
    pub(crate) fn list_json(&self, catalog: &Catalog, view: View, current: bool) -> Bytes {
        cached(&self.encoded, catalog, (view, current), view, |tools| self.encode_list(&tools, current))
    }

    #[cfg(feature = "http")]
    /// The OpenAPI document for `view`: what `render` makes of the visible tools, each with
    /// the descriptor it is served with (before any manifest link is taken out).
    pub(crate) fn openapi_json(
        &self,
        catalog: &Catalog,
        view: View,
        render: impl FnOnce(Vec<(&'static ToolEntry, &str, &str)>) -> String,
    ) -> Bytes {
        cached(&self.openapi, catalog, view, view, |tools| {
            Bytes::from(render(tools.into_iter().map(|tool| (tool, self.source(tool), self.canonical(tool))).collect()))
        })
    }

    /// The capability manifest for `view`: the tools that caller sees, as `tools/list` shows
    /// them; `None` when `[capability.manifest] enabled` is off.
    pub(crate) fn manifest_json(&self, catalog: &Catalog, view: View) -> Option<Bytes> {
        if !self.manifest_served {
            return None;
        }
        Some(cached(&self.manifest, catalog, view, view, |tools| {
            Bytes::from(trails_core::projection::manifest_of(tools.into_iter().map(|tool| self.canonical(tool))))
        }))
    }
}

impl Listings {
    /// The canonical descriptor of `entry` this app publishes: its own, or the macros'.
    fn canonical(&self, entry: &'static ToolEntry) -> &str {
        self.own_canonical.get(entry.name()).map_or(entry.canonical(), String::as_str)
    }

    /// The descriptor of `entry` this app serves: its own, or the macros'.
    fn source(&self, entry: &'static ToolEntry) -> &str {
        self.own.get(entry.name()).map_or(entry.descriptor(), String::as_str)
    }

    /// The descriptor of `entry` as served, without its `_meta.trails.manifest_uri` when no
    /// manifest is served (a link to nothing).
    fn descriptor(&self, entry: &'static ToolEntry) -> Cow<'_, str> {
        let text = self.source(entry);
        if self.manifest_served {
            return Cow::Borrowed(text);
        }
        // The macros write `manifest_uri` last in `_meta.trails`, and `_meta` last in the
        // descriptor (and the app's own keep the order): `…,"manifest_uri":"/.well-known/capabilities#<id>"}}}`.
        const LINK: &str = ",\"manifest_uri\":\"/.well-known/capabilities#";
        match text.rfind(LINK) {
            Some(at) if text[at..].ends_with("\"}}}") && !text[at + LINK.len()..text.len() - 4].contains('"') => {
                Cow::Owned(format!("{}}}}}}}", &text[..at]))
            }
            _ => Cow::Borrowed(text),
        }
    }

    /// rmcp's serialisation of an empty listing, with the descriptors in its `tools` array. Each
    /// descriptor is the JSON rmcp writes for that `Tool` (compact, the same members; only their
    /// order may differ): `tests/tests/it/registry.rs` holds every declared tool to that.
    fn encode_list(&self, tools: &[&'static ToolEntry], current: bool) -> Bytes {
        let mut empty = ServerResult::ListToolsResult(ListToolsResult::with_all_items(Vec::new()));
        crate::wire::shape_result(&mut empty, current);
        let empty = serde_json::to_vec(&empty).expect("an empty listing serialises");
        const TOOLS: &[u8] = br#""tools":["#;
        let at =
            empty.windows(TOOLS.len()).position(|w| w == TOOLS).expect("a listing has a `tools` array") + TOOLS.len();
        let descriptors: Vec<Cow<'_, str>> = tools.iter().map(|tool| self.descriptor(tool)).collect();
        let mut bytes = Vec::with_capacity(empty.len() + descriptors.iter().map(|d| d.len() + 1).sum::<usize>());
        bytes.extend_from_slice(&empty[..at]);
        for (i, descriptor) in descriptors.iter().enumerate() {
            if i > 0 {
                bytes.push(b',');
            }
            bytes.extend_from_slice(descriptor.as_bytes());
        }
        bytes.extend_from_slice(&empty[at..]);
        Bytes::from(bytes)
    }
}

/// `tool` with its `_meta.trails.manifest_uri` pointing into the resource `trails://capabilities`
/// (same fragment: the capability's id).
fn link_to_resource(mut tool: Tool) -> Tool {
    let trails = tool.meta.as_mut().and_then(|meta| meta.0.get_mut("trails")).and_then(Value::as_object_mut);
    if let Some(Value::String(uri)) = trails.and_then(|trails| trails.get_mut("manifest_uri")) {
        if let Some(id) = uri.strip_prefix("/.well-known/capabilities#") {
            *uri = format!("{}#{id}", crate::resources::MANIFEST_URI);
        }
    }
    tool
}

/// The value for `key` (of a caller with `view`) built from the current enabled set: the
/// cached one, unless the set changed since it was built.
fn cached<K: Hash + Eq + Copy, V: Clone>(
    cache: &Cache<K, V>,
    catalog: &Catalog,
    key: K,
    view: View,
    build: impl FnOnce(Vec<&'static ToolEntry>) -> V,
) -> V {
    let current = catalog.generation();
    if let Some((generation, value)) = cache.read().unwrap_or_else(|p| p.into_inner()).get(&key) {
        if *generation == current {
            return value.clone();
        }
    }
    let (generation, tools) = catalog.visible(view);
    let value = build(tools);
    let mut cache = cache.write().unwrap_or_else(|p| p.into_inner());
    // A value of an older set never replaces one of a newer set.
    if cache.get(&key).is_none_or(|(kept, _)| *kept < generation) {
        cache.insert(key, (generation, value.clone()));
    }
    value
}
