//! The hot path (`runtime/guide/04-serving.md`): `POST /mcp` requests of the method table's
//! methods (`method::Method`) — stateless, or in an open 2025-* session — are framed here and
//! answered by the same table the rmcp handler calls. rmcp builds a service per stateless request, clones and re-serialises
//! every descriptor, and passes a session's requests through the session's worker task and
//! channels; here `tools/list` is bytes serialised once per (scope set, protocol shape) with the
//! request id spliced in, and a session's answer is an SSE event (`answers`).
//!
//! It answers only what rmcp would answer the same way: a request any of rmcp's header rules
//! refuses (or that needs a session, or that this module does not own) goes to rmcp unchanged, so
//! every refusal is rmcp's own. The answers are rmcp's types serialised as rmcp serialises them;
//! `tests/tests/it/hot_path_differential.rs` holds the two paths to the same bytes.

mod answers;
mod headers;
mod pieces;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, CompleteRequest, ErrorCode, ErrorData, GetExtensions,
    JsonRpcRequest, ListResourceTemplatesRequest, ListResourcesRequest, ListToolsRequest, ProtocolVersion,
    ReadResourceRequest, RequestId, RequestMetaObject, ServerJsonRpcMessage,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::body::refusal;
use super::session_guard::Live;
use crate::method::{self, Method, Reply, Transport, PROTOCOL_VERSIONS, V2026};
use crate::state::Shared;
use crate::wire::jsonrpc::RpcMethod;
use crate::wire::shape_result;
use crate::wire::trace::TraceParent;
pub(crate) use answers::{AllAnswers, Answers, KEPT_ALL_BYTES};
use pieces::Pieces;
use trails_core::auth::Caller;

/// What the hot path needs of the server.
pub(crate) struct HotPath {
    shared: Arc<Shared>,
    /// `[http] sessions`: rmcp then serves statelessly only requests that carry their protocol
    /// version in `_meta`, and streams 200 answers as SSE.
    sessions: bool,
    /// Whether any tool's input schema declares SEP-2243 `x-mcp-header` parameters (rmcp then
    /// checks `Mcp-Param-*` headers, which the hot path leaves to it).
    param_headers: bool,
    /// Cancelled at shutdown: the event streams of answers still awaited end then, as rmcp's do.
    streams: tokio_util::sync::CancellationToken,
}

impl HotPath {
    pub(crate) fn new(shared: Arc<Shared>, streams: tokio_util::sync::CancellationToken) -> HotPath {
        let sessions = shared.http.sessions;
        let param_headers = shared.pipeline.catalog.entries().any(|entry| entry.descriptor().contains("x-mcp-header"));
        HotPath { shared, sessions, param_headers, streams }
    }
}

/// A request the hot path answers, with what decides the answer's shape.
pub(crate) struct Planned {
    id: RequestId,
    method: Method,
    /// The request's `_meta`.
    meta: serde_json::Map<String, Value>,
    /// The trace context of its headers.
    header_trace: Option<TraceParent>,
    /// The version it is answered under.
    version: String,
    /// The version came in `_meta` (rmcp's "negotiated" path: error codes map to HTTP statuses).
    negotiated: bool,
    /// The version rmcp shapes the answer for (`_meta`'s, else the session's) is 2026-07-28 or
    /// later: results keep `resultType` and carry cache hints, and `-32002` becomes `-32602`.
    current: bool,
    /// `_meta` lacks what 2026-07-28 requires (then `-32602` is a 400 on the negotiated path).
    meta_malformed: bool,
    /// The open session it belongs to (answered as SSE events).
    session: Option<Arc<Live>>,
}

impl HotPath {
    /// Whether this request is one the hot path answers (`rpc`: what the JSON-RPC check found
    /// in `message`; `session`: the caller's open session it names); `None` leaves it to rmcp.
    pub(crate) fn plan(
        &self,
        headers: &HeaderMap,
        rpc: &RpcMethod,
        message: Value,
        session: Option<&Arc<Live>>,
    ) -> Option<Planned> {
        let session = session.filter(|_| self.sessions);
        plan(self.sessions, self.param_headers, headers, rpc, message, session)
    }

