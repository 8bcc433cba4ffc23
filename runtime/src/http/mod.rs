//! HTTP: the axum router. MCP Streamable HTTP at `/mcp` (rmcp's service with the Host/Origin
//! policy, body limit and bounded sessions), the capability manifest, `/healthz`, and bearer
//! authentication in front of all of them.

mod bearer;
mod origin;
mod sessions;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::mcp::{TrailsServer, Transport};
use crate::server::Shared;
use origin::{allowed_hosts, allowed_origins};
use sessions::BoundedSessions;

/// The whole HTTP application for a server bound at `bind`.
pub(crate) fn router(shared: Arc<Shared>, bind: SocketAddr) -> Router {
    let settings = &shared.settings;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts(settings, bind))
        .with_allowed_origins(allowed_origins(settings))
        .enforce_origin_validation()
        .with_max_request_body_bytes(settings.max_body_bytes)
        .with_legacy_session_mode(settings.http_sessions)
        // Without sessions, answer plain JSON when nothing streams (rmcp falls back to SSE if it must).
        .with_json_response(!settings.http_sessions);
    // The factory runs per session (or per stateless request): an `Arc` clone and an empty
    // session, nothing rebuilt.
    let sessions = Arc::new(BoundedSessions::new(settings.max_sessions, settings.session_idle));
    let for_sessions = shared.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(TrailsServer::new(for_sessions.clone(), Transport::Http)),
        sessions,
        config,
    );
    Router::new()
        .route_service("/mcp", mcp)
        .route("/.well-known/capabilities", get(manifest))
        .route("/healthz", get(|| async { "ok" }))
        .layer(middleware::from_fn_with_state(shared.clone(), bearer::authenticate))
        .with_state(shared)
}

async fn manifest(State(shared): State<Arc<Shared>>) -> Response {
    if !shared.settings.manifest_enabled {
        return StatusCode::NOT_FOUND.into_response();
    }
    ([(header::CONTENT_TYPE, "application/ld+json")], shared.manifest.clone()).into_response()
}
