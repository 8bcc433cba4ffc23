//! Guards: the one extension point of the call pipeline. Each guard wraps the rest of the call —
//! the guards after it, then the handler — as a tower layer wraps a service: it may look at the
//! call, attach values to the handler's context, refuse it, answer it without the handler, or act
//! on the answer on its way out.
//! Validation, Cedar policies, idempotency keys, budgets and provenance are guards; an app adds
//! its own with `App::guard`.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::{json, Value};

use super::bound::{self, Bound};
use super::{Answer, Refusal, ToolResult};
use crate::auth::Caller;
use crate::ctx::input::{until_asked, Input};
use crate::ctx::Ctx;
use crate::error::Error;
use crate::registry::{ServedEnum, ToolEntry};

/// What a guard returns: the rest of the call, or its own answer.
pub type GuardFuture<'a> = Pin<Box<dyn Future<Output = Result<Answer, Refusal>> + Send + 'a>>;

/// A step every call passes on its way to its handler and back. Guards run in a fixed order:
/// provenance (when the app has a knowledge graph), validation, policies, the app's own guards
/// in the order `App::guard` added them, declared preconditions, a declared confirmation,
/// idempotency keys, budgets, then the handler. A dry run passes them too
/// ([`Call::dry_run`]): a guard that would change something (record, charge, ask) notes what it
/// found instead and lets the call go on; one that refuses, refuses as always.
///
/// ```
/// use trails::pipeline::{Call, Guard, GuardFuture, Next};
///
/// /// Logs every call that reaches it, with how it ended.
/// struct Audit;
///
/// impl Guard for Audit {
///     fn call<'a>(&'a self, call: Call, next: Next<'a>) -> GuardFuture<'a> {
///         Box::pin(async move {
///             let (tool, caller) = (call.tool().id(), call.ctx().caller().map(str::to_owned));
///             let answer = next.run(call).await;
///             tracing::info!(tool, ?caller, ok = answer.is_ok(), "audit");
///             answer
///         })
///     }
/// }
/// ```
///
/// A guard that panics fails the call it was handling (`-32603`, logged with the guard's name),
/// and the guards around it see that failure as they would any other.
pub trait Guard: Send + Sync + 'static {
    /// Handle `call`: usually `next.run(call)` with something before or after it; or refuse it
    /// (`Err(call.refuse(error))`, or `call.failed(error)` to fail it as a handler would), or
    /// answer it without the handler.
    fn call<'a>(&'a self, call: Call, next: Next<'a>) -> GuardFuture<'a>;

    /// What the logs call this guard.
    fn name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }

    /// Whether this guard refuses every call of `tool` by `caller`, whatever its arguments (a
    /// Cedar policy that permits that caller nothing). Such a tool is not listed to that caller —
    /// nor in its manifest, OpenAPI document or tool count — and under `[mcp] mask_denied` it is
    /// unknown to it (otherwise refused before validation, `-32002`). The answer must depend only
    /// on the tool and the caller's name and scopes: it is worked out once per caller and kept.
    /// The default, no, keeps every tool listed and decided per call.
    fn refuses_always(&self, tool: &ToolEntry, caller: &Caller) -> bool {
        let _ = (tool, caller);
        false
    }

    /// Whether [`refuses_always`](Guard::refuses_always) can say yes at all. Only then are
    /// listings worked out per caller; otherwise every caller with the same scopes shares one.
    fn may_hide(&self) -> bool {
        false
    }
}

/// A guard the app also holds elsewhere (to read what it counted, say) is a guard too.
impl<G: Guard + ?Sized> Guard for Arc<G> {
    fn call<'a>(&'a self, call: Call, next: Next<'a>) -> GuardFuture<'a> {
        (**self).call(call, next)
    }

    fn name(&self) -> &'static str {
        (**self).name()
    }

    fn refuses_always(&self, tool: &ToolEntry, caller: &Caller) -> bool {
        (**self).refuses_always(tool, caller)
    }

    fn may_hide(&self) -> bool {
        (**self).may_hide()
    }
}

