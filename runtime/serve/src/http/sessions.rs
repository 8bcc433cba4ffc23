//! MCP sessions over HTTP, bounded. The session guard expires idle sessions, but a client opening
//! sessions faster than they expire would still grow memory without limit; this wrapper around
//! rmcp's in-memory session manager refuses new sessions past a configured count. The count is checked and the session
//! created under one lock, so concurrent `initialize`s cannot both take the last slot.

use std::fmt;

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId, SessionManager};
use rmcp::transport::WorkerTransport;

pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// Held from the count to the insert: creation is rare next to requests, so serialising it
    /// costs nothing measurable.
    creating: tokio::sync::Mutex<()>,
    /// Refusals are logged at most once per interval.
    log: crate::throttle::Throttle,
}

impl BoundedSessions {
    /// At most `max` sessions. They do not expire here: the session guard ends idle ones, since
    /// rmcp's idle timer never sees the requests the hot path answers.
    pub(crate) fn new(max: usize) -> BoundedSessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = None;
        BoundedSessions {
            inner,
            max,
            creating: tokio::sync::Mutex::new(()),
            log: crate::throttle::Throttle::new(super::LOG_EVERY),
        }
    }
}

impl BoundedSessions {
    /// The ids of the sessions rmcp holds.
    pub(crate) async fn ids(&self) -> Vec<String> {
        self.inner.sessions.read().await.keys().map(|id| id.to_string()).collect()
    }

    /// Close every session (shutdown): their event streams end, so clients see the server go.
    pub(crate) async fn close_all(&self) {
        let ids: Vec<SessionId> = self.inner.sessions.read().await.keys().cloned().collect();
        for id in ids {
            let _ = self.inner.close_session(&id).await;
        }
    }
}

#[derive(Debug)]
pub(crate) enum SessionError {
    /// The server already holds its maximum number of sessions.
    Full(usize),
    Inner(LocalSessionManagerError),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Full(max) => {
                write!(f, "session limit reached ({max}); retry later or use stateless requests")
            }
            SessionError::Inner(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for SessionError {}

impl From<LocalSessionManagerError> for SessionError {
    fn from(error: LocalSessionManagerError) -> Self {
        SessionError::Inner(error)
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _creating = self.creating.lock().await;
        let open = self.inner.sessions.read().await.len();
        if open >= self.max {
            if let Some(held_back) = self.log.allow() {
                tracing::warn!(open, max = self.max, held_back, "refusing a new MCP session");
            }
            return Err(SessionError::Full(self.max));
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// Many `initialize`s racing for the last slot: exactly one gets it, every round.
    #[test]
    fn the_cap_is_checked_and_taken_atomically() {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(async {
            for round in 0..300 {
                let sessions = Arc::new(BoundedSessions::new(1));
                let start = Arc::new(tokio::sync::Barrier::new(8));
                let racers: Vec<_> = (0..8)
                    .map(|_| {
                        let (sessions, start) = (sessions.clone(), start.clone());
                        tokio::spawn(async move {
                            start.wait().await;
                            sessions.create_session().await.is_ok()
                        })
                    })
                    .collect();
                let mut opened = 0;
                for racer in racers {
                    opened += usize::from(racer.await.unwrap());
                }
                assert_eq!(opened, 1, "round {round}: {opened} sessions took the one slot");
            }
        });
    }
}
