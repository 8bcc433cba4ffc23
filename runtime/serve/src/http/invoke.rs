//! `POST /invoke/{id}` and `GET /openapi.json`: the capabilities as plain HTTP operations (the
//! OpenAPI projection). A call goes through the same dispatch as `tools/call` — scopes,
//! validation, provenance, error table — and only the envelope differs: the answer is the MCP
//! `CallToolResult`, an error is `{"error": {code, message, data}}` with the JSON-RPC code MCP
//! would have sent and the HTTP status that means the same. A handler's domain error (an
//! `isError` result over MCP) is `{"error": {kind, message, retryable, retry_after_secs?}}` with
//! 404, 409, 412 or 503 (and `Retry-After` when it says when).

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

use crate::method::{call, CallInfo, Via};
use crate::projection::Info;
use crate::state::Shared;
use trails_core::auth::Caller;
use trails_core::error::{DomainError, Error};
use trails_core::pipeline::{Failure, Refusal};
use trails_governance::idempotency::{SentKey, Source};

/// `GET /openapi.json`: the operations this caller may call, built once per scope set.
pub(crate) async fn openapi(State(shared): State<Arc<Shared>>, Extension(caller): Extension<Caller>) -> Response {
    let info = Info { title: &shared.name, version: &shared.version, manifest: shared.mcp.manifest_enabled };
    let view = shared.view(&caller);
    let document = shared
        .listings
        .openapi_json(&shared.pipeline.catalog, view, |tools| crate::projection::openapi_served(tools, info));
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
    let Some(name) = shared.pipeline.catalog.name_of(&id) else {
        return refusal(&shared, &Refusal::UnknownTool { name: id });
    };
    // Who may call it is settled before the body is read: a caller without the scope learns
    // nothing of the capability's input contract.
    if let Err(refused) = shared.pipeline.admit(name, &caller) {
        return refusal_for(&shared, &id, &refused);
    }
    // `?dry_run=true`: every check but the handler (`pipeline::DryRun`).
    let dry_run = match request.uri().query().into_iter().flat_map(|query| query.split('&')).find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, "true"));
        (name == "dry_run").then(|| value.to_owned())
    }) {
        None => false,
        Some(value) if value == "true" => true,
        Some(value) if value == "false" => false,
        Some(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                &invalid_params("`dry_run` is `true` (check the call, run nothing) or `false`"),
            );
        }
    };
    let trace = crate::wire::trace::TraceParent::from_headers(request.headers());
    let key = request.headers().get("idempotency-key").map(|value| SentKey {
        // A value that is not visible ASCII is no key: refused as "must be a string".
        value: value.to_str().map_or(Value::Null, |text| Value::String(text.to_owned())),
        source: Source::Header,
    });
    let arguments = match arguments(request).await {
        Ok(arguments) => arguments,
        Err(response) => return response,
    };
    let info = CallInfo { key, trace, dry_run, ..Default::default() };
    match call(&shared, name, Some(arguments), caller, Via::Invoke, info).await {
        Ok(answer) => {
            if let Some(Failure::Domain(domain)) = answer.failure() {
                return domain_error(domain);
            }
            let replayed = answer.is_replay();
            let body = serde_json::to_vec(&crate::wire::call::answer(answer)).expect("a tool result serialises");
            let mut response = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
            if replayed {
                response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
            }
            response
        }
        Err(refused) => refusal_for(&shared, &id, &refused),
    }
}

/// A refusal of capability `id`: "unknown" names the id asked for, never the tool behind it, so
/// a hidden capability (disabled, masked, `dev` in production) answers like a missing one.
fn refusal_for(shared: &Shared, id: &str, refused: &Refusal) -> Response {
    if status_of(refused) == StatusCode::NOT_FOUND {
        return refusal(shared, &Refusal::UnknownTool { name: id.to_owned() });
    }
    refusal(shared, refused)
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

/// The HTTP status that says what the refusal says.
fn status_of(refused: &Refusal) -> StatusCode {
    match refused {
        Refusal::UnknownTool { .. } | Refusal::Failed { error: Error::UnknownTool(_), .. } => StatusCode::NOT_FOUND,
        Refusal::AuthenticationRequired { .. } => StatusCode::UNAUTHORIZED,
        Refusal::ScopeDenied { .. } | Refusal::Failed { error: Error::PolicyDenied(_), .. } => StatusCode::FORBIDDEN,
        // Rejections that only the stored data explains (a taken unique value, a reference to
        // nothing): the request is well-formed and may succeed later.
        refused if refused.conflicts_only() => StatusCode::CONFLICT,
        Refusal::Failed { error: Error::Validation { .. }, .. } => StatusCode::UNPROCESSABLE_ENTITY,
        Refusal::Failed { error: Error::BudgetExceeded { .. }, .. } => StatusCode::TOO_MANY_REQUESTS,
        Refusal::Failed { error: Error::Domain(domain), .. } => domain_status(domain),
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn domain_status(domain: &DomainError) -> StatusCode {
    StatusCode::from_u16(domain.kind().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// A handler's domain error: the status its kind means, the body the model reads over MCP.
fn domain_error(domain: &DomainError) -> Response {
    let status = domain_status(domain);
    let body = json!({ "error": domain.to_json() }).to_string();
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(secs) = domain.retry_after_secs() {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

/// A refusal with its status, and the challenge of a 401/403 (`challenge.rs`).
fn refusal(shared: &Shared, refused: &Refusal) -> Response {
    let mut response = error(status_of(refused), &crate::wire::call::refusal(refused));
    let challenge = super::challenge::for_refusal(shared, refused).and_then(|c| HeaderValue::try_from(c).ok());
    if let Some(challenge) = challenge {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

fn error(status: StatusCode, refused: &ErrorData) -> Response {
    let mut response =
        (status, [(header::CONTENT_TYPE, "application/json")], json!({ "error": refused }).to_string()).into_response();
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
    fn each_refusal_has_its_status() {
        use trails_core::auth::{Scope, ScopeSet};
        use trails_core::validate::{FieldCode, FieldError};
        let failed = |error| status_of(&Refusal::Failed { error, trace_id: String::new() });
        let field =
            |code| FieldError { field: "f".into(), code, message: "m".into(), value: json!(1), constraint: json!(1) };
        let fields = |codes: &[FieldCode]| Error::validation(codes.iter().copied().map(field).collect());
        assert_eq!(failed(fields(&[FieldCode::Pattern])), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(failed(fields(&[FieldCode::Unique, FieldCode::Reference])), StatusCode::CONFLICT);
        assert_eq!(failed(fields(&[FieldCode::Unique, FieldCode::Pattern])), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(status_of(&Refusal::UnknownTool { name: "x".into() }), StatusCode::NOT_FOUND);
        assert_eq!(failed(Error::UnknownTool("x".into())), StatusCode::NOT_FOUND);
        let (tool, scope) = ("x".to_owned(), Scope::Builder);
        let unauthenticated = Refusal::AuthenticationRequired { tool: tool.clone(), scope };
        assert_eq!(status_of(&unauthenticated), StatusCode::UNAUTHORIZED);
        let denied = Refusal::ScopeDenied { tool, scope, caller_scopes: ScopeSet::up_to(Scope::Runtime) };
        assert_eq!(status_of(&denied), StatusCode::FORBIDDEN);
        assert_eq!(failed(Error::policy_denied("no")), StatusCode::FORBIDDEN);
        assert_eq!(failed(Error::budget_exceeded("spent")), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(failed(Error::internal("x")), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(failed(Error::precondition_failed("x")), StatusCode::PRECONDITION_FAILED);
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
