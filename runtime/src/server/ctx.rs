//! What a handler knows about the call it is serving.

use std::any::Any;
use std::sync::Arc;

use super::Control;
use crate::auth::{Scope, ScopeSet};
use crate::error::Error;
use crate::kg::Kg;

/// Shared application state, handed to every handler (like axum's `State`).
pub type AppState = Arc<dyn Any + Send + Sync>;

/// Per-call context handed to every handler.
#[derive(Clone)]
pub struct Ctx {
    trace_id: String,
    caller: Option<String>,
    scopes: ScopeSet,
    state: Option<AppState>,
    control: Option<Control>,
    kg: Option<Kg>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("trace_id", &self.trace_id)
            .field("caller", &self.caller)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl Ctx {
    /// A context for a call with this trace id, caller name (`None`: anonymous) and scopes.
    pub fn new(trace_id: impl Into<String>, caller: Option<String>, scopes: ScopeSet) -> Self {
        Ctx { trace_id: trace_id.into(), caller, scopes, state: None, control: None, kg: None }
    }
    /// A context for tests and the CLI: anonymous caller, runtime scope only.
    pub fn local() -> Self {
        Ctx::new("local", None, ScopeSet::up_to(Scope::Runtime))
    }
    /// The same context carrying the application's shared state.
    pub fn with_state(mut self, state: AppState) -> Self {
        self.state = Some(state);
        self
    }
    /// The same context with a knowledge graph (the server sets the configured one; tests can
    /// give `Kg::temporary()`).
    pub fn with_kg(mut self, kg: Kg) -> Self {
        self.kg = Some(kg);
        self
    }
    /// The knowledge graph. Its absence is a server misconfiguration, reported to the client as
    /// an internal error.
    pub fn kg(&self) -> Result<&Kg, Error> {
        self.kg.as_ref().ok_or_else(|| Error::internal("no knowledge graph is configured for this call"))
    }
    /// The same context with a handle on the running server (set by the transports).
    pub(crate) fn with_control(mut self, control: Control) -> Self {
        self.control = Some(control);
        self
    }
    /// The running server, when the call came through one (not in unit tests of handlers).
    pub fn control(&self) -> Option<&Control> {
        self.control.as_ref()
    }
    /// The id under which this call is logged; internal errors carry it to the client.
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }
    /// The configured name of the caller's token, or `None` when anonymous.
    pub fn caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }
    /// The scopes the caller holds for this call.
    pub fn scopes(&self) -> ScopeSet {
        self.scopes
    }
    /// The application state of type `T`. Missing state is a server misconfiguration, reported
    /// to the client as an internal error (never with the type name).
    pub fn state<T: Any + Send + Sync>(&self) -> Result<&T, Error> {
        self.state
            .as_deref()
            .and_then(|state| state.downcast_ref::<T>())
            .ok_or_else(|| Error::internal(format!("no application state of type {}", std::any::type_name::<T>())))
    }
}