impl<G: Guard + ?Sized> Guard for Box<G> {
    fn call<'a>(&'a self, call: Call, next: Next<'a>) -> GuardFuture<'a> {
        (**self).call(call, next)
    }

    fn name(&self) -> &'static str {
        (**self).name()
    }

    fn refuses_always(&self, tool: &ToolEntry, caller: &Caller) -> bool {
        (**self).refuses_always(tool, caller)
    }

    fn may_hide(&self) -> bool {
        (**self).may_hide()
    }
}

/// A call on its way through the guards: the tool, who calls it, the arguments (validated once
/// the validation guard passed it on; no guard changes them after that) and the [`Ctx`] the
/// handler will get.
pub struct Call {
    tool: &'static ToolEntry,
    pub(crate) caller: Caller,
    arguments: Value,
    ctx: Ctx,
    /// `tools/call` under `validation_errors = "tool_result"`: a validation failure is an
    /// `isError` result, not an error.
    validation_as_result: bool,
    bound: Bound,
}

impl Call {
    pub(crate) fn new(
        tool: &'static ToolEntry,
        caller: Caller,
        arguments: Value,
        ctx: Ctx,
        validation_as_result: bool,
        bound: Bound,
    ) -> Call {
        Call { tool, caller, arguments, ctx, validation_as_result, bound }
    }

    /// Whether this is a dry run, and what it found so far: a guard that would charge, claim or
    /// ask something notes it there instead (`DryRun::note`) and lets the call go on.
    pub fn dry_run(&self) -> Option<&super::DryRun> {
        self.ctx.extension::<super::DryRun>()
    }

    /// The tool called.
    pub fn tool(&self) -> &'static ToolEntry {
        self.tool
    }

    /// The arguments: as the client sent them before the validation guard, validated after it.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The context the handler gets: who calls, the trace id, and what earlier guards attached.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// Who is calling: the token's name and the scopes the call runs with.
    #[doc(hidden)]
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// Attach `value` to the handler's context ([`Ctx::extension`] finds it).
    pub fn insert_extension<T: std::any::Any + Send + Sync>(&mut self, value: T) {
        self.ctx.set_extension(value);
    }

    /// A refusal of this call with `error`: an error answer, whatever the mode — nothing ran.
    /// An internal error's detail is logged here, under the call's trace id, and never sent.
    pub fn refuse(&self, error: Error) -> Refusal {
        refusal(error, self.ctx.trace_id())
    }

    /// This call failing with `error` as a handler's failure is answered: a domain error (not
    /// found, conflict, …) is an `isError` result, and so is a validation failure when the server
    /// answers them so (`[mcp] validation_errors = "tool_result"`); anything else an error.
    pub fn failed(&self, error: Error) -> Result<Answer, Refusal> {
        failed(error, self.ctx.trace_id(), self.validation_as_result)
    }
}

/// The rest of the call after a guard: the guards after it, then the handler.
pub struct Next<'a> {
    guards: &'a [Arc<dyn Guard>],
}

impl<'a> Next<'a> {
    #[doc(hidden)]
    pub fn new(guards: &'a [Arc<dyn Guard>]) -> Next<'a> {
        Next { guards }
    }

    /// Run the rest of the call.
    pub fn run(self, call: Call) -> GuardFuture<'a> {
        let Some((guard, rest)) = self.guards.split_first() else { return Box::pin(handle(call)) };
        let trace_id = call.ctx.trace_id().to_owned();
        let guarded = AssertUnwindSafe((**guard).call(call, Next { guards: rest }));
        Box::pin(async move {
            guarded.catch_unwind().await.unwrap_or_else(|panic| {
                let detail = panic_text(&*panic);
                tracing::error!(%detail, guard = guard.name(), trace_id, "a guard panicked");
                Err(Refusal::Failed { error: Error::internal("a guard panicked"), trace_id })
            })
        })
    }
}

