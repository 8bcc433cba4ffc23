//! `POST /invoke/{id}` and `GET /openapi.json`: the capabilities as plain HTTP operations
//! (ADR-0005's OpenAPI projection). A call goes through the same dispatch as `tools/call` —
//! scopes, validation, provenance, error table — and only the envelope differs: the answer is
//! the MCP `CallToolResult`, an error is `{"error": {code, message, data}}` with the JSON-RPC
//! code MCP would have sent and the HTTP status that means the same.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use http_body_util::BodyExt;
use rmcp::model::ErrorCode;
use rmcp::ErrorData;
use serde_json::{json, Map, Value};

use crate::auth::Caller;
use crate::idempotency::{SentKey, Source};
use crate::mcp::errors::{AUTHENTICATION_FAILED, BUDGET_EXCEEDED, POLICY_DENIED, SCOPE_DENIED};
use crate::mcp::{admit, call_tool, Via};
use crate::projection::Info;
use crate::server::Shared;

/// `GET /openapi.json`: the operations this caller may call, built once per scope set.
pub(crate) async fn openapi(State(shared): State<Arc<Shared>>, Extension(caller): Extension<Caller>) -> Response {
    let info = Info { title: &shared.name, version: &shared.version };
    let document = shared.catalog.openapi_json(caller.scopes, |tools| crate::projection::openapi(tools, info));
    ([(header::CONTENT_TYPE, "application/json")], document).into_response()
}

/// `POST /invoke/{id}`.
pub(crate) async fn invoke(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    id: Result<Path<String>, PathRejection>,
    request: Request,
) -> Response {
    let Ok(Path(id)) = id else {
        return error(StatusCode::BAD_REQUEST, &invalid_params("the capability id in the path is not UTF-8"));
    };
    let Some(name) = shared.catalog.name_of(&id) else {
        return refusal(&crate::mcp::errors::unknown_tool(&id));
    };
    // Who may call it is settled before the body is read: a caller without the scope learns
    // nothing of the capability's input contract.
    if let Err(refused) = admit(&shared, name, &caller) {
        return refusal_for(&id, &refused);
    }
    let key = request.headers().get("idempotency-key").map(|value| SentKey {
        // A value that is not visible ASCII is no key: refused as "must be a string".
        value: value.to_str().map_or(Value::Null, |text| Value::String(text.to_owned())),
        source: Source::Header,
    });
    let arguments = match arguments(request).await {
        Ok(arguments) => arguments,
        Err(response) => return response,
    };
    match call_tool(&shared, name, Some(arguments), caller, Via::Invoke, key).await {
        Ok(result) => {
            let replayed = result.meta.as_ref().and_then(|meta| meta.get("trails")).and_then(|t| t.get("replayed"));
            let body = serde_json::to_vec(&result).expect("a tool result serialises");
            let mut response = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
            if replayed == Some(&Value::Bool(true)) {
                response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
            }
            response
        }
        Err(refused) => refusal_for(&id, &refused),
    }
}

/// A refusal of capability `id`: "unknown" names the id asked for, never the tool behind it, so
/// a hidden capability (disabled, masked, `dev` in production) answers like a missing one.
fn refusal_for(id: &str, refused: &ErrorData) -> Response {
    if status_of(refused) == StatusCode::NOT_FOUND {
        return refusal(&crate::mcp::errors::unknown_tool(id));
    }
    refusal(refused)
}

/// The body as the call's arguments: a JSON object (`{}` for none).
async fn arguments(request: Request) -> Result<Map<String, Value>, Response> {
    if !is_json(request.headers()) {
        let message = "the body must be `application/json`: the capability's arguments as a JSON object";
        return Err(error(StatusCode::UNSUPPORTED_MEDIA_TYPE, &invalid_request(message)));
    }
    // Already read whole, within `[http] max_body_bytes`, by `body::read_whole`.
    let Ok(bytes) = request.into_body().collect().await.map(|c| c.to_bytes()) else {
        return Err(error(StatusCode::BAD_REQUEST, &parse_error("the request body could not be read".into())));
    };
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(arguments)) => Ok(arguments),
        Ok(_) => Err(error(
            StatusCode::BAD_REQUEST,
            &invalid_params("the body is the capability's arguments as a JSON object (`{}` for none)"),
        )),
        Err(e) => Err(error(StatusCode::BAD_REQUEST, &parse_error(format!("the body is not JSON: {e}")))),
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

