//! `tools/call` as the server runs it: the call pipeline (`pipeline::Pipeline`: admission, the
//! guards, the handler) with what this server gives every handler — its `Control`, the
//! idempotency key the request carried. Every transport — MCP over stdio and HTTP, and `POST
//! /invoke/{id}` — calls this one function and only encodes what it returns.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ProgressNotificationParam, ProgressToken};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::{Map, Value};

use tracing::Instrument;

use super::input::Rounds;
use super::span::{request_done, request_span};
use super::{reads_links, Request};
use crate::config::ValidationErrors;
use crate::state::{Control, Shared};
use crate::wire;
use crate::wire::trace::TraceParent;
use trails_core::auth::Caller;
use trails_core::ctx::input::{until_asked, Asked, Input};
use trails_core::ctx::DistributedTrace;
use trails_core::pipeline::{Answer, Attach, CallRequest, Refusal, ValidationFailures, READ_TOOL};
use trails_core::{Cancellation, ClientLog, LogLevel, LogSink, Progress, ProgressSink, RequestInfo};
use trails_governance::idempotency::SentKey;

/// Which encoding the call's answer takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// A `tools/call`: validation failures as `[mcp] validation_errors` says. `links`: the peer
    /// speaks 2025-06-18 or later, whose results may carry `resource_link` blocks.
    Mcp { links: bool },
    /// `POST /invoke/{id}`: validation failures are always errors (the HTTP layer answers 422).
    Invoke,
}

/// What the transport knows of a call besides its tool, arguments and caller.
#[derive(Debug, Default)]
pub(crate) struct CallInfo {
    /// The idempotency key the request carried.
    pub(crate) key: Option<SentKey>,
    /// The W3C trace context it carried (`_meta`, else the HTTP headers).
    pub(crate) trace: Option<TraceParent>,
    /// The JSON-RPC request id, as text.
    pub(crate) request_id: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) protocol_version: Option<String>,
    /// What the handler reads of the request (`ctx.request()`).
    pub(crate) request: Option<RequestInfo>,
    /// Where `ctx.progress` goes: the request carried a `progressToken` and its framing can
    /// reach the client while it runs.
    pub(crate) progress: Option<Progress>,
    /// What `ctx.cancelled()` awaits.
    pub(crate) cancel: Option<Cancellation>,
    /// Where `ctx.log` goes: the client asked for messages and the framing can reach it.
    pub(crate) log: Option<ClientLog>,
    /// How `ctx.elicit`, `ctx.sample` and `ctx.roots` reach the client: a round of an
    /// input-required result, or a request through the framing's peer.
    pub(crate) input: Option<Input>,
    /// How `ctx.become_task()` makes the call a task (it may become one).
    pub(crate) task: Option<trails_core::TaskSwitch>,
    /// A dry run (`_meta.trails.dry_run`, `/invoke?dry_run=true`): every check but the handler.
    pub(crate) dry_run: bool,
}

/// Why a prompt's or a resource's function did not give its value.
pub(crate) enum Unfinished {
    /// It failed with this error; the trace id it was logged under.
    Failed(trails_core::Error, String),
    /// It asked the client what its round had no answer for.
    Asked(Asked),
}

/// `notifications/message` to the peer of the request.
pub(crate) struct LogToPeer(pub(crate) Peer<RoleServer>);

impl LogSink for LogToPeer {
    #[allow(deprecated)]
    fn send(&self, level: LogLevel, data: Value) -> BoxFuture<'static, ()> {
        let peer = self.0.clone();
        Box::pin(async move {
            let Ok(level) = serde_json::to_value(level).and_then(serde_json::from_value) else { return };
            let message = rmcp::model::LoggingMessageNotificationParam::new(level, data);
            if let Err(error) = peer.notify_logging_message(message).await {
                tracing::debug!(%error, "log message not sent");
            }
        })
    }
}