    /// A `GET` resuming one of the hot path's answers in `session` (`Last-Event-ID`); `None`
    /// leaves it to rmcp.
    pub(crate) fn resume(&self, headers: &HeaderMap, session: &Live) -> Option<Response> {
        let last_event_id = headers.get("last-event-id")?.to_str().ok()?;
        // rmcp's rules for a GET come first: it accepts event streams, and a version it knows.
        if !headers::accepts_sse(headers) {
            return None;
        }
        // (From 2026-07-28 on, rmcp reads a GET as stateless: its answer, not a session's.)
        if let Some(version) = headers.get("mcp-protocol-version") {
            let version = version.to_str().ok()?;
            if !ProtocolVersion::KNOWN_VERSIONS.iter().any(|known| known.as_str() == version) || version >= V2026 {
                return None;
            }
        }
        session.answers.resume(last_event_id, &self.streams)
    }

    /// Answer a planned request for `caller`.
    pub(crate) async fn answer(self: &Arc<Self>, planned: Planned, caller: Caller) -> Response {
        tracing::debug!(id = %planned.id, "answered on the hot path");
        if let Some(session) = planned.session.clone() {
            return self.answer_in_session(planned, caller, session).await;
        }
        // What is answered at once from tables cannot be cut off half-way: it needs no task of
        // its own (only the same answer to a panic).
        if planned.method.answered_from_tables() {
            let listing = std::panic::AssertUnwindSafe(self.serve(planned, caller, None));
            return futures_util::FutureExt::catch_unwind(listing).await.unwrap_or_else(|_| internal_error());
        }
        // A client that hangs up does not cut a call off half-way (its writes and its provenance
        // record complete): what is left of it then runs on as a task of its own. Until then it
        // runs here, without a task's hand-off per call.
        let hot = self.clone();
        let cancel = tokio_util::sync::CancellationToken::new();
        let hung_up = cancel.clone();
        let call = std::panic::AssertUnwindSafe(Detached::new(
            async move { hot.serve(planned, caller, Some(cancel)).await },
            hung_up,
        ));
        // A panic outside the handler's own guard (which answers `-32603` itself): rmcp would
        // leave the request hanging; this answers.
        futures_util::FutureExt::catch_unwind(call).await.unwrap_or_else(|_| internal_error())
    }
}

/// A session's call the hot path is answering, cancellable by id until it is done.
struct InFlight {
    session: Arc<Live>,
    key: String,
    token: tokio_util::sync::CancellationToken,
}

/// Calls of one session whose cancellation is kept at once (more run on, uncancellable).
const MAX_IN_FLIGHT: usize = 256;

impl InFlight {
    fn register(session: &Arc<Live>, id: &RequestId) -> Option<InFlight> {
        let key = serde_json::to_string(id).ok()?;
        let mut calls = session.in_flight.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if calls.len() >= MAX_IN_FLIGHT || calls.contains_key(&key) {
            return None;
        }
        let token = tokio_util::sync::CancellationToken::new();
        calls.insert(key.clone(), token.clone());
        Some(InFlight { session: session.clone(), key, token })
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.session.in_flight.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&self.key);
    }
}

impl HotPath {
    /// A session's `notifications/cancelled` (`message`): cancel the call of that id the hot
    /// path is answering, if it is one (rmcp, which the notification goes on to, cancels its own).
    pub(crate) fn cancelled(&self, message: &Value, session: Option<&Arc<Live>>) {
        let (Some(session), Some(id)) = (session, message.get("params").and_then(|params| params.get("requestId")))
        else {
            return;
        };
        let calls = session.in_flight.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(token) = calls.get(&id.to_string()) {
            token.cancel();
        }
    }
}

