//! Request bodies, read before anything else sees them: within `[http] body_timeout_secs` of
//! the head (a body that trickles or never finishes is answered 408 instead of holding a
//! connection and a task forever) and up to `[http] max_body_bytes` (413). Both answers are
//! JSON-RPC errors, and close the connection: the rest of the body is never read.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};

/// How long a body may take and how large it may be.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyLimits {
    pub(crate) timeout: Duration,
    pub(crate) max_bytes: usize,
}

/// A JSON-RPC error answer (`id: null`: the request was never read) that closes the connection.
pub(crate) fn refusal(status: StatusCode, code: i32, message: &str) -> Response {
    refusal_of(&serde_json::Value::Null, status, code, message)
}

/// [`refusal`] of the request with `id`.
pub(crate) fn refusal_of(id: &serde_json::Value, status: StatusCode, code: i32, message: &str) -> Response {
    let body = serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
    (status, [(header::CONTENT_TYPE, "application/json"), (header::CONNECTION, "close")], body.to_string())
        .into_response()
}

/// The whole body, or the answer that refuses it.
pub(crate) async fn read(limits: BodyLimits, body: Body) -> Result<Bytes, Box<Response>> {
    let reading = Limited::new(body, limits.max_bytes).collect();
    let refused = match tokio::time::timeout(limits.timeout, reading).await {
        Ok(Ok(collected)) => return Ok(collected.to_bytes()),
        Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
            &format!("the request body is over {} bytes ([http] max_body_bytes)", limits.max_bytes),
        ),
        Ok(Err(_)) => refusal(StatusCode::BAD_REQUEST, -32700, "the request body could not be read"),
        Err(_) => refusal(
            StatusCode::REQUEST_TIMEOUT,
            -32600,
            &format!(
                "the request body did not arrive within {} s ([http] body_timeout_secs)",
                limits.timeout.as_secs()
            ),
        ),
    };
    Err(Box::new(refused))
}

/// [`read`] as a middleware, for the routes beside `/mcp`.
pub(crate) async fn read_whole(State(limits): State<BodyLimits>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    match read(limits, body).await {
        Ok(bytes) => next.run(Request::from_parts(parts, Body::from(bytes))).await,
        Err(refused) => *refused,
    }
}
