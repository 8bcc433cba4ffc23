//! What parts add to a server while it is assembled.

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::{BuildError, Part};
use crate::config::{ConfigError, Env, SECTIONS};
use crate::state::{Background, Kept, Running};
use trails_core::pipeline::Guard;
use trails_core::registry::Registry;
use trails_kg::Kg;

/// Where a part's guard goes in the order every call passes (each guard wraps those after it):
/// provenance, validation, [`Authorize`](Slot::Authorize), the app's own guards,
/// [`App`](Slot::App), [`Settle`](Slot::Settle), the handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Slot {
    /// After validation, before the app's own guards: whether the call may run at all (Cedar
    /// policies). A refusal here costs nothing and claims no key.
    Authorize,
    /// After the app's own guards (`App::guard`), in the order parts were given.
    App,
    /// Last before the handler: what only a call that will run may take (the ledger's
    /// idempotency keys, then its budget charge). A later part's guards here run before an
    /// earlier part's, so the built-in ledger's charge stays the last step.
    Settle,
}

/// The paths the server serves itself (some only when configured), and the prefixes it keeps:
/// a part's route may not take one (`http/mod.rs` serves them).
#[cfg(feature = "http")]
pub(crate) const SERVED_PATHS: &[&str] =
    &["/mcp", "/healthz", "/openapi.json", "/shapes.ttl", "/.well-known/", "/invoke/", "/shapes/", "/blobs/"];

/// The routes the parts added, served beside `/mcp` (`http/mod.rs` takes them from what the
/// parts left): (path, route).
#[cfg(feature = "http")]
#[derive(Default)]
pub(crate) struct PartRoutes(pub(crate) Vec<(String, axum::routing::MethodRouter)>);

/// The server being assembled, as each part sees it.
pub struct Assembly<'a> {
    /// The sections of `trails.toml` besides the server's and the built-in parts'.
    sections: &'a toml::Table,
    env: &'a Env,
    pub(crate) registry: &'a Registry,
    app_name: &'a str,
    pub(crate) kg: Option<Kg>,
    /// The part assembling now: its name, its section, its place in the order.
    current: (&'static str, Option<&'static str>, usize),
    guards: Vec<(Slot, usize, Arc<dyn Guard>)>,
    background: Vec<Background>,
    kept: Kept,
    /// The first thing a part added that cannot be (a route at a taken path), reported once the
    /// part is done.
    failed: Option<BuildError>,
}

/// What the parts added, for the server to take apart.
pub(crate) struct Assembled {
    pub(crate) kg: Option<Kg>,
    guards: Vec<(Slot, usize, Arc<dyn Guard>)>,
    pub(crate) background: Vec<Background>,
    /// What the parts left for the server (`provide`).
    pub(crate) kept: Kept,
}

impl Assembled {
    /// The guards of `slot`, in the order calls pass them.
    pub(crate) fn guards(&mut self, slot: Slot) -> Vec<Arc<dyn Guard>> {
        let mut of_slot: Vec<_> = self.guards.iter().filter(|(at, ..)| *at == slot).collect();
        if slot == Slot::Settle {
            // Later parts first; a part's own guards in the order it added them (a stable sort).
            of_slot.sort_by_key(|(_, part, _)| std::cmp::Reverse(*part));
        }
        of_slot.into_iter().map(|(.., guard)| guard.clone()).collect()
    }
}

impl<'a> Assembly<'a> {
    pub(crate) fn new(
        sections: &'a toml::Table,
        env: &'a Env,
        registry: &'a Registry,
        app_name: &'a str,
        kg: Option<Kg>,
    ) -> Self {
        Assembly {
            sections,
            env,
            registry,
            app_name,
            kg,
            current: ("", None, 0),
            guards: Vec::new(),
            background: Vec::new(),
            kept: Kept::default(),
            failed: None,
        }
    }

    /// Assemble `parts` in order, once [`check_sections`] passed: a section nobody reads is
    /// refused before anything is opened or connected.
    pub(crate) fn assemble(mut self, parts: Vec<Box<dyn Part>>) -> Result<Assembled, BuildError> {
        check_sections(&parts, self.sections)?;
        for (index, part) in parts.into_iter().enumerate() {
            self.current = (part.name(), part.section(), index);
            let name = part.name();
            part.assemble(&mut self).inspect_err(|error| tracing::debug!(part = name, %error, "a part failed"))?;
            if let Some(error) = self.failed.take() {
                return Err(error);
            }
        }
        Ok(Assembled { kg: self.kg, guards: self.guards, background: self.background, kept: self.kept })
    }

