//! With `[auth.oauth]`, the step-up of MCP's authorization spec: a `tools/call` that needs a
//! token (or a scope) the caller lacks is answered 401 (or 403 `insufficient_scope`) with the
//! challenge that tells an OAuth client where to get one, so it can come back with it. The body
//! stays the JSON-RPC error the call would get anyway (DESIGN §4.2).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::json;

use super::challenge::for_refusal;
use crate::pipeline::Refusal;
use crate::state::Shared;
use crate::wire::jsonrpc::RpcMethod;
use trails_core::auth::Caller;

/// In front of `/mcp`, after the JSON-RPC check: a `tools/call` refused for want of a token or a
/// scope is answered here.
pub(crate) async fn step_up(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let Some(rpc) = request.extensions().get::<RpcMethod>() else { return next.run(request).await };
    let Some(tool) = rpc.tool.as_deref() else { return next.run(request).await };
    let anonymous;
    let caller = match request.extensions().get::<Caller>() {
        Some(caller) => caller,
        None => {
            anonymous = Caller::anonymous(shared.settings.process_scopes);
            &anonymous
        }
    };
    let refused = match shared.pipeline.admit(tool, caller) {
        Err(refused @ (Refusal::AuthenticationRequired { .. } | Refusal::ScopeDenied { .. })) => refused,
        _ => return next.run(request).await,
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
    if let Some(challenge) = for_refusal(&shared, &refused).and_then(|c| HeaderValue::try_from(c).ok()) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}
