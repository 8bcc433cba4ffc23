//! Everything one process serves, built once and shared by every connection and transport.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use rmcp::model::Tool;

use super::listings::Listings;
use super::notifier::Subscriptions;
use crate::config::{HttpSettings, McpSettings};
use crate::resources::{Live, Resources, Spending, StoreFacts, Topic};
use trails_core::auth::Caller;
use trails_core::ctx::AppState;
use trails_core::pipeline::{Catalog, Guard, NoSuchTool, Pipeline, View};
use trails_core::registry::{PromptEntry, Registry, ResourceEntry};

/// Everything built once per process and shared by every connection.
pub(crate) struct Shared {
    /// What every call goes through.
    pub(crate) pipeline: Pipeline,
    /// The catalog's listings as the transports send them.
    pub(crate) listings: Listings,
    /// `[project]`, `[mcp]`, `[capability]`.
    pub(crate) mcp: McpSettings,
    /// What seals the `requestState` of input-required results (`[mcp] request_state_keys`).
    pub(crate) sealer: crate::wire::request_state::Sealer,
    /// `[http]` (read by HTTP, and by the sessions' bounds).
    pub(crate) http: HttpSettings,
    pub(crate) name: String,
    pub(crate) version: String,
    /// Sessions and listeners, told about tool-list and knowledge-graph changes.
    pub(crate) subscriptions: Arc<Subscriptions>,
    /// What the resources read: the knowledge graph every call gets, and the declarations.
    pub(crate) resources: Resources,
    /// What `initialize` (and `server/discover`) tells a client: the app's instructions, then
    /// how Trails' errors read.
    pub(crate) instructions: String,
    /// The app's prompts, in name order, each with its `prompts/list` entry.
    pub(crate) prompts: Vec<(&'static PromptEntry, rmcp::model::Prompt)>,
    /// The app's own resources and templates (`#[resource]`), in URI order.
    pub(crate) own_resources: OwnResources,
    /// The skills served (`skills/list`), when the app asked for them.
    pub(crate) skills: Option<crate::projection::skills::Skills>,
    /// The tasks this server keeps, when a capability declares `task` (`[tasks]`).
    pub(crate) tasks: Option<Arc<super::tasks::Tasks>>,
    /// Who issues the bearer tokens accepted beside `[[http.tokens]]` (`[auth.oauth]`).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) authority: Option<Arc<dyn super::Authority>>,
    /// What the parts left (`[coordination]`'s connection, kept open by being here; the parts'
    /// routes, which HTTP serves).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) kept: super::Kept,
    /// The parts' background tasks, until the server starts them.
    pub(crate) background: std::sync::Mutex<Vec<Background>>,
    /// Which tools each shape is part of, made when a shape is first asked for.
    shape_users: std::sync::OnceLock<trails_core::projection::shacl::ShapeUsers>,
}

/// A part's background task (`trails::part::Assembly::background`), until the server starts it.
pub(crate) type Background = Box<dyn FnOnce(super::Running) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// What the app and its parts bring besides the linked tables and the settings (assembled by
/// `App::build`).
pub(crate) struct Brought {
    pub(crate) state: Option<AppState>,
    /// `serverInfo` name and version.
    pub(crate) name: String,
    pub(crate) version: String,
    /// The app's own `instructions` (`App::instructions`).
    pub(crate) instructions: Option<String>,
    /// Serve the skills generated from the declarations (`App::generated_skills`).
    pub(crate) skills: bool,
    pub(crate) kg: Option<trails_kg::Kg>,
    /// Every guard, in the order calls pass them.
    pub(crate) guards: Vec<Arc<dyn Guard>>,
    /// What the parts left: the ledger's budgets (what `trails://stats` reports of spending),
    /// what the store part says of the store, OAuth's authority, `[coordination]`'s
    /// connection, the parts' routes.
    pub(crate) kept: super::Kept,
    pub(crate) background: Vec<Background>,
}

/// The app's `#[resource]`s, each with its listing entry.
#[derive(Default)]
pub(crate) struct OwnResources {
    pub(crate) fixed: Vec<(&'static ResourceEntry, rmcp::model::Resource)>,
    pub(crate) templates: Vec<(&'static ResourceEntry, rmcp::model::ResourceTemplate)>,
}

impl OwnResources {
    fn of(registry: &Registry) -> OwnResources {
        let mut own = OwnResources::default();
        for entry in registry.resources() {
            let listed = entry.descriptor();
            match entry.is_template() {
                true => {
                    own.templates.push((entry, serde_json::from_str(listed).expect("#[resource] emits a template")))
                }
                false => own.fixed.push((entry, serde_json::from_str(listed).expect("#[resource] emits a resource"))),
            }
        }
        own
    }

    /// The resource `uri` names for a caller with `scopes` (fixed URIs first), with its
    /// variables.
    pub(crate) fn find(
        &self,
        uri: &str,
        scopes: trails_core::auth::ScopeSet,
    ) -> Option<(&'static ResourceEntry, serde_json::Map<String, serde_json::Value>)> {
        let fixed = self.fixed.iter().map(|(entry, _)| *entry);
        let templates = self.templates.iter().map(|(entry, _)| *entry);
        fixed
            .chain(templates)
            .filter(|entry| scopes.contains(entry.scope()))
            .find_map(|entry| entry.matches(uri).map(|variables| (entry, variables)))
    }
}

impl Shared {
    pub(crate) fn new(registry: &Registry, mcp: McpSettings, http: HttpSettings, brought: Brought) -> Shared {
        let Brought { state, name, version, instructions, skills, kg, guards, mut kept, background } = brought;
        let base = kg.as_ref().map_or(trails_kg::DEFAULT_BASE, |kg| kg.base());
        let own_canonical = crate::projection::served::own_canonical(registry.tools(), base, kg.is_some());
        let skills = skills.then(|| crate::projection::skills::Skills::generated(registry, &name, &own_canonical));
        // The app's own first, then how Trails' errors read.
        let instructions = match instructions {
            Some(own) => format!("{own}\n\n{}", crate::wire::errors::instructions(mcp.validation_errors)),
            None => crate::wire::errors::instructions(mcp.validation_errors).to_owned(),
        };
        let catalog = Catalog::new(registry, mcp.production);
        let node_types: Vec<_> = registry.node_types().collect();
        let own = crate::projection::served::own_descriptors(registry.tools(), &node_types);
        let listings = Listings::new(&catalog, mcp.manifest_enabled, own, own_canonical);
        // Every initialized session is a subscriber (tool-list changes), and so is every
        // 2026-07-28 `subscriptions/listen` request: room for as many of each as of sessions.
        let subscriptions = Arc::new(Subscriptions::new(
            http.max_sessions,
            http.max_anonymous_sessions,
            mcp.max_subscriptions,
            mcp.subscription_queue,
        ));
        if let Some(kg) = &kg {
            let observer: std::sync::Weak<dyn trails_kg::changes::Observer> = Arc::downgrade(&subscriptions) as _;
            kg.observe(observer);
            #[cfg(feature = "redis")]
            if let Some(replicas) = kept.get::<super::Replicas>() {
                replicas.relay(kg, &subscriptions, &node_types);
            }
        }
        let pipeline =
            Pipeline::new(catalog, guards, state, mcp.mask_denied, (mcp.tool_window_chars, mcp.max_result_bytes));
        let resources = Resources {
            kg,
            node_types,
            manifest: mcp.manifest_enabled,
            shape_entries: registry.shapes().collect(),
            budgets: kept.take::<Arc<dyn Spending>>(),
            store: kept.take::<StoreFacts>().unwrap_or_default(),
        };
        let prompts = registry
            .prompts()
            .map(|entry| {
                let listed = serde_json::from_str(entry.descriptor()).expect("#[prompt] emits an MCP prompt");
                (entry, listed)
            })
            .collect();
        let own_resources = OwnResources::of(registry);
        Shared {
            pipeline,
            instructions,
            prompts,
            own_resources,
            skills,
            listings,
            sealer: crate::wire::request_state::Sealer::new(&mcp.request_state),
            mcp,
            http,
            name,
            version,
            subscriptions,
            resources,
            authority: kept.take::<Arc<dyn super::Authority>>(),
            tasks: kept.take::<Arc<super::tasks::Tasks>>(),
            kept,
            background: std::sync::Mutex::new(background),
            shape_users: std::sync::OnceLock::new(),
        }
    }

    /// Enable or disable a tool at run time and tell every connected session.
    pub(crate) fn set_tool_enabled(&self, name: &str, enabled: bool) -> Result<bool, NoSuchTool> {
        let changed = self.pipeline.catalog.set_enabled(name, enabled)?;
        if changed {
            tracing::info!(tool = name, enabled, "tool availability changed");
            self.subscriptions.tool_list_changed();
        }
        Ok(changed)
    }

    /// What a subscription to `uri` watches, for a caller with `scopes`: one of the app's own
    /// resources, else the server's; the `-32602` that explains why not otherwise.
    pub(crate) fn topic(&self, uri: &str, scopes: trails_core::auth::ScopeSet) -> Result<Topic, rmcp::ErrorData> {
        match self.own_resources.find(uri, scopes) {
            Some(_) => Ok(Topic::Own(uri.to_owned())),
            None => crate::resources::topic(&self.resources, uri, scopes),
        }
    }

    /// One of the app's own resources changed: its subscribers are told.
    pub(crate) fn resource_updated(&self, uri: &str) {
        self.subscriptions.fire_own(uri);
    }

    /// What `caller` sees of the catalog (its scopes, less what guards hide from it).
    pub(crate) fn view(&self, caller: &Caller) -> View {
        self.pipeline.view(caller)
    }

    /// Whether a caller with `view` sees tool `name`, as its `tools/list` would show it.
    pub(crate) fn sees(&self, view: View, name: &str) -> bool {
        let catalog = &self.pipeline.catalog;
        matches!(catalog.lookup(name, view.scopes()), trails_core::pipeline::Lookup::Found(_))
            && !catalog.hides(view, name)
    }

    /// The tools a caller with `view` sees, as rmcp's `Tool`s.
    pub(crate) fn tools(&self, view: View) -> Arc<Vec<Tool>> {
        self.listings.list(&self.pipeline.catalog, view)
    }

    /// The same, as the `tools/list` result's bytes (see `Listings::list_json`).
    pub(crate) fn tools_json(&self, view: View, current: bool) -> Bytes {
        self.listings.list_json(&self.pipeline.catalog, view, current)
    }

    /// The same for a stdio client (`manifest_uri` names the manifest resource).
    pub(crate) fn tools_stdio(&self, view: View) -> Arc<Vec<Tool>> {
        self.listings.list_stdio(&self.pipeline.catalog, view)
    }

    /// The capability manifest a caller with `view` sees: the tools `tools/list` shows it
    /// (`None`: the manifest is switched off).
    pub(crate) fn manifest_json(&self, view: View) -> Option<Bytes> {
        self.listings.manifest_json(&self.pipeline.catalog, view)
    }
}

impl Live for Shared {
    fn tool_count(&self, view: View) -> usize {
        self.tools(view).len()
    }

    fn manifest(&self, view: View) -> Option<Bytes> {
        self.manifest_json(view)
    }

    fn continuation_stats(&self) -> serde_json::Value {
        let (kept, bytes) = self.pipeline.continuations().stats();
        let max = trails_core::pipeline::MAX_KEPT_BYTES;
        serde_json::json!({ "kept": kept, "bytes": bytes, "max_bytes": max })
    }

    fn shape_shown(&self, view: View, iri: &str) -> bool {
        let users = self.shape_users.get_or_init(|| {
            let tools: Vec<_> = self.pipeline.catalog.entries().collect();
            trails_core::projection::shacl::ShapeUsers::new(&tools)
        });
        users.shown(iri, |tool| self.sees(view, tool))
    }

    fn task_stats(&self) -> serde_json::Value {
        let Some(tasks) = &self.tasks else { return serde_json::Value::Null };
        serde_json::json!({
            "running_here": tasks.runs().len(),
            "max_live_per_caller": tasks.settings.max_live,
            "max_kept_per_caller": tasks.settings.max_kept,
            "ttl_secs": tasks.settings.ttl.as_secs(),
        })
    }

    fn subscription_stats(&self) -> serde_json::Value {
        let mut stats = serde_json::json!(self.subscriptions.stats());
        stats["max_per_session"] = serde_json::json!(self.mcp.max_subscriptions);
        stats["queue_capacity"] = serde_json::json!(self.mcp.subscription_queue);
        stats
    }
}
