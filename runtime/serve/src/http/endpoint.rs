//! `/mcp`, one service: the checks in front of MCP are plain functions, run in order on the one
//! reading of the message — the JSON-RPC check, the OAuth step-up, the session guard — then the
//! hot path answers what it owns (and resumes its own answers) and rmcp the rest. (As a stack of middlewares each would clone
//! the service below it per request, and take the body apart again.)

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use rmcp::transport::streamable_http_server::StreamableHttpService;

use super::body::refusal;
use super::hot::HotPath;
use super::session_guard::{SessionGuard, Ticket, SESSION_HEADER};
use super::sessions::BoundedSessions;
use crate::mcp::TrailsServer;
use crate::state::Shared;
use trails_core::auth::Caller;

pub(crate) struct Endpoint {
    pub(crate) shared: Arc<Shared>,
    pub(crate) rmcp: StreamableHttpService<TrailsServer, BoundedSessions>,
    pub(crate) sessions: Arc<SessionGuard>,
    /// `[http] hot_path`.
    pub(crate) hot: Option<Arc<HotPath>>,
}

pub(crate) async fn serve(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let caller = parts
        .extensions
        .get::<Caller>()
        .cloned()
        .unwrap_or_else(|| Caller::anonymous(endpoint.shared.settings.process_scopes));
    // A POST carries one JSON-RPC message; GET (an event stream) and DELETE (end a session) none.
    let mut posted = None;
    let body = if parts.method == Method::POST {
        // Already read whole (and bounded) by `body::read_whole`: this only takes the bytes.
        let Ok(bytes) = body.collect().await.map(|collected| collected.to_bytes()) else {
            return refusal(StatusCode::BAD_REQUEST, -32700, "Parse error: the body could not be read");
        };
        let (rpc, message) = match super::jsonrpc::check(&bytes) {
            Ok(checked) => checked,
            Err(refused) => return *refused,
        };
        #[cfg(feature = "oauth")]
        if endpoint.shared.oauth.is_some() {
            if let Some(challenge) = super::step_up::step_up(&endpoint.shared, &caller, &rpc) {
                return challenge;
            }
        }
        posted = Some((rpc, message));
        Body::from(bytes)
    } else {
        body
    };
    let session = parts.headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok());
    let method = posted.as_ref().and_then(|(rpc, _)| rpc.method.as_deref());
    let entered = endpoint.sessions.enter(caller.name.as_deref(), &parts.method, method, session).await;
    let ticket = match entered {
        Ok(ticket) => ticket,
        Err(refused) => return refused,
    };
    let mut parts = parts;
    if let Ticket::Initialize(_, opening) = &ticket {
        // The session's rmcp handler shares its client's activity and agreed version with the guard.
        parts.extensions.insert(opening.link.clone());
    }
    let response = match (&endpoint.hot, posted) {
        (Some(hot), Some((rpc, message))) => match hot.plan(&parts.headers, &rpc, message, ticket.session()) {
            Some(planned) => Some(hot.answer(planned, caller).await),
            None => None,
        },
        (Some(hot), None) if parts.method == Method::GET => {
            ticket.session().and_then(|session| hot.resume(&parts.headers, session))
        }
        _ => None,
    };
    let response = match response {
        Some(response) => response,
        None => endpoint.to_rmcp(Request::from_parts(parts, body)).await,
    };
    ticket.answered(&response);
    response
}

impl Endpoint {
    /// rmcp's `handle`, called on the one service (its `call` would clone itself first, config,
    /// host and origin lists included).
    async fn to_rmcp(&self, request: Request) -> Response {
        let delete = request.method() == Method::DELETE;
        let mut response = self.rmcp.handle(request).await.into_response();
        // A session ended: rmcp says 202 Accepted, the official SDKs expect 200 or 204 (the
        // Python SDK logs a warning for every other status).
        if delete && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
            *response.body_mut() = Body::empty();
        }
        response
    }
}
