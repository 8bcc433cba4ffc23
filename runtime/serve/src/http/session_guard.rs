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

use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};

use super::body::refusal;
use super::sessions::BoundedSessions;

pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

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
pub(crate) struct Reservation {
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

/// What the guard must do once the request is answered.
pub(crate) enum Ticket {
    /// Nothing.
    Pass,
    /// An `initialize`: swap the reserved slot for the session it opened (or free it).
    Initialize(Reservation, Option<String>),
    /// A `DELETE` of this session: forget it once rmcp ended it.
    Delete(Arc<SessionGuard>, String),
}

impl Ticket {
    /// The request was answered with `response`.
    pub(crate) fn answered(self, response: &Response) {
        match self {
            Ticket::Pass => {}
            Ticket::Initialize(reservation, owner) => {
                let opened_id = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok());
                let opened = Opened { owner, at: Instant::now(), initialized: false };
                reservation.commit(opened_id.map(|id| (id.to_owned(), opened)));
            }
            Ticket::Delete(guard, session) => {
                if response.status().is_success() {
                    guard.opened().remove(&session);
                }
            }
        }
    }
}

impl SessionGuard {
    /// Admit a request of `owner` (the caller's token name) with JSON-RPC `method` (`None`: not a
    /// POST, or a response) and the session header: what to do once it is answered, or the
    /// refusal. A [`Ticket::Initialize`] dropped unanswered frees its slot.
    pub(crate) async fn enter(
        self: &Arc<Self>,
        owner: Option<&str>,
        http_method: &Method,
        method: Option<&str>,
        session: Option<&str>,
    ) -> Result<Ticket, Response> {
        let Some(session) = session else {
            if method != Some("initialize") {
                return Ok(Ticket::Pass);
            }
            self.sweep().await;
            // Counted and reserved under one lock: concurrent `initialize`s cannot overshoot a pool.
            let reserved = format!("pending-{}", uuid::Uuid::new_v4());
            {
                let mut opened = self.opened();
                let anonymous = opened.values().filter(|o| o.owner.is_none()).count();
                if opened.len() >= self.max {
                    return Err(full(false, self.max));
                }
                if owner.is_none() && anonymous >= self.max_anonymous {
                    return Err(full(true, self.max_anonymous));
                }
                let owner = owner.map(str::to_owned);
                opened.insert(reserved.clone(), Opened { owner, at: Instant::now(), initialized: true });
            }
            // Released however the request ends (a client hanging up mid-`initialize` included).
            let reservation = Reservation { guard: self.clone(), id: Some(reserved) };
            return Ok(Ticket::Initialize(reservation, owner.map(str::to_owned)));
        };
        let initialized = match self.opened().get(session) {
            Some(opened) if opened.owner.as_deref() == owner => opened.initialized,
            // Another caller's session is, to this caller, no session at all.
            Some(_) => return Err(unknown_session()),
            None => true,
        };
        // rmcp's word on whether it still lives (it expires idle sessions on its own).
        if !self.sessions.has_session(&session.to_owned().into()).await.unwrap_or(false) {
            self.opened().remove(session);
            return Err(unknown_session());
        }
        if http_method == Method::DELETE {
            return Ok(Ticket::Delete(self.clone(), session.to_owned()));
        }
        if !initialized && method == Some("notifications/initialized") {
            if let Some(opened) = self.opened().get_mut(session) {
                opened.initialized = true;
            }
        }
        Ok(Ticket::Pass)
    }
}
