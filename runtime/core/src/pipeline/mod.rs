//! A call, transport-neutral: the [`Guard`]s it passes on its way to the handler and back, and
//! what it ends with ([`Answer`] or [`Refusal`]). The transports only encode these.

pub(crate) mod bound;
pub mod card;
mod catalog;
mod continuation;
mod dry_run;
mod guard;
mod outcome;

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, RwLock};

use futures_util::FutureExt;
use serde_json::Value;
use tracing::Instrument;

use crate::auth::{Caller, ScopeSet};
use crate::ctx::{AppState, Ctx};
use crate::error::{DomainError, Error};
pub use catalog::NoSuchTool;
#[doc(hidden)]
pub use catalog::{Catalog, Lookup, Served, View};
pub use continuation::{At, Continuations, MAX_KEPT_BYTES, READ_TOOL};
pub use dry_run::DryRun;
pub use guard::{Call, Guard, GuardFuture, Next};
#[doc(hidden)]
pub use guard::{Confirmation, Preconditions, Validation};

pub use outcome::{
    Content, Refusal, ToolResult, AUTHENTICATION_FAILED, BUDGET_EXCEEDED, INTERNAL_ERROR, INVALID_PARAMS,
    POLICY_DENIED, SCOPE_DENIED,
};

/// The `tracing` target of the spans that exist for telemetry (the MCP operation, validation,
/// the handler, store writes): at debug level, so a call pays for them only when OpenTelemetry
/// exports them (or `TRAILS_LOG` asks, e.g. `trails::spans=debug`). The `pipeline` span, whose
/// `trace_id` every handler log line carries, stays at info under the crate's own target.
pub const SPANS: &str = "trails::spans";

/// A call as a transport hands it to the [`Pipeline`].
pub struct CallRequest<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// Its arguments (`null`: none).
    pub arguments: Value,
    /// Who calls.
    pub caller: Caller,
    /// How a validation failure is answered.
    pub failures: ValidationFailures,
    /// What the transport gives the handler besides (`ctx.extension::<T>()`).
    pub attach: Attach,
    /// A dry run: every check but the handler, nothing recorded or charged ([`DryRun`]).
    pub dry_run: bool,
}

/// How a validation failure is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidationFailures {
    /// A JSON-RPC error (`-32602` with the field errors).
    AsError,
    /// An `isError` result carrying the same field errors (`[mcp] validation_errors = "tool_result"`).
    AsResult,
}

/// Values to attach to a call's [`Ctx`], one per type (a later one of the same type replaces it).
#[derive(Default)]
pub struct Attach(Vec<(std::any::TypeId, Arc<dyn std::any::Any + Send + Sync>)>);

impl Attach {
    /// Attach `value` as well.
    pub fn with<T: std::any::Any + Send + Sync>(mut self, value: T) -> Attach {
        self.0.push((std::any::TypeId::of::<T>(), Arc::new(value)));
        self
    }
}

/// The failure an `isError` result stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// A failure with this JSON-RPC code, answered as a result (a validation failure under
    /// `validation_errors = "tool_result"`).
    Code(i32),
    /// A handler's domain error (not found, conflict, …): always a result.
    Domain(DomainError),
}

/// A call's answer: its result, and what it stands for — a call that ran, an `isError` result
/// standing for a failure (a validation failure under `validation_errors = "tool_result"`), or an
/// earlier call's result replayed for its idempotency key (MCP marks it `_meta.trails.replayed`,
/// `/invoke` with `Idempotent-Replayed: true`; provenance records nothing for it).
#[derive(Debug)]
pub struct Answer {
    result: ToolResult,
    replayed: bool,
    /// The failure an `isError` result stands for.
    failure: Option<Failure>,
}

impl Answer {
    /// The result of a call that ran.
    pub fn new(result: ToolResult) -> Answer {
        Answer { result, replayed: false, failure: None }
    }

    /// An earlier call's result, answered again: nothing ran.
    pub fn replay(result: ToolResult) -> Answer {
        Answer { result, replayed: true, failure: None }
    }

    /// An `isError` result that stands for the failure `code` (what provenance records).
    pub(crate) fn failed(result: ToolResult, code: i32) -> Answer {
        Answer { result, replayed: false, failure: Some(Failure::Code(code)) }
    }

    /// A handler's domain error as the `isError` result the model reads:
    /// `{"kind","message","retryable","retry_after_secs"?}`.
    pub(crate) fn domain(error: DomainError) -> Answer {
        Answer { result: ToolResult::error(error.to_json()), replayed: false, failure: Some(Failure::Domain(error)) }
    }

