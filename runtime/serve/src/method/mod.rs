//! The method table: what each MCP method means, written once, whatever the framing. A framing
//! reads a message, resolves the caller and builds one [`Request`] (its id, `_meta`, caller,
//! protocol version, session); the table answers with rmcp's typed result or a JSON-RPC error;
//! the framing then only encodes (JSON or an SSE event, and the HTTP status). The framings are
//! rmcp's `ServerHandler` (`mcp/handler.rs`: stdio, and the HTTP requests rmcp frames) and the
//! hot path (`http/hot/`: the HTTP requests Trails frames itself); both call this table.
//!
//! A new method goes here: a variant of [`Method`], its function in the file of its primitive,
//! its arm in [`answer`]; the rmcp handler's hook for it calls the same function.

// Without HTTP, rmcp's handler is the one framing: it calls each method's function itself, and
// the table's dispatch (`Method`, `answer`) has no caller.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

mod call;
mod input;
mod prompts;
mod resources;
mod skills;
mod span;
mod tasks;
mod tools;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, ClientRequest, CompleteRequestParams, ErrorData, GetPromptRequestParams, ProtocolVersion,
    ReadResourceRequestParams, RequestId, ServerResult,
};
use serde_json::{Map, Value};

use crate::state::Shared;
use crate::wire::trace::TraceParent;
use trails_core::auth::Caller;
use trails_governance::idempotency::SentKey;

pub(crate) use call::{as_rmcp, call, call_tool, run_function, CallInfo, Unfinished, Via};
pub(crate) use input::Rounds;
pub(crate) use prompts::{get_prompt, list_prompts};
pub(crate) use resources::{complete, list_resources, list_templates, read_resource};
pub(crate) use skills::{get_skill, list_skills};
pub(crate) use tasks::{cancel_task, get_task, update_task};
pub(crate) use tools::{list_tools, list_tools_json};

/// The protocol revisions this server implements.
pub(crate) const PROTOCOL_VERSIONS: &[ProtocolVersion] =
    &[ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

/// The first revision of the stateless lifecycle (`_meta` names the version on every request;
/// results carry `resultType` and cache hints).
pub(crate) const V2026: &str = "2026-07-28";

/// The version assumed of a request that names none, outside a session (Streamable HTTP's rule).
pub(crate) const ASSUMED_VERSION: &str = "2025-03-26";

/// The version a request is answered under: the one its `_meta` names, else its
/// `MCP-Protocol-Version` header, else the one its session's `initialize` agreed on.
pub(crate) fn version<'a>(meta: Option<&'a str>, header: Option<&'a str>, agreed: Option<&'a str>) -> Option<&'a str> {
    meta.or(header).or(agreed)
}

/// Whether a peer that speaks `version` reads `resource_link` blocks (MCP 2025-06-18 and later).
pub(crate) fn reads_links(version: Option<&str>) -> bool {
    version.is_some_and(|version| version >= "2025-06-18")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    /// One client per process; identity fixed at `initialize` (or per request on 2026-07-28).
    Stdio,
    /// Identity per request, from the `Authorization` header (see `http/bearer.rs`).
    Http,
}

/// One request as every framing hands it to the table.
pub(crate) struct Request {
    /// The JSON-RPC id.
    pub(crate) id: RequestId,
    /// Who asks (resolved by the framing: a bearer token over HTTP, the session's over stdio).
    pub(crate) caller: Caller,
    /// The request's `_meta` (the idempotency key and the trace context live there).
    pub(crate) meta: Map<String, Value>,
    /// The trace context of the HTTP request's headers (`_meta`'s comes first).
    pub(crate) header_trace: Option<TraceParent>,
    /// The MCP session it belongs to.
    pub(crate) session: Option<String>,
    /// The protocol version it is answered under ([`version`]).
    pub(crate) version: Option<String>,
    pub(crate) transport: Transport,
    /// What the client said of itself at `initialize`, in a session (a 2026-07-28 request says
    /// it in `_meta`).
    pub(crate) client: Option<Arc<rmcp::model::InitializeRequestParams>>,
    /// The way back to the client while the request runs: a framing that can send it
    /// notifications on the request's own stream (rmcp's: stdio, SSE) gives its peer.
    pub(crate) peer: Option<rmcp::Peer<rmcp::RoleServer>>,
    /// Cancelled when the client cancels the request or hangs up.
    pub(crate) cancel: Option<tokio_util::sync::CancellationToken>,
    /// The least severe log message the client asked for (none: it gets none).
    pub(crate) log_level: Option<trails_core::LogLevel>,
}