/// A future that, dropped before it is done, finishes as a spawned task instead of being cut off
/// (and cancels `hung_up`: the handler learns its client is gone).
struct Detached<F: std::future::Future<Output = Response> + Send + 'static> {
    future: Option<std::pin::Pin<Box<F>>>,
    hung_up: tokio_util::sync::CancellationToken,
}

impl<F: std::future::Future<Output = Response> + Send + 'static> Detached<F> {
    fn new(future: F, hung_up: tokio_util::sync::CancellationToken) -> Self {
        Detached { future: Some(Box::pin(future)), hung_up }
    }
}

impl<F: std::future::Future<Output = Response> + Send + 'static> std::future::Future for Detached<F> {
    type Output = Response;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Response> {
        // Out while it is polled: one that panics is not spawned again when this is dropped. A
        // panic is caught first and the future dropped after, not while unwinding (a destructor
        // that panicked then would abort the process), as a task's would be.
        let Some(mut future) = self.future.take() else { return std::task::Poll::Ready(internal_error()) };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(std::task::Poll::Pending) => {
                self.future = Some(future);
                std::task::Poll::Pending
            }
            Ok(ready) => ready,
            Err(panic) => {
                drop(future);
                std::panic::resume_unwind(panic)
            }
        }
    }
}

impl<F: std::future::Future<Output = Response> + Send + 'static> Drop for Detached<F> {
    fn drop(&mut self) {
        if let (Some(future), Ok(runtime)) = (self.future.take(), tokio::runtime::Handle::try_current()) {
            self.hung_up.cancel();
            runtime.spawn(future);
        }
    }
}

fn internal_error() -> Response {
    refusal(StatusCode::INTERNAL_SERVER_ERROR, -32603, "Internal error: the request failed")
}

