//! What reaches rmcp at `POST /mcp` is one well-formed JSON-RPC message (`wire::jsonrpc`): a
//! malformed one is answered `400` with its JSON-RPC error, a malformed `tools/call` `200` under
//! its own id.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde_json::json;

use super::body::refusal;
use crate::wire::jsonrpc::inspect;

pub(crate) async fn check(request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    // Already read whole (and bounded) by `body::read_whole`: this only takes the bytes.
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return refusal(StatusCode::BAD_REQUEST, -32700, "Parse error: the body could not be read"),
    };
    match inspect(&bytes) {
        Ok(method) => {
            parts.extensions.insert(method);
            next.run(Request::from_parts(parts, Body::from(bytes))).await
        }
        Err((code @ -32602, message, id)) => {
            let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
            (StatusCode::OK, [(axum::http::header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
        }
        Err((code, message, _)) => refusal(StatusCode::BAD_REQUEST, code, &message),
    }
}
