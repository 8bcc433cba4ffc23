//! `/mcp`, one service: the checks in front of MCP are plain functions, run in order — Host and
//! Origin, the bearer token, the body's size and time, then on the one reading of the message
//! the JSON-RPC check, the OAuth step-up and the session guard — then the hot path answers what
//! it owns (and resumes its own answers) and rmcp the rest. (As a stack of middlewares each would
//! clone the service below it per request, and take the body apart again. The routes beside
//! `/mcp` run the same first three checks as middlewares.)

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::StreamableHttpService;

use super::body::{self, BodyLimits};
use super::hot::HotPath;
use super::origin::HostPolicy;
use super::session_guard::{SessionGuard, Ticket, SESSION_HEADER};
use super::sessions::BoundedSessions;
use super::{bearer, MCP_PATH};
use crate::mcp::TrailsServer;
use crate::state::Shared;
use crate::throttle::Throttle;

pub(crate) struct Endpoint {
    pub(crate) shared: Arc<Shared>,
    pub(crate) hosts: Arc<HostPolicy>,
    /// Refused tokens' warnings, shared with the other routes'.
    pub(crate) auth_log: Arc<Throttle>,
    pub(crate) body: BodyLimits,
    pub(crate) rmcp: StreamableHttpService<TrailsServer, BoundedSessions>,
    pub(crate) sessions: Arc<SessionGuard>,
    /// `[http] hot_path`.
    pub(crate) hot: Option<Arc<HotPath>>,
}

pub(crate) async fn serve(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    if let Err(refused) = endpoint.hosts.check(&parts.headers, &parts.uri) {
        return *refused;
    }
    let caller = match bearer::caller(&endpoint.shared, &endpoint.auth_log, &parts.headers, MCP_PATH).await {
        Ok(caller) => caller,
        Err(refused) => return *refused,
    };
    let bytes = match body::read(endpoint.body, body).await {
        Ok(bytes) => bytes,
        Err(refused) => return *refused,
    };
    // A POST carries one JSON-RPC message; GET (an event stream) and DELETE (end a session) none.
    let mut posted = None;
    if parts.method == Method::POST {
        let (rpc, message) = match super::jsonrpc::check(&bytes) {
            Ok(checked) => checked,
            Err(refused) => return *refused,
        };
        if endpoint.shared.authority.is_some() {
            if let Some(challenge) = super::step_up::step_up(&endpoint.shared, &caller, &rpc) {
                return challenge;
            }
        }
        posted = Some((rpc, message));
    }
    let session = parts.headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok());
    let method = posted.as_ref().and_then(|(rpc, _)| rpc.method.as_deref());
    let id = posted.as_ref().map_or(&serde_json::Value::Null, |(rpc, _)| &rpc.id);
    let entered = endpoint.sessions.enter(caller.name.as_deref(), &parts.method, method, id, session).await;
    let ticket = match entered {
        Ok(ticket) => ticket,
        Err(refused) => return refused,
    };
    if let Ticket::Initialize(_, opening) = &ticket {
        // The session's rmcp handler shares its client's activity and agreed version with the guard.
        parts.extensions.insert(opening.link.clone());
    }
    // The hot path's answer, or the caller back for rmcp.
    let answered = match (&endpoint.hot, posted) {
        (Some(hot), Some((rpc, message))) if rpc.method.as_deref() == Some("notifications/cancelled") => {
            hot.cancelled(&message, ticket.session());
            Err(caller)
        }
        (Some(hot), Some((rpc, message))) => match hot.plan(&parts.headers, &rpc, message, ticket.session()) {
            Some(planned) => Ok(hot.answer(planned, caller).await),
            None => Err(caller),
        },
        (Some(hot), None) if parts.method == Method::GET => {
            ticket.session().and_then(|session| hot.resume(&parts.headers, session)).ok_or(caller)
        }
        _ => Err(caller),
    };
    let response = match answered {
        Ok(response) => response,
        Err(caller) => {
            // rmcp's handler reads the caller from the request's extensions.
            parts.extensions.insert(caller);
            endpoint.to_rmcp(Request::from_parts(parts, Body::from(bytes))).await
        }
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