/// Whether rmcp would serve this request statelessly, and every rule it applies first passes.
/// `param_headers`: some tool declares SEP-2243 `x-mcp-header` parameters; `rpc`: what
/// `jsonrpc::read` found in `message`.
fn plan(
    sessions: bool,
    param_headers: bool,
    headers: &HeaderMap,
    rpc: &RpcMethod,
    message: Value,
    session: Option<&Arc<Live>>,
) -> Option<Planned> {
    // Trails' own Host/Origin check let it through; rmcp also needs the Host to parse as an
    // authority (an unbracketed IPv6 address does not). Browsers' requests (with an Origin) are
    // rmcp's.
    let host = headers.get(header::HOST)?.to_str().ok()?;
    axum::http::uri::Authority::try_from(host).ok()?;
    if headers.contains_key(header::ORIGIN)
        || !headers::accepts_json_and_sse(headers)
        || !headers::content_type_is_json(headers)
    {
        return None;
    }
    let (id, mut request) = parse_request(rpc, message)?;
    let meta = request.extensions_mut().remove::<RequestMetaObject>().unwrap_or_default();
    let requested = meta.protocol_version();
    let meta_malformed = !meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty();
    let method = Method::of(request)?;
    // A call that asks for progress is answered as a stream its notifications go on first:
    // rmcp's framing (the hot path answers in one piece). (rmcp's own clients put a token on
    // every request.)
    if matches!(method, Method::CallTool(_)) && meta.0.contains_key("progressToken") {
        return None;
    }
    // So is one whose client asked for log messages (they go before the answer too).
    let logs = meta.0.contains_key(method::LOG_LEVEL) || session.is_some_and(|s| s.link.log_level().is_some());
    if matches!(method, Method::CallTool(_)) && logs {
        return None;
    }
    // And one a 2025 session's handler may ask its client about (`ctx.elicit`, `ctx.sample`,
    // `ctx.roots`): the question is a request on rmcp's connection to the client.
    let may_ask = session.and_then(|s| s.link.client.get()).is_some_and(|client| {
        let declared = &client.capabilities;
        declared.elicitation.is_some() || declared.sampling.is_some() || declared.roots.is_some()
    });
    if matches!(method, Method::CallTool(_) | Method::ReadResource(_)) && may_ask {
        return None;
    }
    // `MCP-Protocol-Version`: the first value, visible ASCII, one rmcp knows unless `_meta` names
    // the version.
    let header = match headers.get("mcp-protocol-version") {
        None => None,
        Some(value) => Some(value.to_str().ok()?),
    };
    // A request that names no version in `_meta` goes to its session (rmcp's legacy lifecycle):
    // the hot path answers it there if the header, when there is one, names a 2025-* version
    // rmcp knows (later ones need `_meta`; rmcp refuses those itself).
    if let (Some(session), None) = (session, &requested) {
        let known = |v: &str| ProtocolVersion::KNOWN_VERSIONS.iter().any(|known| known.as_str() == v);
        if header.is_some_and(|header| !known(header) || header >= V2026) {
            return None;
        }
        // (A session that agreed on 2026-07-28 is an oddity rmcp answers in its own shape.)
        let agreed = session.link.version.get().filter(|agreed| agreed.as_str() < V2026)?;
        let version = method::version(None, header, Some(agreed))?.to_owned();
        return Some(Planned {
            id,
            method,
            meta: meta.0 .0,
            header_trace: TraceParent::from_headers(headers),
            version,
            negotiated: false,
            current: false,
            meta_malformed: false,
            session: Some(session.clone()),
        });
    }
    if let Some(header) = header {
        if requested.is_none() && !ProtocolVersion::KNOWN_VERSIONS.iter().any(|v| v.as_str() == header) {
            return None;
        }
    }
    // With sessions on, rmcp serves without one only what names its version in `_meta` with
    // decodable capabilities, or names 2026-07-28 or later.
    if sessions {
        let requested = requested.as_ref()?;
        let with_capabilities = meta.client_capabilities().is_some();
        if !with_capabilities && requested.as_str() < V2026 {
            return None;
        }
    }
    // `_meta` and the header agree; 2026-07-28 requests name their version in `_meta`.
    match (&requested, header) {
        (Some(requested), Some(header)) if requested.as_str() == header => {}
        (Some(_), _) => return None,
        (None, Some(header)) if header >= V2026 => return None,
        (None, _) => {}
    }
    if header.is_some_and(|header| header >= V2026) {
        if !headers::standard_headers_agree(headers, method.name(), method.target()) {
            return None;
        }
        // SEP-2243 `Mcp-Param-*` headers (none of Trails' schemas declares one today).
        if matches!(method, Method::CallTool(_)) && param_headers {
            return None;
        }
    }
    // rmcp's handler: a version this server does not speak, or a 2026-07-28 request without
    // its required `_meta`.
    if let Some(requested) = &requested {
        if !PROTOCOL_VERSIONS.contains(requested) || (requested.as_str() >= V2026 && meta_malformed) {
            return None;
        }
    }
    let version = method::version(requested.as_ref().map(ProtocolVersion::as_str), header, None)
        .unwrap_or(method::ASSUMED_VERSION)
        .to_owned();
    Some(Planned {
        id,
        method,
        meta: meta.0 .0,
        header_trace: TraceParent::from_headers(headers),
        version,
        negotiated: requested.is_some(),
        current: requested.as_ref().is_some_and(|requested| requested.as_str() >= V2026),
        meta_malformed,
        session: None,
    })
}