/// Run a prompt's or a resource's function `run` for `caller` as a tool's handler runs: its own
/// context (with `info`'s view of the request and the server's `Control`), a panic caught, an
/// internal error's detail logged under the call's trace id and never sent, and — in a round of
/// an input-required result — stopped where it waits for an answer the round does not have.
pub(crate) async fn run_function<T, F>(
    shared: &Arc<Shared>,
    caller: &Caller,
    info: CallInfo,
    what: &str,
    run: impl FnOnce(trails_core::Ctx) -> F,
) -> Result<T, Unfinished>
where
    F: std::future::Future<Output = Result<T, trails_core::Error>>,
{
    let round = info.input.as_ref().and_then(Input::round).cloned();
    let ctx = shared.pipeline.context(caller, info.handler_sees(Attach::default().with(Control(shared.clone()))));
    let trace_id = ctx.trace_id().to_owned();
    let ran = std::panic::AssertUnwindSafe(until_asked(round.as_deref(), run(ctx)));
    let error = match futures_util::FutureExt::catch_unwind(ran).await {
        Ok(Ok(Ok(value))) => return Ok(value),
        Ok(Err(asked)) => return Err(Unfinished::Asked(asked)),
        Ok(Ok(Err(error))) => error,
        Err(_) => trails_core::Error::internal(format!("{what} panicked")),
    };
    if let trails_core::Error::Internal(detail) = &error {
        tracing::error!(trace_id, detail, "{what} failed");
    }
    Err(Unfinished::Failed(error, trace_id))
}

/// `value` (one of Trails' types in MCP's shape) as rmcp's type of the same shape.
pub(crate) fn as_rmcp<T: serde::de::DeserializeOwned>(value: impl serde::Serialize) -> Result<T, trails_core::Error> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|error| trails_core::Error::internal(format!("a value rmcp cannot carry: {error}")))
}

impl CallInfo {
    /// `attach` with what a handler reads of its request: `ctx.request()`, where
    /// `ctx.progress` goes, what `ctx.cancelled()` awaits.
    pub(crate) fn handler_sees(self, mut attach: Attach) -> Attach {
        if let Some(request) = self.request {
            attach = attach.with(request);
        }
        if let Some(progress) = self.progress {
            attach = attach.with(progress);
        }
        if let Some(cancel) = self.cancel {
            attach = attach.with(cancel);
        }
        if let Some(log) = self.log {
            attach = attach.with(log);
        }
        if let Some(input) = self.input {
            attach = attach.with(input);
        }
        if let Some(task) = self.task {
            attach = attach.with(task);
        }
        attach
    }
}

/// `notifications/progress` to the peer of the request, under its token.
pub(crate) struct ToPeer {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) token: ProgressToken,
}

impl ProgressSink for ToPeer {
    fn send(&self, progress: f64, total: Option<f64>, message: Option<String>) -> BoxFuture<'static, ()> {
        let peer = self.peer.clone();
        let mut params = ProgressNotificationParam::new(self.token.clone(), progress);
        params.total = total;
        params.message = message;
        Box::pin(async move {
            // A client gone before the call ends is not the call's failure.
            if let Err(error) = peer.notify_progress(params).await {
                tracing::debug!(%error, "progress not sent");
            }
        })
    }
}

/// `tools/call`: [`call`] for an MCP request, in MCP's types — in rounds of input-required
/// results from 2026-07-28 on.
pub(crate) async fn call_tool(
    shared: &Arc<Shared>,
    request: Request,
    mut params: CallToolRequestParams,
) -> Result<CallToolResponse, ErrorData> {
    let via = Via::Mcp { links: reads_links(request.version.as_deref()) };
    if let Some(malformed) = request.malformed_dry_run() {
        return Err(malformed);
    }
    let plan = super::tasks::plan(shared, &request, &params.name)?;
    let (state, responses) = (params.request_state.take(), params.input_responses.take());
    let rounds =
        Rounds::of(shared, &request, ("tools/call", &params.name), params.arguments.as_ref(), state, responses)?;
    let info = request.info(shared, rounds.as_ref());
    // A dry run answers at once: it is never a task.
    if let (super::tasks::Plan::Task(tasks, support), false) = (plan, info.dry_run) {
        let run = super::tasks::TaskCall {
            name: params.name.to_string(),
            arguments: params.arguments,
            progress: request.progress_sink(),
            hang_up: request.cancel,
            caller: request.caller,
            via,
            info,
            rounds,
        };
        return super::tasks::run(shared, tasks, support, run).await;
    }
    match call(shared, &params.name, params.arguments, request.caller, via, info).await {
        Ok(answer) => Ok(CallToolResponse::Complete(wire::call::answer(answer))),
        Err(Refusal::InputRequired(asked)) => {
            super::input::asked(shared, rounds.as_ref(), *asked).map(CallToolResponse::InputRequired)
        }
        Err(refusal) => Err(wire::call::refusal(&refusal)),
    }
}