fn invalid_params(message: &'static str) -> ErrorData {
    ErrorData::new(ErrorCode::INVALID_PARAMS, message, None)
}

fn invalid_request(message: &'static str) -> ErrorData {
    ErrorData::new(ErrorCode::INVALID_REQUEST, message, None)
}

fn parse_error(message: String) -> ErrorData {
    ErrorData::new(ErrorCode::PARSE_ERROR, message, None)
}

/// The HTTP status that says what the JSON-RPC error says (DESIGN §4.2, §4.6).
fn status_of(refused: &ErrorData) -> StatusCode {
    let data = refused.data.as_ref();
    let data_has = |key: &str| data.is_some_and(|data| data.get(key).is_some());
    // Rejections that only the stored data explains (a taken unique value, a reference to
    // nothing): the request is well-formed and may succeed later.
    let conflicts_only = data.and_then(|data| data.get("fields")).and_then(Value::as_array).is_some_and(|fields| {
        !fields.is_empty() && fields.iter().all(|f| matches!(f["code"].as_str(), Some("unique" | "reference")))
    });
    match refused.code.0 {
        // A validation failure carries the rejected fields; an unknown tool, the tool.
        code if code == ErrorCode::INVALID_PARAMS.0 && conflicts_only => StatusCode::CONFLICT,
        code if code == ErrorCode::INVALID_PARAMS.0 && data_has("fields") => StatusCode::UNPROCESSABLE_ENTITY,
        code if code == ErrorCode::INVALID_PARAMS.0 && data_has("tool") => StatusCode::NOT_FOUND,
        code if code == ErrorCode::INVALID_PARAMS.0 => StatusCode::BAD_REQUEST,
        AUTHENTICATION_FAILED => StatusCode::UNAUTHORIZED,
        SCOPE_DENIED | POLICY_DENIED => StatusCode::FORBIDDEN,
        BUDGET_EXCEEDED => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn refusal(refused: &ErrorData) -> Response {
    error(status_of(refused), refused)
}

fn error(status: StatusCode, refused: &ErrorData) -> Response {
    let mut response =
        (status, [(header::CONTENT_TYPE, "application/json")], json!({ "error": refused }).to_string()).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="trails""#));
    }
    // A spent budget says when it renews.
    let retry_after = refused.data.as_ref().and_then(|data| data.get("retry_after_secs")).and_then(Value::as_u64);
    if let Some(secs) = retry_after.filter(|_| status == StatusCode::TOO_MANY_REQUESTS) {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_code_has_its_status() {
        let with = |code: i32, data: Option<Value>| status_of(&ErrorData::new(ErrorCode(code), "x", data));
        assert_eq!(with(-32602, Some(json!({ "fields": [] }))), StatusCode::UNPROCESSABLE_ENTITY);
        let fields =
            |codes: &[&str]| json!({ "fields": codes.iter().map(|c| json!({ "code": c })).collect::<Vec<_>>() });
        assert_eq!(with(-32602, Some(fields(&["unique", "reference"]))), StatusCode::CONFLICT);
        assert_eq!(with(-32602, Some(fields(&["unique", "pattern"]))), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(with(-32602, Some(json!({ "tool": "x" }))), StatusCode::NOT_FOUND);
        assert_eq!(with(-32602, None), StatusCode::BAD_REQUEST);
        assert_eq!(with(-32001, None), StatusCode::UNAUTHORIZED);
        assert_eq!(with(-32002, None), StatusCode::FORBIDDEN);
        assert_eq!(with(-32003, None), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(with(-32004, None), StatusCode::FORBIDDEN);
        assert_eq!(with(-32603, Some(json!({ "trace_id": "t" }))), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn only_json_bodies_are_read() {
        let headers = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(value));
            headers
        };
        assert!(is_json(&headers("application/json")));
        assert!(is_json(&headers("Application/JSON; charset=utf-8")));
        assert!(!is_json(&headers("text/plain")));
        assert!(!is_json(&headers("application/jsonx")));
        assert!(!is_json(&HeaderMap::new()));
    }
}