/// rmcp's reading of a request whose method the hot path owns, from the message the JSON-RPC
/// check already read (`ClientJsonRpcMessage` reads the same, but only after trying each request
/// type listed before it, and its `#[serde(flatten)]`s buffer the message twice more). The fuzz
/// target holds the readings equal.
fn parse_request(rpc: &RpcMethod, message: Value) -> Option<(RequestId, ClientRequest)> {
    fn typed<R: DeserializeOwned>(
        message: Value,
        variant: fn(R) -> ClientRequest,
    ) -> Option<(RequestId, ClientRequest)> {
        let JsonRpcRequest { id, request, .. } = serde_json::from_value::<JsonRpcRequest<R>>(message).ok()?;
        Some((id, variant(request)))
    }
    // rmcp reads a message with a `result` or an `error` as no request at all.
    if !rpc.request {
        return None;
    }
    match rpc.method.as_deref()? {
        "tools/list" => typed::<ListToolsRequest>(message, ClientRequest::ListToolsRequest),
        "tools/call" => call_tool(message),
        "resources/list" => typed::<ListResourcesRequest>(message, ClientRequest::ListResourcesRequest),
        "resources/templates/list" => {
            typed::<ListResourceTemplatesRequest>(message, ClientRequest::ListResourceTemplatesRequest)
        }
        "resources/read" => typed::<ReadResourceRequest>(message, ClientRequest::ReadResourceRequest),
        "completion/complete" => typed::<CompleteRequest>(message, ClientRequest::CompleteRequest),
        _ => None,
    }
}

/// A `tools/call` as rmcp reads it, taken apart by hand: its parameters are the hot path's
/// busiest input. Anything besides `_meta`, `name` and `arguments` in them (or of another type
/// than rmcp reads) is left to rmcp's own reading.
fn call_tool(message: Value) -> Option<(RequestId, ClientRequest)> {
    let Value::Object(mut message) = message else { return None };
    let id: RequestId = serde_json::from_value(message.remove("id")?).ok()?;
    let Some(Value::Object(mut params)) = message.remove("params") else { return None };
    let meta = match params.remove("_meta") {
        None | Some(Value::Null) => None,
        Some(Value::Object(meta)) => Some(meta),
        Some(_) => return None,
    };
    let Some(Value::String(name)) = params.remove("name") else { return None };
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::Object(arguments)) => Some(arguments),
        Some(_) => return None,
    };
    if !params.is_empty() {
        return None;
    }
    let mut call = CallToolRequestParams::new(name);
    call.arguments = arguments;
    let mut request = CallToolRequest::new(call);
    if let Some(meta) = meta {
        request.extensions.insert(rmcp::model::RequestMetaObject::from(meta));
    }
    Some((id, ClientRequest::CallToolRequest(request)))
}

impl HotPath {
    async fn serve(
        &self,
        planned: Planned,
        caller: Caller,
        cancel: Option<tokio_util::sync::CancellationToken>,
    ) -> Response {
        let (status, json) = self.outcome(planned, caller, cancel).await;
        self.send(status, json)
    }

    /// A request in a session: its answer as one event if it is ready at once, else primed for
    /// resumption while it runs on as a task of its own (which a client hanging up does not cut
    /// off either).
    async fn answer_in_session(self: &Arc<Self>, planned: Planned, caller: Caller, session: Arc<Live>) -> Response {
        let id = planned.id.clone();
        let hot = self.clone();
        // What the session's `notifications/cancelled` for this id cancels, while it runs.
        let in_flight = InFlight::register(&session, &id);
        let cancel = in_flight.as_ref().map(|in_flight| in_flight.token.clone());
        let outcome = std::panic::AssertUnwindSafe(async move {
            let answered = hot.outcome(planned, caller, cancel).await.1;
            drop(in_flight);
            answered
        });
        let mut outcome = Box::pin(futures_util::FutureExt::catch_unwind(outcome));
        let event = |outcome: std::thread::Result<Pieces>| {
            outcome
                .unwrap_or_else(|_| {
                    let error = ErrorData::internal_error("Internal error: the request failed", None);
                    let message = ServerJsonRpcMessage::error(error, Some(id));
                    Pieces::new([Bytes::from(serde_json::to_vec(&message).expect("rmcp messages serialise"))])
                })
                .into_event()
        };
        if let std::task::Poll::Ready(outcome) = futures_util::poll!(outcome.as_mut()) {
            return answers::sse(Body::new(event(outcome)));
        }
        let (pending, response) = session.answers.expect(&self.streams);
        tokio::spawn(async move { pending.done(Bytes::from(event(outcome.await).concat())) });
        response
    }