/// Call tool `name` with `arguments` as `caller`, with what the request carried besides, in the
/// span of an MCP server operation (the MCP semantic conventions of OpenTelemetry: its fields
/// are the attributes; exported with the `otel` feature, and in the log's span context anyway).
pub(crate) async fn call(
    shared: &Arc<Shared>,
    name: &str,
    arguments: Option<Map<String, Value>>,
    caller: Caller,
    via: Via,
    mut info: CallInfo,
) -> Result<Answer, Refusal> {
    let started = std::time::Instant::now();
    let span = request_span("tools/call", name, &info);
    span.record("gen_ai.operation.name", "execute_tool");
    span.record("gen_ai.tool.name", name);
    // The trace this call is part of: OpenTelemetry's (which continues the client's), else the
    // client's own `traceparent`.
    #[cfg(feature = "otel")]
    let distributed = crate::otel::trace_id(&span).or_else(|| info.trace.as_ref().map(|t| t.trace_id.clone()));
    #[cfg(not(feature = "otel"))]
    let distributed = info.trace.as_ref().map(|t| t.trace_id.clone());
    let as_result = matches!(via, Via::Mcp { .. }) && shared.mcp.validation_errors == ValidationErrors::ToolResult;
    let mut attach = Attach::default().with(Control(shared.clone()));
    if let Some(trace_id) = distributed {
        attach = attach.with(DistributedTrace { trace_id });
    }
    if let Some(key) = info.key.take() {
        attach = attach.with(key);
    }
    let dry_run = info.dry_run;
    let attach = info.handler_sees(attach);
    let request = CallRequest {
        tool: name,
        arguments: arguments.map(Value::Object).unwrap_or(Value::Null),
        caller,
        failures: if as_result { ValidationFailures::AsResult } else { ValidationFailures::AsError },
        attach,
        dry_run,
    };
    let outcome = shared.pipeline.call(request).instrument(span.clone()).await;
    // `error.type`: the JSON-RPC code of a refusal, `tool_error` for an `isError` result.
    let error_type = match &outcome {
        Ok(answer) if answer.result().is_error => Some("tool_error".to_owned()),
        // A round that asked the client did not fail: the call goes on in the next.
        Ok(_) | Err(Refusal::InputRequired(_)) => None,
        Err(refused) => Some(wire::call::refusal(refused).code.0.to_string()),
    };
    request_done(&span, "tools/call", Some(name), error_type.as_deref(), started);
    let mut answer = outcome?;
    // `/invoke` answers JSON to HTTP clients, which read the links as data whatever MCP version.
    if matches!(via, Via::Mcp { links: true } | Via::Invoke) {
        // A page of a cut result links as the tool whose result it is.
        let paged = answer.result().structured_content.as_ref().filter(|_| name == READ_TOOL);
        let whose = paged.and_then(|page| page["tool"].as_str()).unwrap_or(name);
        if let Some(tool) = shared.pipeline.catalog.entry(whose) {
            crate::resources::links::attach(&shared.resources, tool, answer.result_mut());
        }
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::Settings;
    use trails_core::auth::{Scope, ScopeSet};
    use trails_governance::idempotency::Source;

    /// A key promises a replay only from a server that keeps keys: built without the ledger, a
    /// call that carries one is refused and runs nothing (run without it by `cargo xtask features`).
    #[tokio::test]
    async fn a_key_is_kept_for_a_replay_or_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::from_toml(&format!("[kg]\npath = {:?}\n", dir.path().join("kg")));
        let server = crate::App::new().build(settings).unwrap();
        let key = SentKey { value: json!("k-1"), source: Source::Meta };
        let caller = Caller::anonymous(ScopeSet::up_to(Scope::Runtime));
        let ping = || {
            let info = CallInfo { key: Some(key.clone()), ..CallInfo::default() };
            call(server.shared(), "trails_meta_ping", None, caller.clone(), Via::Mcp { links: true }, info)
        };
        let first = ping().await;
        if cfg!(feature = "ledger") {
            assert!(first.is_ok(), "{first:?}");
            let replayed = ping().await.unwrap();
            assert!(wire::call::answer(replayed).meta.is_some_and(|meta| meta.0["trails"]["replayed"] == true));
        } else {
            let Err(Refusal::Failed { error, .. }) = first else { panic!("a key must be refused: {first:?}") };
            assert!(format!("{error:?}").contains("built without trails-mcp's `ledger` feature"), "{error:?}");
        }
    }
}
