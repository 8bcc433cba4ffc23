//! Who may open, use and end a 2025-* MCP session. rmcp's sessions belong to whoever knows the
//! id and any client can fill every slot; in front of it this guard
//! - binds a session to the caller that opened it: another caller (another token, or anonymous)
//!   gets `404` as for a session that does not exist, also on `DELETE`;
//! - answers `404` with a JSON-RPC error for an unknown session (rmcp: plain text, and `DELETE`
//!   of one succeeded);
//! - refuses `initialize` past the bound with `503`, `Retry-After` and a JSON-RPC error:
//!   anonymous callers share at most `[http] max_anonymous_sessions`, so the rest of
//!   `max_sessions` stays for callers with a token;
//! - closes sessions that do not send `notifications/initialized` within
//!   `[http] session_init_secs`, so half-opened sessions cannot hold slots.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};

use super::body::refusal;
use super::sessions::BoundedSessions;
use crate::wire::jsonrpc::RpcMethod;
use trails_core::auth::Caller;

const SESSION_HEADER: &str = "mcp-session-id";

/// A session as the guard knows it.
#[derive(Debug)]
struct Opened {
    /// The token name that opened it (`None`: anonymous).
    owner: Option<String>,
    at: Instant,
    initialized: bool,
}

pub(crate) struct SessionGuard {
    sessions: Arc<BoundedSessions>,
    opened: Mutex<HashMap<String, Opened>>,
    max: usize,
    max_anonymous: usize,
    init_within: Duration,
}

impl SessionGuard {
    pub(crate) fn new(
        sessions: Arc<BoundedSessions>,
        max: usize,
        max_anonymous: usize,
        init_within: Duration,
    ) -> SessionGuard {
        SessionGuard { sessions, opened: Mutex::default(), max, max_anonymous, init_within }
    }

    fn opened(&self) -> std::sync::MutexGuard<'_, HashMap<String, Opened>> {
        self.opened.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forget sessions rmcp no longer has (expired, deleted) and close those that were never
    /// initialized in time.
    pub(crate) async fn sweep(&self) {
        let now = Instant::now();
        let known: Vec<(String, bool)> = self
            .opened()
            .iter()
            .filter(|(id, _)| !id.starts_with("pending-"))
            .map(|(id, o)| (id.clone(), !o.initialized && now.duration_since(o.at) > self.init_within))
            .collect();
        for (id, stale) in known {
            let session: SessionId = id.clone().into();
            // A session whose worker no longer reads its channel must not hold up the sweep.
            if stale {
                let closing = self.sessions.close_session(&session);
                let _ = tokio::time::timeout(std::time::Duration::from_secs(1), closing).await;
            }
            if stale || !self.sessions.has_session(&session).await.unwrap_or(false) {
                self.opened().remove(&id);
            }
        }
    }
}

/// A slot held for an `initialize` in flight.
struct Reservation {
    guard: Arc<SessionGuard>,
    /// `None` once committed.
    id: Option<String>,
}

impl Reservation {
    /// Swap the reservation for the session it opened (if it did), under one lock: no
    /// concurrent count sees the slot free in between.
    fn commit(mut self, session: Option<(String, Opened)>) {
        let mut opened = self.guard.opened();
        if let Some(reserved) = self.id.take() {
            opened.remove(&reserved);
        }
        if let Some((id, session)) = session {
            opened.insert(id, session);
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(reserved) = self.id.take() {
            self.guard.opened().remove(&reserved);
        }
    }
}

fn unknown_session() -> Response {
    refusal(StatusCode::NOT_FOUND, -32600, "Session not found: start a new one with initialize")
}

fn full(anonymous: bool, max: usize) -> Response {
    let message = if anonymous {
        format!("no session slot for anonymous callers ({max} in use); retry later, or present a token")
    } else {
        format!("session limit reached ({max}); retry later or use stateless requests")
    };
    let mut response = refusal(StatusCode::SERVICE_UNAVAILABLE, -32000, &message);
    response.headers_mut().insert("retry-after", HeaderValue::from_static("5"));
    response
}

pub(crate) async fn guard(State(guard): State<Arc<SessionGuard>>, request: Request, next: Next) -> Response {
    let owner = request.extensions().get::<Caller>().and_then(|caller| caller.name.clone());
    // Left by `jsonrpc::check` on every well-formed POST.
    let method = request.extensions().get::<RpcMethod>().and_then(|m| m.method.clone());
    let session = request.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let Some(session) = session else {
        if method.as_deref() != Some("initialize") {
            return next.run(request).await;
        }
        guard.sweep().await;
        // Counted and reserved under one lock: concurrent `initialize`s cannot overshoot a pool.
        let reserved = format!("pending-{}", uuid::Uuid::new_v4());
        {
            let mut opened = guard.opened();
            let anonymous = opened.values().filter(|o| o.owner.is_none()).count();
            if opened.len() >= guard.max {
                return full(false, guard.max);
            }
            if owner.is_none() && anonymous >= guard.max_anonymous {
                return full(true, guard.max_anonymous);
            }
            opened.insert(reserved.clone(), Opened { owner: owner.clone(), at: Instant::now(), initialized: true });
        }
        // Released however the request ends (a client hanging up mid-`initialize` included).
        let reservation = Reservation { guard: guard.clone(), id: Some(reserved) };
        let response = next.run(request).await;
        let opened_id = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok());
        reservation
            .commit(opened_id.map(|id| (id.to_owned(), Opened { owner, at: Instant::now(), initialized: false })));
        return response;
    };
    let initialized = match guard.opened().get(&session) {
        Some(opened) if opened.owner == owner => opened.initialized,
        // Another caller's session is, to this caller, no session at all.
        Some(_) => return unknown_session(),
        None => true,
    };
    // rmcp's word on whether it still lives (it expires idle sessions on its own).
    if !guard.sessions.has_session(&session.clone().into()).await.unwrap_or(false) {
        guard.opened().remove(&session);
        return unknown_session();
    }
    if request.method() == Method::DELETE {
        let response = next.run(request).await;
        if response.status().is_success() {
            guard.opened().remove(&session);
        }
        return response;
    }
    if !initialized && method.as_deref() == Some("notifications/initialized") {
        if let Some(opened) = guard.opened().get_mut(&session) {
            opened.initialized = true;
        }
    }
    next.run(request).await
}
