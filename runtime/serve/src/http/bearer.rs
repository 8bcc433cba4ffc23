//! Bearer authentication for every HTTP route: attach the `Caller` to the request, or stop it
//! with 401 and `WWW-Authenticate` before anything else sees it.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use super::throttle::Throttle;
use crate::state::Shared;
use crate::wire::errors;
use rmcp::ErrorData;
use trails_core::auth::{bearer, Caller};

/// Attach the caller to the request. No `Authorization` means anonymous (runtime tools only);
/// a token that does not verify stops the request here with 401, before MCP sees it.
pub(crate) async fn authenticate(
    State((shared, log)): State<(Arc<Shared>, Arc<Throttle>)>,
    mut request: Request,
    next: Next,
) -> Response {
    let settings = &shared.settings;
    let caller = match request.headers().get(header::AUTHORIZATION) {
        None => Caller::anonymous(settings.process_scopes),
        Some(value) => {
            let caller = value
                .to_str()
                .ok()
                .and_then(bearer)
                .and_then(|token| settings.http_tokens.caller(token, settings.process_scopes));
            match caller {
                Some(caller) => caller,
                None => {
                    if let Some(held_back) = log.allow() {
                        tracing::warn!(held_back, "rejected a request with an invalid bearer token");
                    }
                    let error = if settings.http_tokens.is_empty() {
                        errors::no_tokens_configured("[[http.tokens]] in trails.toml")
                    } else {
                        errors::authentication_failed()
                    };
                    return unauthorized(request.uri().path() == super::MCP_PATH, error);
                }
            }
        }
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// 401 for a token that does not verify: a JSON-RPC error on the MCP endpoint, and the plain
/// `{"error": …}` every other route answers with (`/invoke`, `/openapi.json`, …) elsewhere.
fn unauthorized(mcp: bool, error: ErrorData) -> Response {
    let body = if mcp { errors::response_body(&error) } else { serde_json::json!({ "error": error }).to_string() };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="trails", error="invalid_token""#));
    response
}
