//! What a handler knows about the call it is serving.

use crate::scope::Scope;

/// Per-call context handed to every handler.
#[derive(Debug, Clone)]
pub struct Ctx {
    trace_id: String,
    caller: Option<String>,
    scopes: Vec<Scope>,
}

impl Ctx {
    pub fn new(trace_id: impl Into<String>, caller: Option<String>, scopes: Vec<Scope>) -> Self {
        Ctx { trace_id: trace_id.into(), caller, scopes }
    }
    /// A context for tests and the CLI: anonymous caller, runtime scope only.
    pub fn local() -> Self {
        Ctx::new("local", None, vec![Scope::Runtime])
    }
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }
    pub fn caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }
    pub fn scopes(&self) -> &[Scope] {
        &self.scopes
    }
}