    /// The part's own section of `trails.toml` ([`Part::section`]), read as `T`: `None` when
    /// the file has none (or the part names no section).
    pub fn section<T: DeserializeOwned>(&self) -> Result<Option<T>, ConfigError> {
        let Some(name) = self.current.1 else { return Ok(None) };
        let Some(value) = self.sections.get(name) else { return Ok(None) };
        T::deserialize(value.clone())
            .map(Some)
            .map_err(|source| ConfigError::Section { section: name.to_owned(), message: source.to_string() })
    }

    /// The environment variable `name`, as the settings were resolved with it
    /// (`Settings::resolve`): how a part lets a variable override its section, as the built-in
    /// parts' `TRAILS_*` variables do.
    pub fn env(&self, name: &str) -> Option<String> {
        self.env.get(name)
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
        self.guards.push((slot, self.current.2, Arc::new(guard)));
    }

    /// Serve `route` at `path` beside `/mcp`, behind the same Host/Origin check, bearer
    /// authentication (the handler reads the `trails::auth::Caller` from the request's
    /// extensions) and body bound as the built-in routes. A path the server serves itself, or
    /// another part's, stops the start.
    #[cfg(feature = "http")]
    pub fn route(&mut self, path: &str, route: axum::routing::MethodRouter) {
        let served = SERVED_PATHS.iter().any(|served| path == *served || path.starts_with(served));
        let routes = self.kept.entry::<PartRoutes>();
        let twice = routes.0.iter().any(|(other, _)| other == path);
        let problem = match () {
            () if !path.starts_with('/') => "does not start with `/`",
            () if served => "is one the server serves itself",
            () if twice => "is another part's",
            () => {
                routes.0.push((path.to_owned(), route));
                return;
            }
        };
        let source = format!("route `{path}` {problem}").into();
        self.failed.get_or_insert(BuildError::Part { part: self.current.0, source });
    }

    /// Run `task` beside the server: started when it starts serving (`Server::serve_http`,
    /// `Server::serve_stdio`, `App::run`, or `Server::start_parts`), told to stop
    /// ([`Running::stopping`]) when it stops.
    pub fn background<F, Fut>(&mut self, task: F)
    where
        F: FnOnce(Running) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.background.push(Box::new(move |running| Box::pin(task(running))));
    }

    /// Leave `value` for the parts assembled after this one (and the server) to use. One value
    /// per type: a second `provide` of the same type replaces the first. What no one takes is
    /// kept as long as the server is, and dropped with its last clone.
    pub fn provide<T: Any + Send + Sync>(&mut self, value: T) {
        self.kept.put(value);
    }

    /// The value of type `T` an earlier part provided.
    pub fn provided<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.kept.get()
    }
}

/// Every section of `trails.toml` (`sections`: those besides the server's own) belongs to one of
/// `parts`, and no part names the server's section or another part's.
pub(crate) fn check_sections(parts: &[Box<dyn Part>], sections: &toml::Table) -> Result<(), BuildError> {
    let declared: Vec<(&'static str, &'static str)> =
        parts.iter().filter_map(|part| part.section().map(|section| (part.name(), section))).collect();
    for (part, section) in &declared {
        let taken = SECTIONS.contains(section) || declared.iter().any(|(other, s)| s == section && other != part);
        if taken {
            let message = format!("its section `[{section}]` is the server's or another part's: name another");
            return Err(BuildError::Part { part, source: message.into() });
        }
    }
    for section in sections.keys() {
        if !declared.iter().any(|(_, declared)| declared == section) {
            let known = SECTIONS.iter().chain(declared.iter().map(|(_, section)| section));
            let nearest = known
                .map(|known| (strsim::levenshtein(section, known), *known))
                .filter(|(distance, _)| *distance <= 2)
                .min()
                .map(|(_, known)| known.to_owned());
            return Err(ConfigError::UnknownSection { section: section.clone(), nearest }.into());
        }
    }
    Ok(())
}
