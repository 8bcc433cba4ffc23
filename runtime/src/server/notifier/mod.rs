//! Who hears about changes: the sessions that finished `initialize` (told when the tool list
//! changes), and the resource subscribers (`subscriptions`), each with its own bounded queue.

mod queue;
mod subscriptions;

use std::sync::Mutex;

use rmcp::{Peer, RoleServer};

pub(crate) use queue::{Delivery, Update};
pub(crate) use subscriptions::{Refused, Subscriber, Subscriptions, Topic};

/// Most sessions kept for `list_changed` notifications; the oldest are forgotten first.
const MAX_NOTIFIED_SESSIONS: usize = 1024;

pub(crate) struct Notifier {
    sessions: Mutex<Vec<Peer<RoleServer>>>,
    /// Resource subscriptions (shared with the knowledge graph, which reports its changes).
    pub(crate) subscriptions: std::sync::Arc<Subscriptions>,
}

impl Notifier {
    pub(crate) fn new(subscriptions: Subscriptions) -> Notifier {
        Notifier { sessions: Mutex::default(), subscriptions: std::sync::Arc::new(subscriptions) }
    }

    pub(crate) fn remember(&self, peer: Peer<RoleServer>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.retain(|p| !p.is_transport_closed());
        if sessions.len() >= MAX_NOTIFIED_SESSIONS {
            sessions.remove(0);
        }
        sessions.push(peer);
    }

    /// `notifications/tools/list_changed` to every open session and every listener that asked
    /// for it. The lock is not held across the sends, so a slow session cannot block `remember`.
    pub(crate) async fn tool_list_changed(&self) {
        self.subscriptions.tool_list_changed();
        let peers: Vec<Peer<RoleServer>> = self.sessions.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for peer in peers.iter().filter(|p| !p.is_transport_closed()) {
            if let Err(error) = peer.notify_tool_list_changed().await {
                tracing::debug!(%error, "could not notify a session of list_changed");
            }
        }
    }
}
