//! The stateless hot path (DESIGN §4.8): `POST /mcp` requests for `tools/list`, `tools/call`,
//! `resources/list`, `resources/templates/list` and `resources/read` that rmcp would serve
//! without a session are answered here, from the pre-computed tables, through the same dispatch
//! the rmcp handler uses. rmcp builds a service per stateless request, clones and re-serialises
//! every descriptor; here `tools/list` is bytes serialised once per (scope set, protocol shape)
//! with the request id spliced in.
//!
//! It answers only what rmcp would answer the same way: a request any of rmcp's header rules
//! refuses (or that needs a session, or that this module does not own) goes to rmcp unchanged, so
//! every refusal is rmcp's own. The answers are rmcp's types serialised as rmcp serialises them;
//! `tests/tests/hot_path_differential.rs` holds the two paths to the same bytes.

mod headers;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::BodyExt;
use rmcp::model::{
    CallToolResponse, ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, GetMeta, JsonRpcRequest,
    ListResourceTemplatesResult, ListResourcesResult, ProtocolVersion, ReadResourceResponse, RequestId,
    ServerJsonRpcMessage, ServerResult,
};

use super::body::refusal;
use crate::auth::Caller;
use crate::mcp::PROTOCOL_VERSIONS;
use crate::server::Shared;

/// What the hot path needs of the server.
pub(crate) struct HotPath {
    shared: Arc<Shared>,
    /// `[http] sessions`: rmcp then serves statelessly only requests that carry their protocol
    /// version in `_meta`, and streams 200 answers as SSE.
    sessions: bool,
}

impl HotPath {
    pub(crate) fn new(shared: Arc<Shared>) -> HotPath {
        let sessions = shared.settings.http_sessions;
        HotPath { shared, sessions }
    }
}

/// A request the hot path answers, with what decides the answer's shape.
struct Planned {
    id: RequestId,
    request: ClientRequest,
    /// The version came in `_meta` (rmcp's "negotiated" path: error codes map to HTTP statuses).
    negotiated: bool,
    /// The effective version is 2026-07-28 or later: results keep `resultType` and list/read
    /// results carry cache hints; list/read `-32002` becomes `-32602`.
    current: bool,
    /// `_meta` lacks what 2026-07-28 requires (then `-32602` is a 400 on the negotiated path).
    meta_malformed: bool,
}

const V2026: &str = "2026-07-28";

/// The middleware (innermost on `/mcp`: it sees only requests every Trails check let through).
pub(crate) async fn answer(State(hot): State<Arc<HotPath>>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // Already read whole (and bounded) by `body::read_whole`: this only takes the bytes.
    let Ok(bytes) = body.collect().await.map(|collected| collected.to_bytes()) else {
        return refusal(StatusCode::BAD_REQUEST, -32700, "Parse error: the body could not be read");
    };
    let Some(planned) = plan(hot.sessions, &hot.shared, &parts.headers, &bytes) else {
        return next.run(Request::from_parts(parts, Body::from(bytes))).await;
    };
    tracing::debug!(method = planned.request.method(), "answered on the hot path");
    let caller = parts
        .extensions
        .get::<Caller>()
        .cloned()
        .unwrap_or_else(|| Caller::anonymous(hot.shared.settings.process_scopes));
    hot.serve(planned, caller).await
}

