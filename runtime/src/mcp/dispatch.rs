//! `tools/call`, transport-independent: look the tool up for the caller, check scope, validate,
//! run the handler (a panic fails its own call only), and map the outcome to the wire. Every
//! transport — MCP over stdio and HTTP, and `POST /invoke/{id}` — calls this one function, so
//! scope checks, validation, provenance and error mapping exist once.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use rmcp::model::CallToolResult;
use rmcp::ErrorData;
use serde_json::{Map, Value};
use tracing::Instrument;

use super::{bound, errors};
use crate::auth::Caller;
use crate::config::ValidationErrors;
use crate::error::Error;
use crate::idempotency::{Claim, SentKey, Ticket};
use crate::kg::provenance::Call;
use crate::registry::{validated, ToolKind};
use crate::server::{CatalogTool, Control, Ctx, Lookup, Shared};
use crate::validate::{FieldCode, FieldError};

/// What the checked call did.
enum Ran {
    /// The handler ran: its output.
    Handler(crate::declare::Output),
    /// An earlier call with the same key ran: its result, again.
    Replay(Box<CallToolResult>),
    /// The key was refused (malformed, used with other arguments, its first call still running)
    /// or could not be looked up: nothing ran, so the error is answered as it is, like a key on a
    /// capability that is not `idempotent` — never as an `isError` result.
    KeyRefused(Error),
}

/// Which encoding the call's answer takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// A `tools/call`: validation failures as `[mcp] validation_errors` says.
    Mcp,
    /// `POST /invoke/{id}`: validation failures are always errors (the HTTP layer answers 422).
    Invoke,
}

/// Call tool `name` with `arguments` as `caller`, with the idempotency key the request carried.
pub(crate) async fn call(
    shared: &Arc<Shared>,
    name: &str,
    arguments: Option<Map<String, Value>>,
    caller: Caller,
    via: Via,
    key: Option<SentKey>,
) -> Result<CallToolResult, ErrorData> {
    let settings = &shared.settings;
    let tool = admit(shared, name, &caller)?;
    tool.note_call(caller.name.as_deref());
    let trace_id = uuid::Uuid::new_v4().simple().to_string();
    let arguments = arguments.map(Value::Object).unwrap_or(Value::Null);
    // A key promises a replay only where a retry cannot do the work twice.
    let key = match key {
        Some(key) if !tool.entry.idempotent() => {
            let message = format!(
                "{} is not declared `idempotent`: a retry could do the work twice, so no key can promise a replay",
                tool.entry.id()
            );
            let constraint = serde_json::json!("no idempotency key");
            let refused = FieldError::refuse(key.source.field(), FieldCode::OneOf, message, &key.value, constraint);
            return Err(errors::from_error(refused, &trace_id));
        }
        key => key,
    };
    let span = tracing::info_span!("tools/call", tool = name, trace_id = %trace_id, caller = caller.name.as_deref().unwrap_or("anonymous"));
    let mut ctx = Ctx::new(trace_id.clone(), caller.name.clone(), caller.scopes).with_control(Control(shared.clone()));
    if let Some(state) = &shared.state {
        ctx = ctx.with_state(state.clone());
    }
    // The call's own handle records what it touches, for its provenance activity.
    let recording = shared.kg.as_ref().map(|kg| kg.recording());
    if let Some((kg, _)) = &recording {
        ctx = ctx.with_kg(kg.clone());
    }
    let started = chrono::Utc::now();
    // The validator sees the raw arguments first, so a handler never receives input that breaks
    // a declared constraint; Cedar policies see the validated arguments. Only then is a key
    // claimed: a replay discloses the first call's result, so it passes the same checks, while a
    // refused call claims nothing. Then the call is charged to its caller's budget (a refused
    // call, or a replay, costs nothing), and only then does the handler run.
    // The claimed key lives outside the call, so that every way the call can end — an error, a
    // refused budget, a panic — settles it below before the answer goes out: a retry sent the
    // moment the failure arrives then finds the key free.
    let mut ticket: Option<Ticket> = None;
    let run = async {
        let arguments = validated(tool.entry, arguments)?;
        if let Some(policies) = &shared.policies {
            policies.check(tool.entry, &caller, &arguments)?;
        }
        if let Some(key) = &key {
            match shared.idempotency.claim(key, caller.name.as_deref(), tool.entry.id(), &arguments).await {
                Ok(Claim::Replay(result)) => return Ok(Ran::Replay(result)),
                Ok(Claim::Run(claimed)) => ticket = Some(claimed),
                Err(refused) => return Ok(Ran::KeyRefused(refused)),
            }
        }
        shared.budgets.charge(caller.name.as_deref(), tool.entry.id(), tool.entry.cost()).await?;
        Ok::<_, Error>(Ran::Handler((tool.entry.call)(ctx, arguments).await?))
    };
    // A panicking handler (or validator) fails its own call only.
    let outcome = match AssertUnwindSafe(run).catch_unwind().instrument(span.clone()).await {
        // A replay or a refused key ran nothing: no provenance, nothing to keep.
        Ok(Ok(Ran::Replay(result))) => return Ok(*result),
        Ok(Ok(Ran::KeyRefused(error))) => {
            let _in_span = span.enter(); // no await from here on
            return Err(match error {
                Error::Internal(detail) => {
                    tracing::error!(%detail, "the idempotency key could not be looked up; nothing ran");
                    errors::internal(&trace_id)
                }
                refused => errors::from_error(refused, &trace_id),
            });
        }
        Ok(Ok(Ran::Handler(output))) => Ok(Ok(output)),
        Ok(Err(error)) => Ok(Err(error)),
        Err(panic) => Err(panic),
    };
    // The handler's outcome, not the wire's: a result too large to send is still a call that ran.
    let handler_succeeded = matches!(outcome, Ok(Ok(_)));
    let as_result = via == Via::Mcp && settings.validation_errors == ValidationErrors::ToolResult;
    let result = answer(outcome, settings.max_result_bytes, as_result, &trace_id, &span);
    if let Some((kg, touched)) = recording {
        let error_code = match &result {
            _ if handler_succeeded => None,
            Err(error) => Some(error.code.0),
            Ok(result) if result.is_error == Some(true) => Some(rmcp::model::ErrorCode::INVALID_PARAMS.0),
            Ok(_) => None,
        };
        let call = Call {
            trace_id: &trace_id,
            capability: tool.entry.id(),
            version: tool.entry.version(),
            meta: tool.entry.kind() == ToolKind::Meta,
            caller: caller.name.as_deref(),
            started,
            ended: chrono::Utc::now(),
            error_code,
        };
        shared.record_activity(&kg, &call, &touched).await;
    }
    if let Some(ticket) = ticket {
        // Only a call that did its work is replayed; a failure (also one answered as an
        // `isError` result) frees the key, so its retry runs.
        let kept = result.as_ref().ok().filter(|r| handler_succeeded && r.is_error != Some(true));
        shared.idempotency.settle(ticket, kept).await;
    }
    result
}

