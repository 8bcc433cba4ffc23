//! Who may open, use and end a 2025-* MCP session, and when it ends. rmcp's sessions belong to
//! whoever knows the id and any client can fill every slot; in front of it this guard
//! - binds a session to the caller that opened it: another caller (another token, or anonymous)
//!   gets `404` as for a session that does not exist, also on `DELETE`;
//! - answers `404` with a JSON-RPC error for an unknown session (rmcp: plain text, and `DELETE`
//!   of one succeeded);
//! - refuses `initialize` past the bound with `503`, `Retry-After` and a JSON-RPC error:
//!   anonymous callers share at most `[http] max_anonymous_sessions`, so the rest of
//!   `max_sessions` stays for callers with a token;
//! - closes sessions that do not send `notifications/initialized` within
//!   `[http] session_init_secs`, so half-opened sessions cannot hold slots;
//! - refuses a second `initialize` inside a session (`400`, `-32600`): the session's version
//!   was agreed once, and rmcp would let a second handshake change it under the requests the hot
//!   path answers;
//! - closes sessions whose client sent nothing for `[http] session_idle_secs`. (rmcp's own idle
//!   timeout counts only what reaches its session worker, and the hot path answers requests
//!   without it: the guard sees every request.)

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};
use serde_json::Value;

use super::body::refusal_of;
use super::hot::{AllAnswers, Answers, KEPT_ALL_BYTES};
use super::sessions::BoundedSessions;
use crate::mcp::SessionLink;

pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// A session as the guard knows it.
struct Opened {
    /// The token name that opened it (`None`: anonymous).
    owner: Option<String>,
    at: Instant,
    initialized: bool,
    /// `None` for a slot reserved by an `initialize` in flight.
    live: Option<Arc<Live>>,
}

/// What the hot path needs of an open session.
pub(crate) struct Live {
    pub(crate) id: String,
    /// Its client's activity and agreed protocol version, shared with its rmcp handler.
    pub(crate) link: Arc<SessionLink>,
    /// The hot path's answers a client may still resume.
    pub(crate) answers: Answers,
    /// The calls the hot path is answering, by request id (JSON text): what the session's
    /// `notifications/cancelled` cancels (rmcp knows only its own requests).
    pub(crate) in_flight: Mutex<HashMap<String, tokio_util::sync::CancellationToken>>,
}

pub(crate) struct SessionGuard {
    sessions: Arc<BoundedSessions>,
    opened: Mutex<HashMap<String, Opened>>,
    /// Sessions rmcp has that the guard never recorded (an `initialize` whose client hung up
    /// before its answer), with when a sweep first saw them.
    strays: Mutex<HashMap<String, Instant>>,
    max: usize,
    max_anonymous: usize,
    init_within: Duration,
    idle: Duration,
    /// When a request last started a sweep (milliseconds from `born`).
    swept: AtomicU64,
    /// A sweep is running: another one (the timer's, a request's, an `initialize`'s) skips.
    sweeping: AtomicBool,
    born: Instant,
    /// The bytes of the answers every session keeps for resumption, bounded together.
    answers: Arc<AllAnswers>,
}

/// How a session is bounded in number and time (`[http]`).
pub(crate) struct Bounds {
    pub(crate) max: usize,
    pub(crate) max_anonymous: usize,
    pub(crate) init_within: Duration,
    pub(crate) idle: Duration,
}

impl SessionGuard {
    pub(crate) fn new(sessions: Arc<BoundedSessions>, bounds: Bounds) -> SessionGuard {
        let Bounds { max, max_anonymous, init_within, idle } = bounds;
        SessionGuard {
            sessions,
            opened: Mutex::default(),
            strays: Mutex::default(),
            max,
            max_anonymous,
            init_within,
            idle,
            swept: AtomicU64::new(0),
            sweeping: AtomicBool::new(false),
            born: Instant::now(),
            answers: AllAnswers::new(KEPT_ALL_BYTES),
        }
    }

    /// How often sessions are swept: half-opened ones are closed at most 1.5 × `init_within`
    /// after they opened, idle ones as late after their idle time.
    pub(crate) fn sweep_every(&self) -> Duration {
        (self.init_within / 2).max(Duration::from_millis(100))
    }

