//! The HTTP surface: MCP Streamable HTTP at `/mcp` (rmcp's service: Host allow-list, Origin
//! check, body limit), the capability manifest, and bearer-token authentication in front.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::auth::{bearer, Caller};
use crate::config::Settings;
use crate::mcp::{Shared, TrailsServer, Transport};
use crate::sessions::BoundedSessions;

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Hosts accepted in `Host` (DNS-rebinding defence, omnigraph RFC-003 §3): the loopback names
/// for a loopback bind, otherwise the configured hosts (or the bind address itself).
pub fn allowed_hosts(settings: &Settings, bind: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = settings.allowed_hosts.clone();
    if bind.ip().is_loopback() {
        hosts.extend(LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()));
    } else if hosts.is_empty() {
        hosts.push(bind.ip().to_string());
    }
    hosts
}

/// Origins accepted when a browser sends one; requests without `Origin` always pass.
pub fn allowed_origins(settings: &Settings) -> Vec<String> {
    if settings.allowed_origins.is_empty() {
        vec!["http://localhost:*".into(), "http://127.0.0.1:*".into(), "http://[::1]:*".into()]
    } else {
        settings.allowed_origins.clone()
    }
}

/// The whole HTTP application for a server bound at `bind`.
pub fn router(shared: Arc<Shared>, bind: SocketAddr) -> Router {
    let settings = &shared.settings;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts(settings, bind))
        .with_allowed_origins(allowed_origins(settings))
        .enforce_origin_validation()
        .with_max_request_body_bytes(settings.max_body_bytes)
        .with_legacy_session_mode(settings.http_sessions)
        // Without sessions, answer plain JSON when nothing streams (rmcp falls back to SSE if it must).
        .with_json_response(!settings.http_sessions);
    let server = TrailsServer::new(shared.clone(), Transport::Http);
    // The factory runs per session (or per stateless request): an `Arc` clone, nothing rebuilt.
    let sessions = Arc::new(BoundedSessions::new(settings.max_sessions));
    let mcp = StreamableHttpService::new(move || Ok(server.clone()), sessions, config);
    Router::new()
        .route_service("/mcp", mcp)
        .route("/.well-known/capabilities", get(manifest))
        .route("/healthz", get(|| async { "ok" }))
        .layer(middleware::from_fn_with_state(shared.clone(), authenticate))
        .with_state(shared)
}

async fn manifest(State(shared): State<Arc<Shared>>) -> Response {
    if !shared.settings.manifest_enabled {
        return StatusCode::NOT_FOUND.into_response();
    }
    ([(header::CONTENT_TYPE, "application/ld+json")], shared.manifest.clone()).into_response()
}

/// Attach the caller to the request. No `Authorization` means anonymous (runtime tools only);
/// a token that does not verify stops the request here with 401, before MCP sees it.
async fn authenticate(State(shared): State<Arc<Shared>>, mut request: Request, next: Next) -> Response {
    let settings = &shared.settings;
    let caller = match request.headers().get(header::AUTHORIZATION) {
        None => Caller::anonymous(settings.process_scopes),
        Some(value) => {
            let entry = value.to_str().ok().and_then(bearer).and_then(|token| settings.http_tokens.verify(token));
            match entry {
                Some(entry) => Caller { name: Some(entry.name.clone()), scopes: entry.scopes.intersect(settings.process_scopes) },
                None => {
                    tracing::warn!("rejected a request with an invalid bearer token");
                    return unauthorized();
                }
            }
        }
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

fn unauthorized() -> Response {
    let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"authentication failed"}}"#;
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(r#"Bearer realm="trails", error="invalid_token""#),
    );
    response
}
