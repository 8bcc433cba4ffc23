//! What parts add to a server while it is assembled, and the handle their background tasks get.

use std::any::{Any, TypeId};
use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::BuildError;
use crate::config::{ConfigError, Settings};
use crate::state::{Background, Running};
use trails_core::pipeline::Guard;
use trails_core::registry::Registry;
use trails_kg::Kg;

/// Where a part's guard goes in the order every call passes (each guard wraps those after it):
/// provenance, validation, [`Authorize`](Slot::Authorize), [`App`](Slot::App),
/// [`Settle`](Slot::Settle), the handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Slot {
    /// After validation, before the app's own guards: whether the call may run at all (Cedar
    /// policies). A refusal here costs nothing and claims no key.
    Authorize,
    /// With the app's own guards (`App::guard`), after them, in the order parts were given.
    App,
    /// Last before the handler: what only a call that will run may take (idempotency keys, then
    /// budgets).
    Settle,
}

/// The server being assembled, as each part sees it.
pub struct Assembly<'a> {
    pub(crate) settings: &'a Settings,
    pub(crate) registry: &'a Registry,
    app_name: &'a str,
    pub(crate) kg: Option<Kg>,
    claimed: BTreeSet<String>,
    guards: HashMap<SlotKey, Vec<Arc<dyn Guard>>>,
    #[cfg(feature = "http")]
    routes: Vec<axum::Router>,
    background: Vec<Background>,
    values: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

#[derive(Hash, PartialEq, Eq)]
struct SlotKey(u8);

impl From<Slot> for SlotKey {
    fn from(slot: Slot) -> SlotKey {
        SlotKey(slot as u8)
    }
}

/// What the parts added, for the server to take apart.
pub(crate) struct Assembled {
    pub(crate) kg: Option<Kg>,
    guards: HashMap<SlotKey, Vec<Arc<dyn Guard>>>,
    #[cfg(feature = "http")]
    pub(crate) routes: Vec<axum::Router>,
    pub(crate) background: Vec<Background>,
    values: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl Assembled {
    /// The guards of `slot`, in the order they were added.
    pub(crate) fn guards(&mut self, slot: Slot) -> Vec<Arc<dyn Guard>> {
        self.guards.remove(&slot.into()).unwrap_or_default()
    }

    /// The value of type `T` a part provided.
    pub(crate) fn take<T: Any + Send + Sync>(&mut self) -> Option<T> {
        self.values.remove(&TypeId::of::<T>()).and_then(|value| value.downcast().ok()).map(|value| *value)
    }
}

impl<'a> Assembly<'a> {
    pub(crate) fn new(settings: &'a Settings, registry: &'a Registry, app_name: &'a str, kg: Option<Kg>) -> Self {
        Assembly {
            settings,
            registry,
            app_name,
            kg,
            claimed: BTreeSet::new(),
            guards: HashMap::new(),
            #[cfg(feature = "http")]
            routes: Vec::new(),
            background: Vec::new(),
            values: HashMap::new(),
        }
    }

    /// The `[name]` section of `trails.toml`, read as `T` (`None` when the file has none). Each
    /// section belongs to the part that reads it; a section no part reads stops the start.
    pub fn section<T: DeserializeOwned>(&mut self, name: &str) -> Result<Option<T>, ConfigError> {
        self.claimed.insert(name.to_owned());
        let Some(value) = self.settings.sections.get(name) else { return Ok(None) };
        T::deserialize(value.clone())
            .map(Some)
            .map_err(|source| ConfigError::Section { section: name.to_owned(), message: source.to_string() })
    }

    /// The app's name (`App::named`), as `serverInfo` gives it.
    pub fn app_name(&self) -> &str {
        self.app_name
    }

    /// The declarations linked into this binary.
    pub fn registry(&self) -> &Registry {
        self.registry
    }

    /// The knowledge graph the server serves, when the app declares node types.
    pub fn kg(&self) -> Option<&Kg> {
        self.kg.as_ref()
    }

    /// Pass every call through `guard`, at `slot`.
    pub fn guard(&mut self, slot: Slot, guard: impl Guard) {
        self.guards.entry(slot.into()).or_default().push(Arc::new(guard));
    }

    /// Serve these routes beside `/mcp`, behind the same Host/Origin check, bearer
    /// authentication (the handler reads the `trails::auth::Caller` from the request's
    /// extensions) and body bound as the built-in routes.
    #[cfg(feature = "http")]
    pub fn route(&mut self, routes: axum::Router) {
        self.routes.push(routes);
    }

    /// Run `task` beside the server: started when it starts serving (`Server::serve_http`,
    /// `Server::serve_stdio`, `App::run`), told to stop ([`Running::stopping`]) when it stops.
    pub fn background<F, Fut>(&mut self, task: F)
    where
        F: FnOnce(Running) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.background.push(Box::new(move |running| Box::pin(task(running))));
    }

    /// Leave `value` for the parts assembled after this one (and the server) to use.
    pub fn provide<T: Any + Send + Sync>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Box::new(value));
    }

    /// The value of type `T` an earlier part provided.
    pub fn provided<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.values.get(&TypeId::of::<T>()).and_then(|value| value.downcast_ref())
    }

    /// What the parts added; a section of `trails.toml` that none of them read is an error,
    /// naming the nearest one that was.
    pub(crate) fn finish(self) -> Result<Assembled, BuildError> {
        for section in self.settings.sections.keys() {
            if !self.claimed.contains(section) {
                let known = crate::config::SECTIONS.iter().copied().chain(self.claimed.iter().map(String::as_str));
                let nearest = known
                    .map(|known| (strsim::levenshtein(section, known), known))
                    .filter(|(distance, _)| *distance <= 2)
                    .min()
                    .map(|(_, known)| known.to_owned());
                return Err(BuildError::Config(ConfigError::UnknownSection { section: section.clone(), nearest }));
            }
        }
        Ok(Assembled {
            kg: self.kg,
            guards: self.guards,
            #[cfg(feature = "http")]
            routes: self.routes,
            background: self.background,
            values: self.values,
        })
    }
}