    /// Start a sweep if none started for [`Self::sweep_every`]: a router without a timer (built
    /// without `streams`) still ends idle sessions while it is used.
    fn sweep_now_and_then(self: &Arc<Self>) {
        let now = self.born.elapsed().as_millis() as u64;
        let last = self.swept.load(Ordering::Relaxed);
        let due = now.saturating_sub(last) >= self.sweep_every().as_millis() as u64;
        if due && self.swept.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
            let guard = self.clone();
            tokio::spawn(async move { guard.sweep().await });
        }
    }

    /// Whether a session must be closed: never initialized in time, or its client idle too long.
    fn stale(&self, opened: &Opened, now: Instant) -> bool {
        let unfinished = !opened.initialized && now.duration_since(opened.at) > self.init_within;
        unfinished || opened.live.as_ref().is_some_and(|live| live.link.activity.idle() > self.idle)
    }

    fn opened(&self) -> std::sync::MutexGuard<'_, HashMap<String, Opened>> {
        self.opened.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forget sessions rmcp no longer has (deleted, failed), and close those that were never
    /// initialized in time, whose client went idle, or that nobody claimed.
    pub(crate) async fn sweep(&self) {
        struct Sweeping<'a>(&'a AtomicBool);
        impl Drop for Sweeping<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        if self.sweeping.swap(true, Ordering::Acquire) {
            return;
        }
        let _sweeping = Sweeping(&self.sweeping);
        let now = Instant::now();
        let known: Vec<String> = {
            let opened = self.opened();
            for live in opened.values().filter_map(|o| o.live.as_ref()) {
                live.answers.forget_old();
            }
            opened.keys().filter(|id| !id.starts_with("pending-")).cloned().collect()
        };
        let strays: Vec<String> = {
            let in_rmcp: HashSet<String> = self.sessions.ids().await.into_iter().collect();
            let opened = self.opened();
            let mut strays = self.strays.lock().unwrap_or_else(|p| p.into_inner());
            strays.retain(|id, _| in_rmcp.contains(id) && !opened.contains_key(id));
            for id in in_rmcp.into_iter().filter(|id| !opened.contains_key(id)) {
                strays.entry(id).or_insert(now);
            }
            strays
                .iter()
                .filter(|(_, seen)| now.duration_since(**seen) > self.init_within)
                .map(|(id, _)| id.clone())
                .collect()
        };
        for id in strays {
            let session: SessionId = id.clone().into();
            let _ = tokio::time::timeout(Duration::from_secs(1), self.sessions.close_session(&session)).await;
            self.strays.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
        }
        for id in known {
            let session: SessionId = id.clone().into();
            // Judged as late as can be: a request that came meanwhile keeps it open.
            let stale = self.opened().get(&id).is_some_and(|opened| self.stale(opened, Instant::now()));
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

fn unknown_session(id: &Value) -> Response {
    refusal_of(id, StatusCode::NOT_FOUND, -32600, "Session not found: start a new one with initialize")
}

fn full(id: &Value, anonymous: bool, max: usize) -> Response {
    let message = if anonymous {
        format!("no session slot for anonymous callers ({max} in use); retry later, or present a token")
    } else {
        format!("session limit reached ({max}); retry later or use stateless requests")
    };
    let mut response = refusal_of(id, StatusCode::SERVICE_UNAVAILABLE, -32000, &message);
    response.headers_mut().insert("retry-after", HeaderValue::from_static("5"));
    response
}

/// What the guard must do once the request is answered.
pub(crate) enum Ticket {
    /// Nothing.
    Pass,
    /// Nothing; the request belongs to this open, initialized session of its caller.
    InSession(Arc<Live>),
    /// An `initialize`: swap the reserved slot for the session it opens (or free it).
    Initialize(Reservation, Opening),
    /// A `DELETE` of this session: forget it once rmcp ended it.
    Delete(Arc<SessionGuard>, String),
}

/// What an `initialize` in flight will record of its session.
pub(crate) struct Opening {
    owner: Option<String>,
    /// Every session's resumable answers, counted together.
    answers: Arc<AllAnswers>,
    /// Handed to the session's rmcp handler in the request's extensions.
    pub(crate) link: Arc<SessionLink>,
}

impl Ticket {
    /// The request's open session, if it is in one.
    pub(crate) fn session(&self) -> Option<&Arc<Live>> {
        match self {
            Ticket::InSession(live) => Some(live),
            _ => None,
        }
    }

    /// The request was answered with `response`.
    pub(crate) fn answered(self, response: &Response) {
        match self {
            Ticket::Pass | Ticket::InSession(_) => {}
            Ticket::Initialize(reservation, Opening { owner, answers, link }) => {
                let opened_id = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok());
                reservation.commit(opened_id.map(|id| {
                    let live = Arc::new(Live {
                        id: id.to_owned(),
                        link,
                        answers: Answers::new(answers),
                        in_flight: Mutex::default(),
                    });
                    (id.to_owned(), Opened { owner, at: Instant::now(), initialized: false, live: Some(live) })
                }));
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
    /// POST, or a response) and `id`, and the session header: what to do once it is answered, or
    /// the refusal (under `id`). A [`Ticket::Initialize`] dropped unanswered frees its slot.
    pub(crate) async fn enter(
        self: &Arc<Self>,
        owner: Option<&str>,
        http_method: &Method,
        method: Option<&str>,
        id: &Value,
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
                    return Err(full(id, false, self.max));
                }
                if owner.is_none() && anonymous >= self.max_anonymous {
                    return Err(full(id, true, self.max_anonymous));
                }
                let owner = owner.map(str::to_owned);
                opened.insert(reserved.clone(), Opened { owner, at: Instant::now(), initialized: true, live: None });
            }
            // Released however the request ends (a client hanging up mid-`initialize` included).
            let reservation = Reservation { guard: self.clone(), id: Some(reserved) };
            let opening =
                Opening { owner: owner.map(str::to_owned), answers: self.answers.clone(), link: Arc::default() };
            return Ok(Ticket::Initialize(reservation, opening));
        };
        self.sweep_now_and_then();
        let (initialized, live) = match self.opened().get(session) {
            Some(opened) if opened.owner.as_deref() == owner => {
                if let Some(live) = &opened.live {
                    live.link.activity.touch();
                }
                (opened.initialized, opened.live.clone())
            }
            // Another caller's session is, to this caller, no session at all.
            Some(_) => return Err(unknown_session(id)),
            None => (true, None),
        };
        // rmcp's word on whether it still lives (a session whose worker failed is gone there).
        if !self.sessions.has_session(&session.to_owned().into()).await.unwrap_or(false) {
            self.opened().remove(session);
            return Err(unknown_session(id));
        }
        if method == Some("initialize") {
            return Err(refusal_of(
                id,
                StatusCode::BAD_REQUEST,
                -32600,
                "Invalid Request: this session is already initialized; to start over, send initialize without Mcp-Session-Id",
            ));
        }
        if http_method == Method::DELETE {
            return Ok(Ticket::Delete(self.clone(), session.to_owned()));
        }
        if !initialized && method == Some("notifications/initialized") {
            if let Some(opened) = self.opened().get_mut(session) {
                opened.initialized = true;
            }
            return Ok(Ticket::Pass);
        }
        Ok(match live {
            Some(live) if initialized => Ticket::InSession(live),
            _ => Ticket::Pass,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session rmcp opened for an `initialize` whose client left before the answer (so the
    /// guard never recorded it) is closed once nobody claimed it for `session_init_secs`.
    #[tokio::test]
    async fn a_session_nobody_claimed_is_closed_after_the_init_window() {
        let sessions = Arc::new(BoundedSessions::new(4));
        let bounds =
            Bounds { max: 4, max_anonymous: 4, init_within: Duration::from_millis(50), idle: Duration::from_secs(300) };
        let guard = Arc::new(SessionGuard::new(sessions.clone(), bounds));
        let (id, transport) = sessions.create_session().await.unwrap();
        drop(transport);
        guard.sweep().await;
        assert!(sessions.has_session(&id).await.unwrap(), "closed before its window");
        tokio::time::sleep(Duration::from_millis(100)).await;
        guard.sweep().await;
        assert!(!sessions.has_session(&id).await.unwrap(), "left open");
    }
}