/// Whether rmcp would serve this request statelessly, and every rule it applies first passes.
fn plan(sessions: bool, shared: &Shared, headers: &HeaderMap, bytes: &[u8]) -> Option<Planned> {
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
    let ClientJsonRpcMessage::Request(JsonRpcRequest { id, request, .. }) = serde_json::from_slice(bytes).ok()? else {
        return None;
    };
    let (method, name) = match &request {
        ClientRequest::ListToolsRequest(_) => ("tools/list", None),
        ClientRequest::CallToolRequest(call) => ("tools/call", Some(call.params.name.as_ref())),
        ClientRequest::ListResourcesRequest(_) => ("resources/list", None),
        ClientRequest::ListResourceTemplatesRequest(_) => ("resources/templates/list", None),
        ClientRequest::ReadResourceRequest(read) => ("resources/read", Some(read.params.uri.as_str())),
        _ => return None,
    };
    let meta = request.get_meta();
    let requested = meta.protocol_version();
    let meta_malformed = !meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty();
    // `MCP-Protocol-Version`: the first value, visible ASCII, one rmcp knows unless `_meta` names
    // the version.
    let header = match headers.get("mcp-protocol-version") {
        None => None,
        Some(value) => Some(value.to_str().ok()?),
    };
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
        if !headers::standard_headers_agree(headers, method, name) {
            return None;
        }
        // SEP-2243 `Mcp-Param-*` headers (none of Trails' schemas declares one today).
        if method == "tools/call" && shared.catalog.declares_param_headers() {
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
    let version = requested.as_ref().map(ProtocolVersion::as_str).or(header).unwrap_or("2025-03-26");
    Some(Planned { current: version >= V2026, negotiated: requested.is_some(), id, request, meta_malformed })
}

impl HotPath {
    async fn serve(&self, planned: Planned, caller: Caller) -> Response {
        let shared = &self.shared;
        let outcome = match planned.request {
            ClientRequest::ListToolsRequest(_) => {
                let result = shared.catalog.list_json(caller.scopes, planned.current);
                return self.send(StatusCode::OK, response_bytes(&planned.id, &result));
            }
            ClientRequest::CallToolRequest(call) => {
                crate::mcp::call_tool(shared, &call.params.name, call.params.arguments, caller)
                    .await
                    .map(|result| ServerResult::from(CallToolResponse::Complete(result)))
            }
            ClientRequest::ListResourcesRequest(_) => Ok(ServerResult::ListResourcesResult(
                ListResourcesResult::with_all_items(crate::resources::list(shared, caller.scopes)),
            )),
            ClientRequest::ListResourceTemplatesRequest(_) => Ok(ServerResult::ListResourceTemplatesResult(
                ListResourceTemplatesResult::with_all_items(crate::resources::templates(shared)),
            )),
            ClientRequest::ReadResourceRequest(read) => {
                let trace_id = uuid::Uuid::new_v4().simple().to_string();
                crate::resources::read(shared, &read.params.uri, &trace_id, caller.scopes)
                    .await
                    .map(|result| ServerResult::from(ReadResourceResponse::Complete(result)))
                    // rmcp gives 2026-07-28 peers `-32602` for a missing resource (not for
                    // `tools/call`, whose errors it returns before that step).
                    .map_err(|mut error| {
                        if planned.current && error.code == ErrorCode::RESOURCE_NOT_FOUND {
                            error.code = ErrorCode::INVALID_PARAMS;
                        }
                        error
                    })
            }
            _ => unreachable!("`plan` takes only the five methods above"),
        };
        let (status, message) = match outcome {
            Ok(mut result) => {
                shape_result(&mut result, planned.current);
                (StatusCode::OK, ServerJsonRpcMessage::response(result, planned.id))
            }
            Err(error) => {
                let status =
                    if planned.negotiated { status_of(&error, planned.meta_malformed) } else { StatusCode::OK };
                (status, ServerJsonRpcMessage::error(error, Some(planned.id)))
            }
        };
        let body = serde_json::to_vec(&message).expect("rmcp messages serialise");
        self.send(status, body)
    }

    /// JSON, or with sessions on a 200 as one SSE event (what rmcp sends in each case).
    fn send(&self, status: StatusCode, json: Vec<u8>) -> Response {
        let mut response = if self.sessions && status == StatusCode::OK {
            let mut event = Vec::with_capacity(json.len() + 8);
            event.extend_from_slice(b"data: ");
            event.extend_from_slice(&json);
            event.extend_from_slice(b"\n\n");
            let mut response = Response::new(Body::from(event));
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
            response
        } else {
            let mut response = Response::new(Body::from(json));
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        };
        *response.status_mut() = status;
        response
    }
}

/// rmcp's last step on a result: 2026-07-28 peers get cache hints, older ones no `resultType`.
pub(crate) fn shape_result(result: &mut ServerResult, current: bool) {
    if current {
        result.fill_missing_cache_hints();
    } else {
        result.strip_result_type_for_legacy_peer();
    }
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` around a result already serialised: what
/// `ServerJsonRpcMessage::response` serialises to, without serialising the result again.
fn response_bytes(id: &RequestId, result: &Bytes) -> Vec<u8> {
    let id = serde_json::to_vec(id).expect("ids serialise");
    let mut body = Vec::with_capacity(result.len() + id.len() + 40);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    body.extend_from_slice(&id);
    body.extend_from_slice(br#","result":"#);
    body.extend_from_slice(result);
    body.push(b'}');
    body
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

#[cfg(test)]
mod tests {
    use rmcp::model::{ListToolsResult, NumberOrString};

    use super::*;

    #[test]
    fn a_spliced_response_is_what_rmcp_serialises() {
        let mut result = ServerResult::ListToolsResult(ListToolsResult::with_all_items(Vec::new()));
        shape_result(&mut result, true);
        let bytes = Bytes::from(serde_json::to_vec(&result).unwrap());
        for id in [NumberOrString::Number(-7), NumberOrString::String("a\"b\u{e9}".into())] {
            let spliced = response_bytes(&id, &bytes);
            let whole = serde_json::to_vec(&ServerJsonRpcMessage::response(result.clone(), id)).unwrap();
            assert_eq!(String::from_utf8(spliced).unwrap(), String::from_utf8(whole).unwrap());
        }
    }
}
