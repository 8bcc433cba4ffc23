//! What reaches rmcp at `POST /mcp` is one well-formed JSON-RPC message (`wire::jsonrpc`): a
//! malformed one is answered `400` with its JSON-RPC error, a malformed `tools/call` `200` under
//! its own id.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::body::refusal;
use crate::wire::jsonrpc::{read, RpcMethod};

/// The message's method and id, and the message as read; or the answer that refuses it.
pub(crate) fn check(bytes: &[u8]) -> Result<(RpcMethod, serde_json::Value), Box<Response>> {
    read(bytes).map_err(|refused| {
        Box::new(match refused {
            (code @ -32602, message, id) => {
                let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
                (StatusCode::OK, [(axum::http::header::CONTENT_TYPE, "application/json")], body.to_string())
                    .into_response()
            }
            (code, message, _) => refusal(StatusCode::BAD_REQUEST, code, &message),
        })
    })
}
