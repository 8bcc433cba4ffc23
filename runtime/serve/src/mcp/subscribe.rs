//! Notifications over MCP. 2025-06-18 and 2025-11-25 sessions receive
//! `notifications/tools/list_changed` from `initialized` on, and `resources/subscribe` /
//! `resources/unsubscribe` add `notifications/resources/updated` on the session; 2026-07-28
//! clients open `subscriptions/listen` and receive what they asked for on that request. All
//! deliver from one bounded queue per subscriber (`state/notifier`): a reader that falls behind
//! loses the oldest updates, never the server's memory or a writer's time, and the next update
//! it does receive says how many it missed in `_meta.trails.lagged`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ErrorCode, ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification};
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::json;

use crate::state::{Delivery, Refused, Shared, Subscriber, SubscriberKind, Update};
use trails_core::auth::Caller;

/// When a session's client last sent a request.
pub(crate) struct Activity(Mutex<Instant>);

impl Default for Activity {
    fn default() -> Self {
        Activity(Mutex::new(Instant::now()))
    }
}

impl Activity {
    pub(crate) fn touch(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    pub(crate) fn idle(&self) -> Duration {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).elapsed()
    }
}

/// The notification for one delivery.
fn notification(delivery: Delivery) -> ServerNotification {
    match delivery.update {
        Update::ToolListChanged => ServerNotification::ToolListChangedNotification(Default::default()),
        Update::Resource(uri) => {
            let mut params = ResourceUpdatedNotificationParam::new(uri.to_string());
            if delivery.lagged > 0 {
                let mut meta = serde_json::Map::new();
                meta.insert("trails".into(), json!({ "lagged": delivery.lagged }));
                params.meta = Some(meta.into());
            }
            ServerNotification::ResourceUpdatedNotification(ResourceUpdatedNotification::new(params))
        }
    }
}

fn refusal(refused: Refused) -> ErrorData {
    let message = refused.to_string();
    match refused {
        Refused::TooManyResources { max } => {
            ErrorData::invalid_params(message, Some(json!({ "max_subscriptions": max })))
        }
        Refused::TooManySubscribers { max } => {
            ErrorData::new(ErrorCode::INTERNAL_ERROR, message, Some(json!({ "max_subscribers": max })))
        }
        Refused::AnonymousPoolFull { max } => {
            ErrorData::new(ErrorCode::INTERNAL_ERROR, message, Some(json!({ "max_anonymous_listens": max })))
        }
    }
}

/// A 2025-* session's notifications: opened when the session is initialized (tool-list
/// changes) or on its first `resources/subscribe`, delivered by one task, closed when the
/// session ends (its handler is dropped).
#[derive(Default)]
pub(crate) struct SessionSubscriptions {
    subscriber: Mutex<Option<Arc<Subscriber>>>,
}

impl Drop for SessionSubscriptions {
    fn drop(&mut self) {
        if let Some(subscriber) = self.subscriber.get_mut().unwrap_or_else(|p| p.into_inner()).take() {
            subscriber.close();
        }
    }
}

impl SessionSubscriptions {
    /// The session's subscriber, made (and its delivery started) on first use.
    pub(crate) fn open(
        &self,
        shared: &Shared,
        peer: &Peer<RoleServer>,
        idle_limit: Option<(Arc<Activity>, Duration)>,
    ) -> Result<Arc<Subscriber>, ErrorData> {
        let mut slot = self.subscriber.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(subscriber) = &*slot {
            return Ok(subscriber.clone());
        }
        let subscriber = shared.subscriptions.subscriber(SubscriberKind::Session).map_err(refusal)?;
        subscriber.watch_tool_list();
        tokio::spawn(deliver_to_session(subscriber.clone(), peer.clone(), idle_limit));
        Ok(slot.insert(subscriber).clone())
    }

    /// Watch `uri` for the session behind `peer`.
    pub(crate) fn subscribe(
        &self,
        shared: &Shared,
        peer: &Peer<RoleServer>,
        idle_limit: Option<(Arc<Activity>, Duration)>,
        caller: &Caller,
        uri: &str,
    ) -> Result<(), ErrorData> {
        let topic = shared.topic(uri, caller.scopes)?;
        self.open(shared, peer, idle_limit)?.watch(topic, uri).map_err(refusal)
    }

    /// Stop watching `uri` (a URI not watched is not an error: the outcome is the same).
    pub(crate) fn unsubscribe(&self, uri: &str) {
        if let Some(subscriber) = &*self.subscriber.lock().unwrap_or_else(|p| p.into_inner()) {
            subscriber.unwatch(uri);
        }
    }
}

/// Send a session its updates until it ends. Over HTTP, updates due while the client has sent
/// nothing for `idle_limit` are held back (an abandoned session's client would not read them;
/// the session guard closes it once that idle time is up): if the client comes back first, its
/// next resource update says how many it missed.
async fn deliver_to_session(
    subscriber: Arc<Subscriber>,
    peer: Peer<RoleServer>,
    idle_limit: Option<(Arc<Activity>, Duration)>,
) {
    let mut held_back = 0;
    while let Some(mut delivery) = subscriber.next().await {
        if let Some((activity, limit)) = &idle_limit {
            if activity.idle() > *limit {
                held_back += 1 + delivery.lagged;
                continue;
            }
        }
        if matches!(delivery.update, Update::Resource(_)) {
            delivery.lagged += std::mem::take(&mut held_back);
        }
        if let Err(error) = peer.send_notification(notification(delivery)).await {
            tracing::debug!(%error, "a session stopped taking notifications");
            subscriber.close();
        }
    }
}

/// Closes a listen request's subscriber however the request ends.
struct CloseOnDrop(Arc<Subscriber>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Serve one `subscriptions/listen` request until the client cancels it (or the connection
/// goes). Every acknowledged URI is checked for the caller first — a builder-only resource asked
/// for by another caller fails the request with the unknown-resource `-32602`, before any update
/// is sent.
///
/// `anonymous`: the request counts against the anonymous callers' pool (HTTP without a token).
pub(crate) async fn listen(
    shared: &Shared,
    caller: &Caller,
    anonymous: bool,
    context: SubscriptionContext,
) -> Result<(), ErrorData> {
    // Counted as sent, repeats included: what a request may make the server hold is bounded.
    let max = shared.mcp.max_subscriptions;
    if context.requested().resource_subscriptions.as_ref().is_some_and(|uris| uris.len() > max) {
        return Err(refusal(Refused::TooManyResources { max }));
    }
    let kind = SubscriberKind::Listen { anonymous };
    let subscriber = shared.subscriptions.subscriber(kind).map_err(refusal)?;
    let subscriber = CloseOnDrop(subscriber);
    let accepted = context.accepted();
    for uri in accepted.resource_subscriptions.iter().flatten() {
        let topic = shared.topic(uri, caller.scopes)?;
        subscriber.0.watch(topic, uri).map_err(refusal)?;
    }
    if accepted.tools_list_changed == Some(true) {
        subscriber.0.watch_tool_list();
    }
    let sink = context.sink().clone();
    loop {
        let delivery = tokio::select! {
            () = context.cancelled() => return Ok(()),
            delivery = subscriber.0.next() => delivery,
        };
        let Some(delivery) = delivery else { return Ok(()) };
        if let Err(error) = sink.send(notification(delivery)).await {
            tracing::debug!(%error, "a listener stopped taking updates");
            return Ok(());
        }
    }
}