    /// The result.
    pub fn result(&self) -> &ToolResult {
        &self.result
    }

    /// The result, to add to (a transport's links).
    pub fn result_mut(&mut self) -> &mut ToolResult {
        &mut self.result
    }

    /// The result, taken.
    pub fn into_result(self) -> ToolResult {
        self.result
    }

    /// Whether it is an earlier call's result, replayed.
    pub fn is_replay(&self) -> bool {
        self.replayed
    }

    /// The failure an `isError` result stands for, if it stands for one (a result too large to
    /// send stands for none: the call ran).
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }
}

/// Everything a call needs, built once: the served tools, the guards, and what every handler
/// gets.
#[doc(hidden)]
pub struct Pipeline {
    pub catalog: Catalog,
    /// Outermost first.
    guards: Vec<Arc<dyn Guard>>,
    state: Option<AppState>,
    /// A caller denied a tool is told it does not exist (`[mcp] mask_denied`).
    mask_denied: bool,
    /// `[mcp] tool_window_chars` and `max_result_bytes`, and the results cut to them kept for
    /// their callers.
    bound: bound::Bound,
    /// Whether any guard may hide tools from a caller ([`Guard::may_hide`]).
    hiding: bool,
    /// Each caller's view (name and scopes → view), worked out once: policies are loaded at
    /// start. Bounded: emptied when full, and worked out again on demand.
    views: RwLock<HashMap<(Option<String>, ScopeSet), View>>,
}

/// Callers whose views are kept at once.
const MAX_VIEWS: usize = 4096;

impl Pipeline {
    pub fn new(
        catalog: Catalog,
        guards: Vec<Arc<dyn Guard>>,
        state: Option<AppState>,
        mask_denied: bool,
        (window, max_result_bytes): (usize, usize),
    ) -> Pipeline {
        let hiding = guards.iter().any(|guard| guard.may_hide());
        let bound = bound::Bound { window, max: max_result_bytes, kept: Arc::default() };
        Pipeline { catalog, guards, state, mask_denied, bound, hiding, views: RwLock::default() }
    }

    /// The most characters of text a model is shown of one tool result (`[mcp]
    /// tool_window_chars`).
    pub fn window(&self) -> usize {
        self.bound.window
    }

    /// The results cut to that window, kept for their callers to page through.
    pub fn continuations(&self) -> &Continuations {
        &self.bound.kept
    }

