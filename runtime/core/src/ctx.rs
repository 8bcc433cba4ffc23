//! What a handler knows about the call it is serving.

use std::any::{Any, TypeId};
use std::sync::Arc;

use crate::auth::{Scope, ScopeSet};
use crate::error::Error;

/// Shared application state, handed to every handler (like axum's `State`).
pub type AppState = Arc<dyn Any + Send + Sync>;

/// The distributed trace a call belongs to (W3C trace context): the trace the client's
/// `traceparent` named, or the one OpenTelemetry started. Attached to a call's [`Ctx`] by the
/// server when there is one; provenance records it beside the call's own [`Ctx::trace_id`],
/// which stays unique per call (one trace spans many calls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistributedTrace {
    /// 32 lowercase hex digits.
    pub trace_id: String,
}

/// Per-call context handed to every handler.
#[derive(Clone)]
pub struct Ctx {
    trace_id: String,
    caller: Option<String>,
    client: Option<String>,
    scopes: ScopeSet,
    state: Option<AppState>,
    extensions: Vec<(TypeId, Arc<dyn Any + Send + Sync>)>,
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
        Ctx { trace_id: trace_id.into(), caller, client: None, scopes, state: None, extensions: Vec::new() }
    }
    /// A context for tests and the CLI: anonymous caller, runtime scope only.
    pub fn local() -> Self {
        Ctx::new("local", None, ScopeSet::up_to(Scope::Runtime))
    }
    /// The same context for a caller whose OAuth access token was issued to `client`.
    pub fn with_client(mut self, client: Option<String>) -> Self {
        self.client = client;
        self
    }
    /// The same context carrying the application's shared state.
    pub fn with_state(mut self, state: AppState) -> Self {
        self.state = Some(state);
        self
    }
    /// The same context carrying `value`, found again by its type with [`Ctx::extension`]
    /// (replacing a value of the same type). The server attaches what its parts give a handler
    /// this way — the knowledge graph (`trails::kg::KgCtx`), the running server's `Control` —
    /// and a guard can attach its own.
    pub fn with_extension<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.set_extension(value);
        self
    }
    pub(crate) fn set_extension<T: Any + Send + Sync>(&mut self, value: T) {
        self.attach(TypeId::of::<T>(), Arc::new(value));
    }
    /// Attach `value`, of the type `id` names (`pipeline::Attach`'s values).
    pub(crate) fn attach(&mut self, id: TypeId, value: Arc<dyn Any + Send + Sync>) {
        match self.extensions.iter_mut().find(|(kept, _)| *kept == id) {
            Some((_, slot)) => *slot = value,
            None => self.extensions.push((id, value)),
        }
    }
    /// The value of type `T` attached with [`Ctx::with_extension`], if any.
    pub fn extension<T: Any + Send + Sync>(&self) -> Option<&T> {
        let (_, value) = self.extensions.iter().find(|(id, _)| *id == TypeId::of::<T>())?;
        value.downcast_ref::<T>()
    }
    /// The id under which this call is logged; internal errors carry it to the client.
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }
    /// The W3C trace id of the distributed trace this call belongs to, when there is one (see
    /// [`DistributedTrace`]): what to log to find the call in a tracing backend.
    pub fn distributed_trace_id(&self) -> Option<&str> {
        self.extension::<DistributedTrace>().map(|trace| trace.trace_id.as_str())
    }
    /// The configured name of the caller's token, or `None` when anonymous.
    pub fn caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }
    /// The OAuth client (`client_id`) the caller's access token was issued to: which application
    /// acts for the caller. `None` for static tokens and anonymous callers.
    pub fn client(&self) -> Option<&str> {
        self.client.as_deref()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extension_is_found_by_its_type_and_replaced_by_another_of_it() {
        #[derive(Debug, PartialEq)]
        struct Tenant(&'static str);
        let ctx = Ctx::local();
        assert_eq!(ctx.extension::<Tenant>(), None);
        let ctx = ctx.with_extension(Tenant("a")).with_extension(7_u32).with_extension(Tenant("b"));
        assert_eq!(ctx.extension::<Tenant>(), Some(&Tenant("b")));
        assert_eq!(ctx.extension::<u32>(), Some(&7));
        assert_eq!(ctx.clone().extension::<u32>(), Some(&7), "a clone carries them too");
        assert_eq!(ctx.extension::<u64>(), None);
    }
}
