//! With `[auth.oauth]`, the step-up of MCP's authorization spec: a `tools/call` that needs a
//! token (or a scope) the caller lacks is answered 401 (or 403 `insufficient_scope`) with the
//! challenge that tells an OAuth client where to get one, so it can come back with it. The body
//! stays the JSON-RPC error the call would get anyway (DESIGN §4.2).

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::json;

use super::challenge::for_refusal;
use crate::state::Shared;
use crate::wire::jsonrpc::RpcMethod;
use trails_core::auth::Caller;
use trails_core::pipeline::Refusal;

/// After the JSON-RPC check: the answer to a `tools/call` refused for want of a token or a
/// scope, if this is one.
pub(crate) fn step_up(shared: &Shared, caller: &Caller, rpc: &RpcMethod) -> Option<Response> {
    let tool = rpc.tool.as_deref()?;
    let refused = match shared.pipeline.admit(tool, caller) {
        Err(refused @ (Refusal::AuthenticationRequired { .. } | Refusal::ScopeDenied { .. })) => refused,
        _ => return None,
    };
    let status = match refused {
        Refusal::AuthenticationRequired { .. } => StatusCode::UNAUTHORIZED,
        _ => StatusCode::FORBIDDEN,
    };
    let error = crate::wire::call::refusal(&refused);
    let body = json!({ "jsonrpc": "2.0", "id": rpc.id, "error": error }).to_string();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(challenge) = for_refusal(shared, &refused).and_then(|c| HeaderValue::try_from(c).ok()) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    }
    Some(response)
}
