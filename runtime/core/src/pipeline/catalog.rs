//! The served tool set: which tool a caller may call, the run-time enable switch, and
//! `production` hiding `dev` tools. What the transports build from it (rmcp's `Tool`s, the
//! encoded `tools/list`, the OpenAPI document) is keyed by its [`Catalog::generation`], which
//! every change bumps, so no listing of an earlier set outlives a change.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::RwLock;

use crate::auth::{Scope, ScopeSet};
use crate::registry::{Registry, ToolEntry};

/// One served tool.
pub struct Served {
    /// The capability.
    pub entry: &'static ToolEntry,
    /// `Some` when the capability's `version_status` is `deprecated`.
    deprecation: Option<Deprecation>,
}

/// A deprecated capability: what supersedes it (a capability that `deprecates` it), and whether
/// a call was logged already (once per process: a log line per call would drown the log).
struct Deprecation {
    superseded_by: Option<&'static str>,
    logged: AtomicBool,
}

impl Served {
    /// Log the first call of a deprecated capability, naming what supersedes it.
    pub fn note_call(&self, caller: Option<&str>) {
        let Some(deprecation) = &self.deprecation else { return };
        if deprecation.logged.swap(true, Ordering::Relaxed) {
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
}

/// Enabling or disabling a tool the server does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no tool named `{0}`")]
pub struct NoSuchTool(pub String);

/// What looking a tool up for a caller found.
pub enum Lookup<'a> {
    /// Served, and the caller may call it.
    Found(&'a Served),
    /// Exists and is served, but needs a scope the caller lacks.
    Denied(&'a Served),
    /// Not served to anyone (unknown, disabled, or `dev` in production).
    Unknown,
}

/// What one caller sees of the catalog: its scopes and the tools guards hide from it (see
/// [`Guard::refuses_always`](super::Guard::refuses_always)). Listings are built and cached per
/// view; callers who see the same tools share one.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct View {
    scopes: ScopeSet,
    /// Index of the hidden set in the catalog's table (0: nothing hidden).
    hidden: u32,
}

impl View {
    /// Everything `scopes` may see, nothing hidden.
    pub fn of(scopes: ScopeSet) -> View {
        View { scopes, hidden: 0 }
    }

    /// The caller's scopes.
    pub fn scopes(self) -> ScopeSet {
        self.scopes
    }
}

/// The served tool set.
pub struct Catalog {
    /// In name order.
    tools: Vec<Served>,
    /// Capability id → tool name (`POST /invoke/{id}` names the capability).
    names_by_id: HashMap<&'static str, &'static str>,
    production: bool,
    disabled: RwLock<BTreeSet<&'static str>>,
    /// Bumped under `disabled`'s write lock by every change of the enabled set.
    generation: AtomicU64,
    /// The distinct sets of tools hidden from some caller, by [`View`] index; the first is empty.
    /// As many as distinct sets the guards produced (bounded by the callers, which are bounded).
    hidden: RwLock<Vec<BTreeSet<&'static str>>>,
}

/// The knowledge-graph tools (`trails.kg.*`, `trails.meta.kg.*`) read node types: an app that
/// declares none does not serve them.
fn needs_node_types(id: &str) -> bool {
    id.starts_with("trails.kg.") || id.starts_with("trails.meta.kg.")
}

impl Catalog {
    /// The registry's tools, in name order.
    pub fn new(registry: &Registry, production: bool) -> Catalog {
        let has_node_types = registry.node_types().next().is_some();
        // Which capability supersedes which.
        let successors: HashMap<&'static str, &'static str> =
            registry.tools().filter_map(|entry| Some((entry.deprecates()?, entry.id))).collect();
        let tools: Vec<Served> = registry
            .tools()
            .filter(|entry| has_node_types || !needs_node_types(entry.id()))
            .map(|entry| {
                let deprecation = entry.deprecated().then(|| Deprecation {
                    superseded_by: successors.get(entry.id).copied(),
                    logged: AtomicBool::new(false),
                });
                Served { entry, deprecation }
            })
            .collect();
        Catalog {
            names_by_id: tools.iter().map(|t| (t.entry.id, t.entry.name)).collect(),
            tools,
            production,
            disabled: RwLock::default(),
            generation: AtomicU64::new(0),
            hidden: RwLock::new(vec![BTreeSet::new()]),
        }
    }

    /// Every tool the server has, served or not, in name order.
    pub fn entries(&self) -> impl Iterator<Item = &'static ToolEntry> + '_ {
        self.tools.iter().map(|t| t.entry)
    }

    fn served(&self, entry: &ToolEntry, disabled: &BTreeSet<&'static str>) -> bool {
        let hidden_in_production = self.production && entry.scope == Scope::Dev;
        !hidden_in_production && !disabled.contains(entry.name)
    }

    /// The tools a caller with `view` sees, in name order, with the generation of the enabled
    /// set they come from (read together, under one lock).
    pub fn visible(&self, view: View) -> (u64, Vec<&'static ToolEntry>) {
        let hidden = self.hidden.read().unwrap_or_else(|p| p.into_inner());
        let hidden = &hidden[view.hidden as usize];
        let disabled = self.disabled.read().unwrap_or_else(|p| p.into_inner());
        let tools = self
            .tools
            .iter()
            .filter(|t| self.served(t.entry, &disabled) && view.scopes.contains(t.entry.scope))
            .filter(|t| !hidden.contains(t.entry.name))
            .map(|t| t.entry)
            .collect();
        (self.generation.load(Ordering::Acquire), tools)
    }

    /// Whether tool `name` is hidden from a caller with `view`.
    pub fn hides(&self, view: View, name: &str) -> bool {
        view.hidden != 0 && self.hidden.read().unwrap_or_else(|p| p.into_inner())[view.hidden as usize].contains(name)
    }

    /// The view of a caller with `scopes` from whom `hidden` is hidden.
    pub(crate) fn view(&self, scopes: ScopeSet, hidden: BTreeSet<&'static str>) -> View {
        if hidden.is_empty() {
            return View::of(scopes);
        }
        let mut sets = self.hidden.write().unwrap_or_else(|p| p.into_inner());
        let index = match sets.iter().position(|set| *set == hidden) {
            Some(index) => index,
            None => {
                sets.push(hidden);
                sets.len() - 1
            }
        };
        View { scopes, hidden: u32::try_from(index).expect("fewer hidden sets than callers") }
    }

    /// Changes with every change of the enabled set.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The tool name of capability `id`, if the server has it (served or not). Where a person
    /// types a name (`/invoke/{id}`, the CLI's `meta`) either spelling works: the canonical id
    /// (`requirements.search`) or the tool name it projects to (`requirements_search`).
    pub fn name_of(&self, id: &str) -> Option<&'static str> {
        self.names_by_id.get(id).copied().or_else(|| {
            let index = self.tools.binary_search_by(|t| t.entry.name.cmp(id)).ok()?;
            Some(self.tools[index].entry.name)
        })
    }

    /// The server's tool `name` (served or not).
    pub fn entry(&self, name: &str) -> Option<&'static ToolEntry> {
        let index = self.tools.binary_search_by(|t| t.entry.name.cmp(name)).ok()?;
        Some(self.tools[index].entry)
    }

    /// Tool `name` as a caller with `scopes` finds it.
    pub fn lookup(&self, name: &str, scopes: ScopeSet) -> Lookup<'_> {
        let Ok(index) = self.tools.binary_search_by(|t| t.entry.name.cmp(name)) else { return Lookup::Unknown };
        let tool = &self.tools[index];
        if !self.served(tool.entry, &self.disabled.read().unwrap_or_else(|p| p.into_inner())) {
            Lookup::Unknown
        } else if scopes.contains(tool.entry.scope) {
            Lookup::Found(tool)
        } else {
            Lookup::Denied(tool)
        }
    }

    /// Enable or disable a tool; `Ok(true)` when that changed anything.
    pub fn set_enabled(&self, name: &str, enabled: bool) -> Result<bool, NoSuchTool> {
        let Some(tool) = self.name_of(name).and_then(|name| self.tools.iter().find(|t| t.entry.name == name)) else {
            return Err(NoSuchTool(name.to_owned()));
        };
        let mut disabled = self.disabled.write().unwrap_or_else(|p| p.into_inner());
        let changed = if enabled { disabled.remove(tool.entry.name) } else { disabled.insert(tool.entry.name) };
        if changed {
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
        Ok(changed)
    }
}
