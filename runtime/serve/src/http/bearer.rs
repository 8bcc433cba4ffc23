//! Bearer authentication for every HTTP route: attach the `Caller` to the request, or stop it
//! with 401 and `WWW-Authenticate` before anything else sees it.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use crate::state::Shared;
use crate::throttle::Throttle;
use crate::wire::errors;
use rmcp::model::ErrorCode;
use rmcp::ErrorData;
use serde_json::json;
use trails_core::auth::{bearer, Caller};
use trails_core::pipeline::AUTHENTICATION_FAILED;

/// The caller a request's headers authenticate. No `Authorization` means anonymous (runtime
/// tools only); a token that does not verify is answered 401 with `WWW-Authenticate`, before
/// anything else sees the request. A token that matches no configured hash is checked as an
/// OAuth access token when `[auth.oauth]` is set. `path` picks the error's form.
pub(crate) async fn caller(
    shared: &Shared,
    log: &Throttle,
    headers: &HeaderMap,
    path: &str,
) -> Result<Caller, Box<Response>> {
    // Refused here, the body is never read: the connection cannot carry another request.
    let close = has_body(headers);
    let mcp = path == super::MCP_PATH;
    match headers.get(header::AUTHORIZATION) {
        // `[auth] anonymous = false`: a token on every request (but the health check).
        None if !shared.http.anonymous && path != "/healthz" => Err(Box::new(required(shared).response(mcp, close))),
        None => Ok(Caller::anonymous(shared.mcp.process_scopes)),
        Some(value) => {
            let token = value.to_str().ok().and_then(bearer);
            verify(shared, token).await.map_err(|refused| {
                if let Some(held_back) = log.allow() {
                    tracing::warn!(held_back, reason = %refused.reason, "rejected a request with an invalid bearer token");
                }
                Box::new(refused.response(mcp, close))
            })
        }
    }
}

/// [`caller`] as a middleware, for the routes beside `/mcp`: attach the caller to the request.
pub(crate) async fn authenticate(
    State((shared, log)): State<(Arc<Shared>, Arc<Throttle>)>,
    mut request: Request,
    next: Next,
) -> Response {
    match caller(&shared, &log, request.headers(), request.uri().path()).await {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(refused) => *refused,
    }
}

/// Why a presented token was refused, and how to answer.
struct Refused {
    status: StatusCode,
    error: ErrorData,
    /// The `WWW-Authenticate` value (401) or `None` (503).
    challenge: Option<String>,
    /// For the log (never the token).
    reason: String,
}

impl Refused {
    /// A JSON-RPC error on the MCP endpoint, and the plain `{"error": …}` every other route
    /// answers with (`/invoke`, `/openapi.json`, …) elsewhere. `close`: the request's body is
    /// left unread, so the answer says the connection closes (else a keep-alive client sends its
    /// next request into a closed connection).
    fn response(self, mcp: bool, close: bool) -> Response {
        let body =
            if mcp { response_body(&self.error) } else { serde_json::json!({ "error": self.error }).to_string() };
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(challenge) = self.challenge.and_then(|c| HeaderValue::try_from(c).ok()) {
            headers.insert(header::WWW_AUTHENTICATE, challenge);
        }
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        if close {
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

/// Whether the request carries a body (one hyper would have to read before the next request).
fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers.get(header::CONTENT_LENGTH).is_some_and(|length| length.as_bytes() != b"0")
}

/// A request without a token where one is required: 401 with the challenge that says where to
/// get one (with `[auth.oauth]`, the metadata).
fn required(shared: &Shared) -> Refused {
    let challenge = match &shared.authority {
        Some(authority) => authority.challenge(None, None),
        None => super::challenge::PLAIN.to_owned(),
    };
    Refused {
        status: StatusCode::UNAUTHORIZED,
        error: token_required(),
        challenge: Some(challenge),
        reason: "no token, and [auth] anonymous = false".to_owned(),
    }
}

/// What a client is told of a token refused for a reason it must not learn.
const NOT_ACCEPTED: &str = "this server does not accept the token; its operator's log says why";

/// The caller a presented token authenticates: a configured hash first, then the OAuth
/// resource server.
async fn verify(shared: &Shared, token: Option<&str>) -> Result<Caller, Refused> {
    let (tokens, process_scopes) = (&shared.http.tokens, shared.mcp.process_scopes);
    if let Some(caller) = token.and_then(|token| tokens.caller(token, process_scopes)) {
        return Ok(caller);
    }
    if let Some(authority) = &shared.authority {
        use crate::state::authority::TokenRejection as Rejection;
        let Some(token) = token else {
            // Another scheme is no Bearer credential at all: the challenge names no error
            // (RFC 6750 §3), only where to get a token.
            let why = "the Authorization header is not `Bearer <token>`";
            return Err(Refused {
                status: StatusCode::UNAUTHORIZED,
                error: token_refused(why),
                challenge: Some(authority.challenge(None, None)),
                reason: why.to_owned(),
            });
        };
        let caller = authority.caller(token, process_scopes).await;
        // Subjects and static token names share one namespace (sessions, budgets, idempotency
        // keys and Cedar's principal are keyed by it): a subject that is a static token's name
        // would act as that token. The client is not told why (that would confirm the name of a
        // static token to whoever can pick a subject); the log is.
        let caller = caller.and_then(|caller| match caller.name.as_deref() {
            Some(name) if tokens.names(name) => {
                tracing::warn!(
                    "refused an OAuth token whose subject is the name of an [[http.tokens]] entry; rename that entry"
                );
                Err(Rejection { why: NOT_ACCEPTED.to_owned(), retryable: false })
            }
            _ => Ok(caller),
        });
        return caller.map_err(|Rejection { why, retryable }| match retryable {
            false => Refused {
                status: StatusCode::UNAUTHORIZED,
                error: token_refused(&why),
                challenge: Some(authority.challenge(Some(("invalid_token", &why)), None)),
                reason: why,
            },
            true => Refused {
                status: StatusCode::SERVICE_UNAVAILABLE,
                error: token_unverifiable(&why),
                challenge: None,
                reason: why,
            },
        });
    }
    let error = if tokens.is_empty() {
        errors::no_tokens_configured("[[http.tokens]] in trails.toml")
    } else {
        errors::authentication_failed()
    };
    Err(Refused {
        status: StatusCode::UNAUTHORIZED,
        error,
        challenge: Some(r#"Bearer realm="trails", error="invalid_token""#.to_owned()),
        reason: "no configured token matches".to_owned(),
    })
}

/// A request without a token to a server that serves none without (`[auth] anonymous = false`).
fn token_required() -> ErrorData {
    ErrorData::new(
        ErrorCode(AUTHENTICATION_FAILED),
        "authentication required: this server answers only requests with a token",
        None,
    )
}

/// An access token this server does not accept, and why (the reason quotes nothing of it).
fn token_refused(why: &str) -> ErrorData {
    ErrorData::new(ErrorCode(AUTHENTICATION_FAILED), format!("authentication failed: {why}"), None)
}

/// An access token that cannot be checked now (its authority is out of reach): not the client's
/// fault, and worth a retry.
fn token_unverifiable(why: &str) -> ErrorData {
    ErrorData::new(ErrorCode(-32000), format!("the token cannot be checked now: {why}"), None)
}

/// A whole JSON-RPC error response with `id: null`, for refusals made before a request is read
/// (the HTTP layer's 401).
fn response_body(error: &ErrorData) -> String {
    json!({ "jsonrpc": "2.0", "id": null, "error": error }).to_string()
}