/// `_meta`'s key of a 2026-07-28 request's log level.
pub(crate) const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// `_meta`'s keys of the 2026-07-28 request envelope.
const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub(crate) const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

impl Request {
    /// What the call's span and its handler learn of the request; `rounds`: the rounds of
    /// input-required results it runs in (2026-07-28), else its handler asks through the peer.
    fn info(&self, shared: &Shared, rounds: Option<&Rounds>) -> CallInfo {
        let initialized = self.client.as_deref();
        let said = |key: &str, at_initialize: &dyn Fn(&rmcp::model::InitializeRequestParams) -> Option<Value>| {
            self.meta.get(key).cloned().or_else(|| initialized.and_then(at_initialize))
        };
        // Over stdio `_meta.authorization` is the bearer token: not the handler's to read.
        let mut meta = self.meta.clone();
        meta.remove("authorization");
        let request = trails_core::RequestInfo::new(
            meta,
            self.version.clone(),
            self.session.clone(),
            said(CLIENT_INFO, &|params| serde_json::to_value(&params.client_info).ok()),
            said(CLIENT_CAPABILITIES, &|params| serde_json::to_value(&params.capabilities).ok()),
        );
        let progress = self.progress_sink().map(trails_core::Progress::new);
        let log = match (&self.peer, self.log_level) {
            (Some(peer), Some(least)) => Some(trails_core::ClientLog::new(call::LogToPeer(peer.clone()), least)),
            _ => None,
        };
        CallInfo {
            log,
            key: SentKey::from_meta(Some(&self.meta)),
            trace: TraceParent::from_meta(&self.meta).or_else(|| self.header_trace.clone()),
            request_id: Some(self.id.to_string()),
            session_id: self.session.clone(),
            protocol_version: self.version.clone(),
            request: Some(request),
            progress,
            cancel: self.cancel.clone().map(trails_core::Cancellation::new),
            input: input::input(rounds.map(Rounds::round), self, shared.mcp.request_state.lifetime),
            task: None,
            dry_run: self.meta.get("trails").and_then(|trails| trails.get("dry_run")) == Some(&Value::Bool(true)),
        }
    }

    /// `_meta.trails.dry_run`, when it is not a boolean: the field error that refuses the call.
    pub(crate) fn malformed_dry_run(&self) -> Option<ErrorData> {
        let value = self.meta.get("trails")?.get("dry_run")?;
        if value.is_boolean() {
            return None;
        }
        let error = trails_core::FieldError {
            field: "_meta/trails/dry_run".into(),
            code: trails_core::FieldCode::Type,
            message: "_meta.trails.dry_run is true (check the call, run nothing) or false".into(),
            value: value.clone(),
            constraint: serde_json::json!("boolean"),
        };
        Some(crate::wire::call::refusal(&trails_core::pipeline::Refusal::Failed {
            error: trails_core::Error::validation(vec![error]),
            trace_id: String::new(),
        }))
    }

    /// Where `notifications/progress` for this request goes: it carried a `progressToken` and
    /// its framing can reach the client while it runs.
    pub(crate) fn progress_sink(&self) -> Option<call::ToPeer> {
        let (peer, token) = (self.peer.as_ref()?, self.meta.get("progressToken")?);
        let token = serde_json::from_value::<rmcp::model::ProgressToken>(token.clone()).ok()?;
        Some(call::ToPeer { peer: peer.clone(), token })
    }

    /// Answered under 2026-07-28 or later.
    pub(crate) fn current(&self) -> bool {
        self.version.as_deref().is_some_and(|version| version >= V2026)
    }
}

/// The methods the table answers for any framing: those that need nothing of a session's own
/// state (`initialize`, subscriptions and `subscriptions/listen` stay with rmcp's session).
pub(crate) enum Method {
    ListTools,
    CallTool(CallToolRequestParams),
    ListResources,
    ListResourceTemplates,
    ReadResource(ReadResourceRequestParams),
    Complete(CompleteRequestParams),
    ListPrompts,
    GetPrompt(GetPromptRequestParams),
    ListSkills,
    GetSkill(rmcp::model::GetSkillRequestParams),
    GetTask(rmcp::model::GetTaskParams),
    UpdateTask(rmcp::model::UpdateTaskParams),
    CancelTask(rmcp::model::CancelTaskParams),
}