fn failed(error: Error, trace_id: &str, validation_as_result: bool) -> Result<Answer, Refusal> {
    match error {
        Error::Validation { errors, total } if validation_as_result => {
            Ok(Answer::failed(ToolResult::validation(&errors, total), super::INVALID_PARAMS))
        }
        // What the caller can act on reaches the model as a result, not a protocol error.
        Error::Domain(domain) => Ok(Answer::domain(domain)),
        error => Err(refusal(error, trace_id)),
    }
}

/// The refusal of a call with `error`; an internal error's detail goes to the log, never out.
fn refusal(error: Error, trace_id: &str) -> Refusal {
    if let Error::Internal(detail) = &error {
        tracing::error!(%detail, trace_id, "the call failed");
    }
    Refusal::Failed { error, trace_id: trace_id.to_owned() }
}

/// What a panic said, for the log.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".to_owned())
}

/// The innermost step: the handler, its output bounded to the window (`bound.rs`). A panicking
/// handler fails its own call only, and the guards around it still see it end.
async fn handle(call: Call) -> Result<Answer, Refusal> {
    if let Some(dry) = call.dry_run() {
        dry.reached_handler();
        return Ok(Answer::new(ToolResult::success(String::new(), None)));
    }
    let Call { tool, ctx, arguments, validation_as_result, bound: limit, caller } = call;
    let trace_id = ctx.trace_id().to_owned();
    // A round of an input-required result stops where the handler waits for an answer it
    // does not have yet.
    let round = ctx.extension::<Input>().and_then(Input::round).cloned();
    // The handler's own future, and its start: a panic in either fails this call only.
    let ran = AssertUnwindSafe(async move { until_asked(round.as_deref(), (tool.call)(ctx, arguments)).await });
    let span =
        tracing::debug_span!(target: super::SPANS, "handler", otel.name = %format_args!("handler {}", tool.name));
    match tracing::Instrument::instrument(ran.catch_unwind(), span).await {
        Ok(Err(asked)) => Err(Refusal::InputRequired(Box::new(asked))),
        Ok(Ok(Ok(output))) => {
            let owner = bound::Owner {
                caller: caller.name.as_deref(),
                client: caller.client.as_deref(),
                tool: tool.name,
                scope: tool.scope(),
            };
            Ok(Answer::new(bound::result(output, &limit, owner)))
        }
        Ok(Ok(Err(error))) => failed(error, &trace_id, validation_as_result),
        Err(panic) => {
            let detail = panic_text(&*panic);
            tracing::error!(%detail, trace_id, "handler panicked");
            Err(Refusal::Failed { error: Error::internal("the handler panicked"), trace_id })
        }
    }
}

/// The validation guard: the declared constraints, checked on the arguments before anything
/// else sees them, with the enums the server publishes in a tool's served schema
/// ([`Validation::served`]); every failure at once. Integral floats (`3.0`) for integer fields
/// are rewritten to integers.
#[derive(Default)]
pub struct Validation {
    served: HashMap<&'static str, Vec<ServedEnum>>,
}

impl Validation {
    /// Also check, for each tool (by name), the enums its served schema adds to what the macros
    /// declared.
    pub fn served(served: HashMap<&'static str, Vec<ServedEnum>>) -> Self {
        Validation { served }
    }
}

impl Guard for Validation {
    fn call<'a>(&'a self, mut call: Call, next: Next<'a>) -> GuardFuture<'a> {
        Box::pin(async move {
            let arguments = std::mem::take(&mut call.arguments);
            let served = self.served.get(call.tool.name).map_or(&[][..], Vec::as_slice);
            let validated = tracing::debug_span!(target: super::SPANS, "validate")
                .in_scope(|| crate::registry::validated(call.tool, arguments, served));
            match validated {
                Ok(arguments) => {
                    call.arguments = arguments;
                    next.run(call).await
                }
                Err(error) => call.failed(error),
            }
        })
    }
}