    /// What `caller` sees of the catalog: its scopes, less the tools a guard refuses it
    /// whatever the arguments ([`Guard::refuses_always`]).
    pub fn view(&self, caller: &Caller) -> View {
        if !self.hiding {
            return View::of(caller.scopes);
        }
        let key = (caller.name.clone(), caller.scopes);
        if let Some(view) = self.views.read().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return *view;
        }
        let hidden = self
            .catalog
            .entries()
            .filter(|entry| self.guards.iter().any(|guard| guard.refuses_always(entry, caller)))
            .map(|entry| entry.name)
            .collect();
        let view = self.catalog.view(caller.scopes, hidden);
        let mut views = self.views.write().unwrap_or_else(|p| p.into_inner());
        if views.len() >= MAX_VIEWS {
            views.clear();
        }
        views.insert(key, view);
        view
    }

    /// Whether `caller` may call tool `name`: the tool, or the refusal that says why not
    /// (unknown, no token, scope denied — or unknown for all of these under `mask_denied`).
    pub fn admit(&self, name: &str, caller: &Caller) -> Result<&Served, Refusal> {
        let unknown = || Refusal::UnknownTool { name: name.to_owned() };
        match self.catalog.lookup(name, caller.scopes) {
            // Refused whatever the arguments, and so not listed: under `mask_denied`, unknown;
            // otherwise refused now, as a scope denial is — before validation, whose errors
            // would show the contract the listings keep from this caller.
            Lookup::Found(tool) if self.catalog.hides(self.view(caller), tool.entry.name) => match self.mask_denied {
                true => Err(unknown()),
                false => Err(Refusal::Failed {
                    error: Error::policy_denied(format!("`{}` is not allowed to this caller", tool.entry.id)),
                    trace_id: uuid::Uuid::new_v4().simple().to_string(),
                }),
            },
            Lookup::Found(tool) => Ok(tool),
            Lookup::Unknown => Err(unknown()),
            Lookup::Denied(_) if self.mask_denied => Err(unknown()),
            Lookup::Denied(tool) if !caller.is_authenticated() => {
                Err(Refusal::AuthenticationRequired { tool: name.to_owned(), scope: tool.entry.scope })
            }
            Lookup::Denied(tool) => Err(Refusal::ScopeDenied {
                tool: name.to_owned(),
                scope: tool.entry.scope,
                caller_scopes: caller.scopes,
            }),
        }
    }

    /// The context a handler of `caller`'s request gets besides a tool call's: its own trace id,
    /// the caller, the app's state, and what `attach` carries (a prompt's function gets this).
    pub fn context(&self, caller: &Caller, attach: Attach) -> Ctx {
        let trace_id = uuid::Uuid::new_v4().simple().to_string();
        let mut ctx = Ctx::new(trace_id, caller.name.clone(), caller.scopes).with_client(caller.client.clone());
        for (id, value) in attach.0 {
            ctx.attach(id, value);
        }
        if let Some(state) = &self.state {
            ctx = ctx.with_state(state.clone());
        }
        ctx
    }

    /// Run `request`: admit it, then the guards, then the handler.
    pub async fn call(&self, request: CallRequest<'_>) -> Result<Answer, Refusal> {
        let CallRequest { tool: name, arguments, caller, failures, mut attach, dry_run } = request;
        let validation_as_result = failures == ValidationFailures::AsResult;
        let dry_run = dry_run.then(DryRun::default);
        let tool = match (self.admit(name, &caller), &dry_run) {
            (Ok(tool), _) => tool,
            // A tool the caller may not call is a dry run's reason; one it cannot see is unknown.
            (Err(refused @ (Refusal::ScopeDenied { .. } | Refusal::AuthenticationRequired { .. })), Some(dry)) => {
                let structured = self.catalog.entry(name).is_some_and(|entry| !entry.has_output_schema());
                return Ok(dry.answer(Some(dry_run::reason_of_refusal(&refused)), structured));
            }
            (Err(refused), _) => return Err(refused),
        };
        if let Some(dry) = &dry_run {
            attach = attach.with(dry.clone());
        }
        tool.note_call(caller.name.as_deref());
        let trace_id = uuid::Uuid::new_v4().simple().to_string();
        let mut ctx = Ctx::new(trace_id.clone(), caller.name.clone(), caller.scopes).with_client(caller.client.clone());
        for (id, value) in attach.0 {
            ctx.attach(id, value);
        }
        // Inside the transport's span of the request (its attributes, the distributed trace):
        // the call's own id, caller and the guards, then the handler.
        let span = tracing::info_span!("pipeline", tool = name, trace_id = %trace_id, caller = caller.name.as_deref().unwrap_or("anonymous"), distributed_trace = ctx.distributed_trace_id());
        if let Some(state) = &self.state {
            ctx = ctx.with_state(state.clone());
        }
        let call = Call::new(tool.entry, caller, arguments, ctx, validation_as_result, self.bound.clone());
        // The handler's own panic fails its call inside the guards, which see it end; this
        // catches a guard's.
        let ran = AssertUnwindSafe(Next::new(&self.guards).run(call)).catch_unwind().instrument(span.clone()).await;
        if let Some(dry) = dry_run {
            let structured = !tool.entry.has_output_schema();
            return match ran {
                // Only the handler was left (its placeholder answer is not the verdict).
                Ok(Ok(_)) if dry.reached() => Ok(dry.answer(None, structured)),
                // A guard answered without the handler: what its answer stands for is the reason.
                Ok(Ok(answer)) => Ok(dry.answer(Some(dry_run::reason_of_answer(&answer)), structured)),
                Ok(Err(Refusal::InputRequired(asked))) => Err(Refusal::InputRequired(asked)),
                Ok(Err(refused)) => Ok(dry.answer(Some(dry_run::reason_of_refusal(&refused)), structured)),
                Err(_) => Err(Refusal::Failed { error: Error::internal("a guard panicked"), trace_id }),
            };
        }
        match ran {
            Ok(Ok(mut answer)) => {
                // An error's structured content is not the tool's output: the TypeScript SDK 1.x
                // checks it against the `outputSchema` all the same and throws, so the model
                // would never see it. Such a tool's error is its text (the same JSON) alone.
                if answer.result.is_error && tool.entry.has_output_schema() {
                    answer.result.structured_content = None;
                }
                Ok(answer)
            }
            Ok(refused) => refused,
            Err(_) => {
                let _in_span = span.enter();
                tracing::error!("a guard panicked");
                Err(Refusal::Failed { error: Error::internal("a guard panicked"), trace_id })
            }
        }
    }
}