impl Method {
    /// The method of a request rmcp's types read, if the table answers it.
    pub(crate) fn of(request: ClientRequest) -> Option<Method> {
        Some(match request {
            ClientRequest::ListToolsRequest(_) => Method::ListTools,
            ClientRequest::CallToolRequest(call) => Method::CallTool(call.params),
            ClientRequest::ListResourcesRequest(_) => Method::ListResources,
            ClientRequest::ListResourceTemplatesRequest(_) => Method::ListResourceTemplates,
            ClientRequest::ReadResourceRequest(read) => Method::ReadResource(read.params),
            ClientRequest::CompleteRequest(complete) => Method::Complete(complete.params),
            ClientRequest::ListPromptsRequest(_) => Method::ListPrompts,
            ClientRequest::GetPromptRequest(get) => Method::GetPrompt(get.params),
            ClientRequest::ListSkillsRequest(_) => Method::ListSkills,
            ClientRequest::GetSkillRequest(get) => Method::GetSkill(get.params),
            ClientRequest::GetTaskRequest(get) => Method::GetTask(get.params),
            ClientRequest::UpdateTaskRequest(update) => Method::UpdateTask(update.params),
            ClientRequest::CancelTaskRequest(cancel) => Method::CancelTask(cancel.params),
            _ => return None,
        })
    }

    /// Its JSON-RPC method name.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Method::ListTools => "tools/list",
            Method::CallTool(_) => "tools/call",
            Method::ListResources => "resources/list",
            Method::ListResourceTemplates => "resources/templates/list",
            Method::ReadResource(_) => "resources/read",
            Method::Complete(_) => "completion/complete",
            Method::ListPrompts => "prompts/list",
            Method::GetPrompt(_) => "prompts/get",
            Method::ListSkills => "skills/list",
            Method::GetSkill(_) => "skills/get",
            Method::GetTask(_) => "tasks/get",
            Method::UpdateTask(_) => "tasks/update",
            Method::CancelTask(_) => "tasks/cancel",
        }
    }

    /// Whether it is answered at once from the pre-computed tables (nothing runs that a client
    /// hanging up could cut off half-way).
    pub(crate) fn answered_from_tables(&self) -> bool {
        matches!(
            self,
            Method::ListTools
                | Method::ListResources
                | Method::ListResourceTemplates
                | Method::ListPrompts
                | Method::ListSkills
                | Method::GetSkill(_)
        )
    }

    /// What it names (the `Mcp-Name` header of 2026-07-28): a tool, a resource, a prompt, a task.
    pub(crate) fn target(&self) -> Option<&str> {
        match self {
            Method::CallTool(call) => Some(&call.name),
            Method::ReadResource(read) => Some(&read.uri),
            Method::GetPrompt(get) => Some(&get.name),
            Method::GetTask(get) => Some(&get.task_id),
            Method::UpdateTask(update) => Some(&update.task_id),
            Method::CancelTask(cancel) => Some(&cancel.task_id),
            _ => None,
        }
    }
}

/// An answer: rmcp's typed result, or one already serialised (a `tools/list` over HTTP: the
/// listing's bytes are built once per view and version shape, and sent as they are).
// Returned once and taken apart at once: boxing the result would cost an allocation per answer.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Reply {
    Result(ServerResult),
    Encoded(bytes::Bytes),
}

/// Answer `method` for `request`.
pub(crate) async fn answer(shared: &Arc<Shared>, request: Request, method: Method) -> Result<Reply, ErrorData> {
    let result = match method {
        Method::ListTools => {
            return Ok(match request.transport {
                Transport::Http => Reply::Encoded(list_tools_json(shared, &request)),
                Transport::Stdio => Reply::Result(ServerResult::ListToolsResult(list_tools(shared, &request))),
            })
        }
        Method::CallTool(params) => ServerResult::from(call_tool(shared, request, params).await?),
        Method::ListResources => ServerResult::ListResourcesResult(list_resources(shared, &request)),
        Method::ListResourceTemplates => ServerResult::ListResourceTemplatesResult(list_templates(shared, &request)),
        Method::ReadResource(params) => ServerResult::from(read_resource(shared, &request, params).await?),
        Method::Complete(params) => ServerResult::CompleteResult(complete(shared, &request, params).await?),
        Method::ListPrompts => ServerResult::ListPromptsResult(list_prompts(shared, &request)),
        Method::GetPrompt(params) => ServerResult::from(get_prompt(shared, request, params).await?),
        Method::ListSkills => ServerResult::ListSkillsResult(list_skills(shared)?),
        Method::GetSkill(params) => ServerResult::GetSkillResult(get_skill(shared, &params)?),
        Method::GetTask(params) => ServerResult::GetTaskResult(get_task(shared, &request, params).await?),
        Method::UpdateTask(params) => ServerResult::task_ack(update_task(shared, &request, params).await?),
        Method::CancelTask(params) => ServerResult::task_ack(cancel_task(shared, &request, params).await?),
    };
    Ok(Reply::Result(result))
}