/// The preconditions guard: a capability's declared `preconditions(…)`, evaluated on the
/// validated arguments after policies and the app's guards, before the user is asked to confirm
/// or anything is charged. When any does not hold, the call is the `precondition_failed` result
/// the model reads, naming each one and why; the handler does not run. Its reads go through the
/// call's own knowledge-graph handle (they are in its provenance).
pub struct Preconditions;

impl Guard for Preconditions {
    fn call<'a>(&'a self, call: Call, next: Next<'a>) -> GuardFuture<'a> {
        Box::pin(async move {
            let Some(evaluate) = call.tool().preconditions() else { return next.run(call).await };
            match evaluate(call.ctx.clone(), call.arguments.clone()).await {
                Ok(unmet) if unmet.is_empty() => next.run(call).await,
                // Each is a reason, and the checks after go on.
                Ok(unmet) if call.dry_run().is_some() => {
                    let dry = call.dry_run().expect("a dry run");
                    for unmet in &unmet {
                        let more = json!({ "precondition": unmet.kind, "parameters": unmet.to_json()["parameters"] });
                        dry.note("precondition", unmet.message.clone(), true, more);
                    }
                    next.run(call).await
                }
                Ok(unmet) => {
                    let error = unmet_error(call.tool().id(), &unmet);
                    call.failed(error)
                }
                Err(error) => call.failed(error),
            }
        })
    }
}

/// The `precondition_failed` error of a call whose preconditions in `unmet` do not hold.
pub(crate) fn unmet_error(capability: &str, unmet: &[crate::declare::Unmet]) -> Error {
    let each: Vec<String> = unmet.iter().map(|unmet| format!("{} ({})", unmet.kind, unmet.message)).collect();
    let noun = if unmet.len() == 1 { "precondition does" } else { "preconditions do" };
    Error::precondition_failed(format!(
        "{capability}: {} declared {noun} not hold: {}; nothing ran",
        unmet.len(),
        each.join("; ")
    ))
}

/// The confirmation guard: a capability declared with `confirm = "…"` runs only once the user
/// said yes (MCP elicitation, through the client: a 2025 session's request, a 2026-07-28
/// input-required result). Declined, dismissed or answered no, the call is the
/// `precondition_failed` result the model reads, and nothing ran; a client that cannot ask its
/// user gets `-32021`. It comes after validation and policies (no one is asked about a call that
/// would be refused) and before idempotency keys and budgets (nothing is charged until then).
pub struct Confirmation;

impl Guard for Confirmation {
    fn call<'a>(&'a self, call: Call, next: Next<'a>) -> GuardFuture<'a> {
        Box::pin(async move {
            let Some(question) = call.tool().confirm() else { return next.run(call).await };
            if let Some(dry) = call.dry_run() {
                // Without a way to the user (a 2025 request outside a session), the call is refused.
                let (message, blocking) = match call.ctx().extension::<Input>() {
                    Some(_) => {
                        ("the user would be asked to confirm the call first; it runs only once they say yes", false)
                    }
                    None => ("the call needs the user's confirmation, and this request has no way to ask them", true),
                };
                dry.note("confirmation", message, blocking, json!({ "question": question }));
                return next.run(call).await;
            }
            let round = call.ctx().extension::<Input>().and_then(Input::round).cloned();
            match until_asked(round.as_deref(), call.ctx().confirm(question)).await {
                Err(asked) => Err(Refusal::InputRequired(Box::new(asked))),
                Ok(Ok(true)) => next.run(call).await,
                Ok(Ok(false)) => call.failed(Error::precondition_failed(format!(
                    "the user did not confirm `{}` (\"{question}\"): nothing ran",
                    call.tool().id()
                ))),
                Ok(Err(error)) => call.failed(error),
            }
        })
    }
}
