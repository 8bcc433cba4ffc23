//! HTTP: the axum router. MCP Streamable HTTP at `/mcp` (rmcp's service with the Host/Origin
//! policy, body limit and bounded sessions), the capability manifest, the OpenAPI document and
//! `POST /invoke/{id}`, the SHACL shapes, `/healthz`, and bearer authentication in front of all of them.

mod bearer;
mod blob;
mod body;
mod challenge;
mod endpoint;
mod hot;
mod invoke;
mod jsonrpc;
mod listen;
mod origin;
mod session_guard;
mod sessions;
mod shapes;
mod step_up;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Extension, Router};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use tokio_util::sync::CancellationToken;

use crate::mcp::TrailsServer;
use crate::method::Transport;
use crate::part::assembly::PartRoutes;
use crate::state::Shared;
use body::BodyLimits;
use origin::{allowed_hosts, allowed_origins, HostPolicy};
use sessions::BoundedSessions;
use trails_core::auth::Caller;

#[cfg(any(fuzzing, test))]
pub(crate) use hot::fuzz as fuzz_hot_path;

use hot::HotPath;
pub(crate) use listen::{serve, ConnectionLimits};
pub(crate) use origin::{startup_hosts, ANY_HOST};

/// The MCP endpoint; every other route answers errors as plain `{"error": …}` bodies.
const MCP_PATH: &str = "/mcp";

/// How often a warning any client can trigger is logged, at most.
const LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// The whole HTTP application for a server bound at `bind`, and its sessions' upkeep: a future
/// that sweeps half-opened and idle sessions on a timer until `streams` is cancelled, then closes
/// every session (shutdown), for the server to run beside it. With `streams` cancelled, every MCP
/// event stream ends. Without the upkeep running, sessions are swept when requests come.
pub(crate) fn router(
    shared: Arc<Shared>,
    bind: SocketAddr,
    streams: CancellationToken,
) -> (Router, impl std::future::Future<Output = ()> + Send + 'static) {
    let settings = &shared.http;
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(streams.clone())
        .with_allowed_hosts(allowed_hosts(settings, bind))
        .with_allowed_origins(allowed_origins(settings))
        .enforce_origin_validation()
        .with_max_request_body_bytes(settings.max_body_bytes)
        .with_legacy_session_mode(settings.sessions)
        // Without sessions, answer plain JSON when nothing streams (rmcp falls back to SSE if it must).
        .with_json_response(!settings.sessions);
    // The factory runs per session (or per stateless request): an `Arc` clone and an empty
    // session, nothing rebuilt.
    let sessions = Arc::new(BoundedSessions::new(settings.max_sessions));
    let bounds = session_guard::Bounds {
        max: settings.max_sessions,
        max_anonymous: settings.max_anonymous_sessions,
        init_within: settings.session_init,
        idle: settings.session_idle,
    };
    let guard = Arc::new(session_guard::SessionGuard::new(sessions.clone(), bounds));
    let upkeep = {
        let (sessions, guard, closing) = (sessions.clone(), guard.clone(), streams.clone());
        async move {
            // Half-opened sessions are closed at most 1.5 × `session_init_secs` after they opened
            // (idle ones as late after their idle time) even when no `initialize` comes to sweep
            // them: without this, a flood's sessions would hold their memory.
            let mut ticks = tokio::time::interval(guard.sweep_every());
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = closing.cancelled() => break,
                    _ = ticks.tick() => {}
                }
                tokio::select! {
                    () = closing.cancelled() => break,
                    () = guard.sweep() => {}
                }
            }
            // Session event streams belong to the sessions, not to the service's token.
            sessions.close_all().await;
        }
    };
    let for_sessions = shared.clone();
    let rmcp = StreamableHttpService::new(
        move || Ok(TrailsServer::new(for_sessions.clone(), Transport::Http)),
        sessions,
        config,
    );
    let hosts = Arc::new(HostPolicy::new(settings, bind));
    let auth_log = Arc::new(crate::throttle::Throttle::new(LOG_EVERY));
    let body = BodyLimits { timeout: settings.body_timeout, max_bytes: settings.max_body_bytes };
    let endpoint = endpoint::Endpoint {
        shared: shared.clone(),
        hosts: hosts.clone(),
        auth_log: auth_log.clone(),
        body,
        rmcp,
        sessions: guard,
        hot: settings.hot_path.then(|| Arc::new(HotPath::new(shared.clone(), streams.clone()))),
    };
    // `/mcp` runs the same checks as the routes beside it, as plain functions (`endpoint`); it
    // is added last, outside these layers.
    let mut routes =
        Router::new().route("/.well-known/capabilities", get(manifest)).route("/healthz", get(|| async { "ok" }));
    // The projections beside MCP, each behind its own switch: a route switched off is not there
    // at all (404), rather than there and refusing.
    if settings.invoke_enabled {
        routes = routes.route("/openapi.json", get(invoke::openapi)).route("/invoke/{id}", post(invoke::invoke));
    }
    if settings.shapes_enabled {
        let of = axum::Extension(shapes::of(&shared));
        routes = routes
            .route("/shapes.ttl", get(shapes::graph).layer(of.clone()))
            .route("/shapes/{name}", get(shapes::one).layer(of));
    }
    if shared.resources.kg.is_some() {
        routes = routes.route("/blobs/{sha256}", get(blob::blob));
    }
    let mut routes = routes.with_state(shared.clone());
    // The parts' own routes, behind the same checks (`part::SERVED_PATHS`: none is one of these).
    if let Some(PartRoutes(added)) = shared.kept.get::<PartRoutes>() {
        for (path, route) in added {
            routes = routes.route(path, route.clone());
        }
    }
    routes = routes
        // Inside authentication: an unauthenticated request is refused before its body is read.
        .layer(middleware::from_fn_with_state(body, body::read_whole))
        .layer(middleware::from_fn_with_state((shared.clone(), auth_log), bearer::authenticate));
    // Outside authentication: a client reads where to get a token before it has one (RFC 9728;
    // the path-suffixed form names the resource `/mcp`).
    if let Some(authority) = &shared.authority {
        let metadata = get(resource_metadata).with_state(shared.clone());
        for path in authority.metadata_paths() {
            routes = routes.route(&path, metadata.clone());
        }
    }
    let router = routes
        // Outermost: a foreign Host or Origin learns nothing, not even whether its token is good.
        .layer(middleware::from_fn_with_state(hosts, origin::check))
        .route(MCP_PATH, any(endpoint::serve).with_state(Arc::new(endpoint)));
    (router, upkeep)
}

/// `GET /.well-known/oauth-protected-resource[/mcp]`: the Protected Resource Metadata.
async fn resource_metadata(State(shared): State<Arc<Shared>>) -> Response {
    match &shared.authority {
        Some(authority) => axum::Json(authority.metadata(shared.mcp.process_scopes, &shared.name)).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `GET /.well-known/capabilities`: the capabilities this caller may call — what `tools/list`
/// shows it (scopes, production hiding, tools switched off) — and no others.
async fn manifest(State(shared): State<Arc<Shared>>, Extension(caller): Extension<Caller>) -> Response {
    match shared.manifest_json(shared.view(&caller)) {
        Some(manifest) => ([(header::CONTENT_TYPE, "application/ld+json")], manifest).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