    /// The JSON answer and its HTTP status. `cancel`: cancelled when the client hangs up.
    async fn outcome(
        &self,
        planned: Planned,
        caller: Caller,
        cancel: Option<tokio_util::sync::CancellationToken>,
    ) -> (StatusCode, Pieces) {
        let current = planned.current;
        let tool_call = matches!(planned.method, Method::CallTool(_));
        let request = method::Request {
            id: planned.id.clone(),
            caller,
            meta: planned.meta,
            header_trace: planned.header_trace,
            session: planned.session.as_ref().map(|session| session.id.clone()),
            version: Some(planned.version),
            transport: Transport::Http,
            client: planned.session.as_ref().and_then(|session| session.link.client.get().cloned()),
            // Nothing goes back before the answer: requests that ask for progress or log messages
            // are rmcp's.
            peer: None,
            cancel,
            log_level: None,
        };
        let outcome = match method::answer(&self.shared, request, planned.method).await {
            Ok(Reply::Encoded(result)) => return (StatusCode::OK, response_pieces(&planned.id, result)),
            Ok(Reply::Result(result)) => Ok(result),
            // rmcp gives 2026-07-28 peers `-32602` for `-32002` (not for `tools/call`, whose errors
            // it returns before that step).
            Err(mut error) => {
                if current && !tool_call && error.code == ErrorCode::RESOURCE_NOT_FOUND {
                    error.code = ErrorCode::INVALID_PARAMS;
                }
                Err(error)
            }
        };
        let (status, message) = match outcome {
            Ok(mut result) => {
                shape_result(&mut result, current);
                (StatusCode::OK, ServerJsonRpcMessage::response(result, planned.id))
            }
            Err(error) => {
                let status =
                    if planned.negotiated { status_of(&error, planned.meta_malformed) } else { StatusCode::OK };
                (status, ServerJsonRpcMessage::error(error, Some(planned.id)))
            }
        };
        let body = serde_json::to_vec(&message).expect("rmcp messages serialise");
        (status, Pieces::new([Bytes::from(body)]))
    }