/// Whether `caller` may call tool `name`: the tool, or the error that says why not (unknown, no
/// token, scope denied — or unknown for all of these under `mask_denied`).
pub(crate) fn admit<'a>(shared: &'a Shared, name: &str, caller: &Caller) -> Result<&'a CatalogTool, ErrorData> {
    match shared.catalog.lookup(name, caller.scopes) {
        Lookup::Found(tool) => Ok(tool),
        Lookup::Unknown => Err(errors::unknown_tool(name)),
        Lookup::Denied(_) if shared.settings.mask_denied => Err(errors::unknown_tool(name)),
        Lookup::Denied(tool) if !caller.is_authenticated() => {
            Err(errors::authentication_required(name, tool.entry.scope))
        }
        Lookup::Denied(tool) => Err(errors::scope_denied(name, tool.entry.scope, caller)),
    }
}

/// The handler's outcome on the wire.
fn answer(
    outcome: std::thread::Result<Result<crate::declare::Output, Error>>,
    max_result_bytes: usize,
    validation_as_result: bool,
    trace_id: &str,
    span: &tracing::Span,
) -> Result<CallToolResult, ErrorData> {
    let _in_span = span.enter(); // no await in here: safe to hold
    match outcome {
        Ok(Ok(output)) => Ok(bound::result(output, max_result_bytes)),
        Ok(Err(Error::Validation { errors, total })) if validation_as_result => {
            Ok(errors::validation_result(&errors, total))
        }
        Ok(Err(error)) => Err(errors::from_error(error, trace_id)),
        Err(panic) => {
            let detail = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic".to_owned());
            tracing::error!(%detail, "handler panicked");
            Err(errors::internal(trace_id))
        }
    }
}