    /// JSON, or with sessions on a 200 as one SSE event (what rmcp sends in each case).
    fn send(&self, status: StatusCode, json: Pieces) -> Response {
        let mut response = if self.sessions && status == StatusCode::OK {
            answers::sse(Body::new(json.into_event()))
        } else {
            let mut response = Response::new(Body::new(json));
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        };
        *response.status_mut() = status;
        response
    }
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` around a result already serialised: what
/// `ServerJsonRpcMessage::response` serialises to, without serialising or copying the result.
fn response_pieces(id: &RequestId, result: Bytes) -> Pieces {
    let id = serde_json::to_vec(id).expect("ids serialise");
    let mut head = Vec::with_capacity(id.len() + 32);
    head.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    head.extend_from_slice(&id);
    head.extend_from_slice(br#","result":"#);
    Pieces::new([Bytes::from(head), result, Bytes::from_static(b"}")])
}

/// The HTTP status rmcp gives a JSON-RPC error on its negotiated path.
fn status_of(error: &ErrorData, meta_malformed: bool) -> StatusCode {
    match error.code.0 {
        // Unsupported version, missing client capability, header mismatch.
        -32022..=-32020 => StatusCode::BAD_REQUEST,
        -32602 if meta_malformed => StatusCode::BAD_REQUEST,
        -32601 => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// The fuzz target's entry (`trails::__fuzz::hot_path`): `data` is a request head's header lines
/// (`name: value`, malformed lines skipped), a blank line, then the body. Trails' own check and
/// the hot path's decision run on it in both session modes; neither may panic, and what the hot
/// path takes must be one well-formed message naming one of the method table's methods with the headers
/// rmcp requires.
#[cfg(any(fuzzing, test))]
pub(crate) fn fuzz(data: &[u8]) {
    let split = data.windows(2).position(|w| w == b"\n\n").unwrap_or(data.len());
    let (head, body) = (&data[..split], data.get(split + 2..).unwrap_or_default());
    let mut headers = HeaderMap::new();
    for line in head.split(|b| *b == b'\n') {
        let Some(colon) = line.iter().position(|b| *b == b':') else { continue };
        let (Ok(name), Ok(value)) = (
            axum::http::HeaderName::from_bytes(&line[..colon]),
            HeaderValue::from_bytes(line[colon + 1..].trim_ascii()),
        ) else {
            continue;
        };
        headers.append(name, value);
    }
    let Ok((rpc, message)) = crate::wire::jsonrpc::read(body) else {
        return;
    };
    // The hot path reads a request as rmcp does.
    if let Some((id, request)) = parse_request(&rpc, message.clone()) {
        let rmcp::model::ClientJsonRpcMessage::Request(JsonRpcRequest { id: rmcp_id, request: rmcp_request, .. }) =
            serde_json::from_slice(body).expect("rmcp reads what the hot path reads")
        else {
            panic!("the hot path read a request where rmcp reads another message");
        };
        assert_eq!(id, rmcp_id);
        assert_eq!(serde_json::to_value(&request).ok(), serde_json::to_value(&rmcp_request).ok());
    }
    let link = crate::mcp::SessionLink::default();
    let _ = link.version.set("2025-06-18".into());
    let live = Arc::new(Live {
        id: "fuzz".into(),
        link: Arc::new(link),
        answers: Answers::default(),
        in_flight: std::sync::Mutex::default(),
    });
    let modes = [
        (false, false, None),
        (true, false, None),
        (false, true, None),
        (true, true, None),
        (true, false, Some(&live)),
    ];
    for (sessions, param_headers, session) in modes {
        let Some(planned) = plan(sessions, param_headers, &headers, &rpc, message.clone(), session) else { continue };
        assert!(headers::accepts_json_and_sse(&headers) && headers::content_type_is_json(&headers));
        let method = planned.method.name();
        let sent: serde_json::Value = serde_json::from_slice(body).expect("the check parsed it");
        assert_eq!(sent["method"].as_str(), Some(method), "the hot path took {sent} as `{method}`");
        let version = headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok());
        if version.is_some_and(|v| v >= V2026) {
            assert_eq!(headers.get("mcp-method").and_then(|v| v.to_str().ok()), Some(method));
        }
        // With sessions on, a request goes without its session only if `_meta` names its version;
        // in its session, only a 2025-* request that does not.
        let in_session = planned.session.is_some();
        assert!(!sessions || planned.negotiated != in_session, "with sessions on, only `_meta`-versioned requests");
        if in_session {
            assert!(sent["params"]["_meta"].get("io.modelcontextprotocol/protocolVersion").is_none());
            assert!(version.is_none_or(|v| v < V2026));
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ListToolsResult, NumberOrString, ServerResult};

    use super::*;

    #[test]
    fn a_spliced_response_is_what_rmcp_serialises() {
        let mut result = ServerResult::ListToolsResult(ListToolsResult::with_all_items(Vec::new()));
        shape_result(&mut result, true);
        let bytes = Bytes::from(serde_json::to_vec(&result).unwrap());
        for id in [NumberOrString::Number(-7), NumberOrString::String("a\"b\u{e9}".into())] {
            let spliced = response_pieces(&id, bytes.clone()).concat();
            let whole = serde_json::to_vec(&ServerJsonRpcMessage::response(result.clone(), id)).unwrap();
            assert_eq!(String::from_utf8(spliced).unwrap(), String::from_utf8(whole).unwrap());
        }
    }
}
