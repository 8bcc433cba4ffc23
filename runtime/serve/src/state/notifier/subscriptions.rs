//! Resource subscriptions: who watches what, and routing each knowledge-graph change to the
//! subscribers that watch it (`runtime/guide/03-knowledge-graph.md`).
//!
//! A [`Subscriber`] is one legacy session (`resources/subscribe`) or one 2026-07-28
//! `subscriptions/listen` request. Each watches at most `max_per_subscriber` URIs, and there are
//! at most `max_subscribers` of each kind; each has its own bounded [`UpdateQueue`]. A change is
//! routed by [`Topic`] — what a URI means, resolved once when it is subscribed — so routing costs
//! a few hash lookups per subscriber, and a writer never waits for any of them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::queue::{Delivery, Update, UpdateQueue};
use crate::resources::Topic;
use trails_kg::changes::{Change, Observer};

/// Why a subscription was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("this session already watches {max} resources (the per-session limit, `[mcp] max_subscriptions`); unsubscribe from one first")]
    TooManyResources { max: usize },
    #[error("the server already serves {max} subscribers; try again later")]
    TooManySubscribers { max: usize },
    #[error("anonymous callers already hold {max} `subscriptions/listen` requests together (`[http] max_anonymous_sessions`); present a token, or try again later")]
    AnonymousPoolFull { max: usize },
}

/// What a subscriber is: each kind has its own limit, so listen requests cannot crowd sessions
/// out of their tool-list notifications (nor the reverse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubscriberKind {
    /// A 2025-* session (stdio, or HTTP with a session).
    Session,
    /// One 2026-07-28 `subscriptions/listen` request, and whether its caller is anonymous
    /// (anonymous callers share a smaller pool, as they do for sessions: one client without a
    /// token cannot take every place from those with one).
    Listen {
        /// The caller presented no token.
        anonymous: bool,
    },
}

/// One session's (or one listen request's) subscriptions and pending notifications.
pub(crate) struct Subscriber {
    kind: SubscriberKind,
    /// Topic → the URIs that watch it, as the subscriber wrote them (its notifications must
    /// name the URI it subscribed to).
    watching: Mutex<HashMap<Topic, Vec<Arc<str>>>>,
    tool_list: AtomicBool,
    queue: UpdateQueue,
    max: usize,
}

impl Subscriber {
    fn watching(&self) -> std::sync::MutexGuard<'_, HashMap<Topic, Vec<Arc<str>>>> {
        self.watching.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Watch `uri`, which means `topic`. Subscribing twice to one URI is one subscription.
    pub(crate) fn watch(&self, topic: Topic, uri: &str) -> Result<(), Refused> {
        let mut watching = self.watching();
        if watching.get(&topic).is_some_and(|uris| uris.iter().any(|u| &**u == uri)) {
            return Ok(());
        }
        // Checked before the entry exists: a refusal leaves nothing behind.
        if watching.values().map(Vec::len).sum::<usize>() >= self.max {
            return Err(Refused::TooManyResources { max: self.max });
        }
        watching.entry(topic).or_default().push(uri.into());
        Ok(())
    }

    /// Stop watching `uri`; whether it was watched.
    pub(crate) fn unwatch(&self, uri: &str) -> bool {
        let mut watching = self.watching();
        let mut found = false;
        watching.retain(|_, uris| {
            let before = uris.len();
            uris.retain(|u| &**u != uri);
            found |= uris.len() != before;
            !uris.is_empty()
        });
        found
    }

    /// Also send `notifications/tools/list_changed` (2026-07-28 listeners).
    pub(crate) fn watch_tool_list(&self) {
        self.tool_list.store(true, Ordering::Relaxed);
    }

    /// The next notification to send; `None` once closed.
    pub(crate) async fn next(&self) -> Option<Delivery> {
        self.queue.next().await
    }

    /// The session or listen request ended: nothing more is queued or delivered.
    pub(crate) fn close(&self) {
        self.watching().clear();
        self.queue.close();
    }

    /// Queue the URIs watching `topics`; how many older updates were dropped for them.
    fn fire(&self, topics: &[Topic]) -> u64 {
        let uris: Vec<Arc<str>> = {
            let watching = self.watching();
            topics.iter().filter_map(|t| watching.get(t)).flatten().cloned().collect()
        };
        uris.into_iter().map(|uri| u64::from(self.queue.push(Update::Resource(uri)))).sum()
    }

    /// Changes were missed: queue every URI watched, marked lagged, so the client re-reads them.
    fn missed(&self) {
        self.queue.mark_lagged();
        let uris: Vec<Arc<str>> = self.watching().values().flatten().cloned().collect();
        for uri in uris {
            self.queue.push(Update::Resource(uri));
        }
    }

    fn count(&self) -> usize {
        self.watching().values().map(Vec::len).sum()
    }
}

/// Counts for `trails://stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub(crate) struct SubscriptionStats {
    /// Sessions and listen requests with a subscription.
    pub(crate) subscribers: usize,
    /// URIs watched, over all subscribers.
    pub(crate) resources: usize,
    /// Notifications waiting to be sent.
    pub(crate) queued: usize,
    /// Notifications dropped from full queues since start.
    pub(crate) lagged: u64,
}

/// Every subscriber of one server.
pub(crate) struct Subscriptions {
    subscribers: Mutex<Vec<Weak<Subscriber>>>,
    lagged: AtomicU64,
    /// Most subscribers of each kind.
    max_subscribers: usize,
    /// Most listen requests of anonymous callers together.
    max_anonymous_listens: usize,
    max_per_subscriber: usize,
    queue_capacity: usize,
}

impl Subscriptions {
    /// At most `max_subscribers` sessions and as many listen requests (at most
    /// `max_anonymous_listens` of them anonymous), each watching at most `max_per_subscriber` URIs
    /// with a queue of `queue_capacity`.
    pub(crate) fn new(
        max_subscribers: usize,
        max_anonymous_listens: usize,
        max_per_subscriber: usize,
        queue_capacity: usize,
    ) -> Subscriptions {
        Subscriptions {
            subscribers: Mutex::default(),
            lagged: AtomicU64::new(0),
            max_subscribers,
            max_anonymous_listens,
            max_per_subscriber,
            queue_capacity,
        }
    }

    fn live(&self) -> Vec<Arc<Subscriber>> {
        let mut subscribers = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subscribers.retain(|s| s.strong_count() > 0);
        subscribers.iter().filter_map(Weak::upgrade).collect()
    }

    /// A new subscriber, registered until its last handle is dropped.
    pub(crate) fn subscriber(&self, kind: SubscriberKind) -> Result<Arc<Subscriber>, Refused> {
        let mut subscribers = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subscribers.retain(|s| s.strong_count() > 0);
        let live: Vec<SubscriberKind> = subscribers.iter().filter_map(Weak::upgrade).map(|s| s.kind).collect();
        let same = |a: &SubscriberKind| std::mem::discriminant(a) == std::mem::discriminant(&kind);
        if live.iter().filter(|k| same(k)).count() >= self.max_subscribers {
            return Err(Refused::TooManySubscribers { max: self.max_subscribers });
        }
        let anonymous = SubscriberKind::Listen { anonymous: true };
        if kind == anonymous && live.iter().filter(|k| **k == anonymous).count() >= self.max_anonymous_listens {
            return Err(Refused::AnonymousPoolFull { max: self.max_anonymous_listens });
        }
        let subscriber = Arc::new(Subscriber {
            kind,
            watching: Mutex::default(),
            tool_list: AtomicBool::new(false),
            queue: UpdateQueue::new(self.queue_capacity),
            max: self.max_per_subscriber,
        });
        subscribers.push(Arc::downgrade(&subscriber));
        Ok(subscriber)
    }

    fn fire(&self, topics: &[Topic]) {
        let lagged: u64 = self.live().iter().map(|s| s.fire(topics)).sum();
        if lagged > 0 {
            self.lagged.fetch_add(lagged, Ordering::Relaxed);
        }
    }

    /// One of the app's own resources changed.
    pub(crate) fn fire_own(&self, uri: &str) {
        self.fire(&[Topic::Own(uri.to_owned())]);
    }

    /// Tell the listeners that asked for it that the tool list changed.
    pub(crate) fn tool_list_changed(&self) {
        for subscriber in self.live().iter().filter(|s| s.tool_list.load(Ordering::Relaxed)) {
            if subscriber.queue.push(Update::ToolListChanged) {
                self.lagged.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Changes were missed (the replicas' feed lagged): every subscriber re-reads what it watches.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn missed(&self) {
        let live = self.live();
        for subscriber in &live {
            subscriber.missed();
        }
        self.lagged.fetch_add(live.len() as u64, Ordering::Relaxed);
    }

    pub(crate) fn stats(&self) -> SubscriptionStats {
        let live = self.live();
        let watching: Vec<&Arc<Subscriber>> = live.iter().filter(|s| s.count() > 0).collect();
        SubscriptionStats {
            subscribers: watching.len(),
            resources: watching.iter().map(|s| s.count()).sum(),
            queued: live.iter().map(|s| s.queue.len()).sum(),
            lagged: self.lagged.load(Ordering::Relaxed),
        }
    }
}

impl Observer for Subscriptions {
    fn changed(&self, change: Change<'_>) {
        self.fire(&Topic::fired_by(change));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trails_kg::changes::ChangeKind;

    fn requirement() -> &'static trails_core::declare::NodeTypeInfo {
        static INFO: trails_core::declare::NodeTypeInfo = trails_core::declare::NodeTypeInfo {
            label: "Requirement",
            iri: "https://example.org/req#Requirement",
            key: Some("req_id"),
            unique: &[],
            predicates: &[],
            parent: None,
            validate: |_, _, _| {},
        };
        &INFO
    }

    fn created(iri: &str) -> Change<'_> {
        Change::Instance { node: requirement(), iri, kind: ChangeKind::Created }
    }

    #[tokio::test]
    async fn a_change_reaches_exactly_the_uris_that_watch_it() {
        let hub = Subscriptions::new(10, 10, 10, 16);
        let one = hub.subscriber(SubscriberKind::Session).unwrap();
        one.watch(Topic::Umbrella("Requirement"), "trails://kg/Requirement").unwrap();
        one.watch(Topic::Instance("urn:x/Requirement/R-1".into()), "trails://kg/Requirement/R-1").unwrap();
        let other = hub.subscriber(SubscriberKind::Session).unwrap();
        other.watch(Topic::Instance("urn:x/Requirement/R-2".into()), "trails://kg/Requirement/R%2D2").unwrap();
        other.watch(Topic::Types, "trails://kg/types").unwrap();

        hub.changed(created("urn:x/Requirement/R-2"));
        let next = |s: &Arc<Subscriber>| s.queue.len();
        assert_eq!((next(&one), next(&other)), (1, 2));
        assert_eq!(one.next().await.unwrap().update, Update::Resource("trails://kg/Requirement".into()));
        // The notification names the URI as the subscriber wrote it.
        assert_eq!(other.next().await.unwrap().update, Update::Resource("trails://kg/Requirement/R%2D2".into()));
        assert_eq!(other.next().await.unwrap().update, Update::Resource("trails://kg/types".into()));

        // An update fires the instance and its umbrella, not the counts.
        hub.changed(Change::Instance { node: requirement(), iri: "urn:x/Requirement/R-2", kind: ChangeKind::Updated });
        assert_eq!((next(&one), next(&other)), (1, 1));
        hub.changed(Change::Activity);
        assert_eq!((next(&one), next(&other)), (1, 1), "no one watches provenance or stats");
    }

    #[test]
    fn limits_per_subscriber_and_per_server_are_enforced_and_counted() {
        let hub = Subscriptions::new(2, 1, 2, 1);
        let one = hub.subscriber(SubscriberKind::Session).unwrap();
        one.watch(Topic::Stats, "trails://stats").unwrap();
        one.watch(Topic::Stats, "trails://stats").unwrap();
        one.watch(Topic::ProvLatest, "trails://prov/latest").unwrap();
        assert_eq!(one.watch(Topic::Types, "trails://kg/types"), Err(Refused::TooManyResources { max: 2 }));
        for n in 0..100 {
            let refused = one.watch(Topic::Instance(format!("urn:x/R-{n}")), &format!("trails://kg/R/R-{n}"));
            assert!(refused.is_err());
        }
        assert_eq!(one.watching().len(), 2, "refusals leave no entry behind");
        assert!(one.unwatch("trails://stats") && !one.unwatch("trails://stats"));
        one.watch(Topic::Types, "trails://kg/types").unwrap();

        let two = hub.subscriber(SubscriberKind::Session).unwrap();
        assert!(matches!(hub.subscriber(SubscriberKind::Session), Err(Refused::TooManySubscribers { max: 2 })));
        let listen = SubscriberKind::Listen { anonymous: true };
        let _listen = hub.subscriber(listen).expect("listen requests have places of their own");
        assert!(
            matches!(hub.subscriber(listen), Err(Refused::AnonymousPoolFull { max: 1 })),
            "anonymous listeners share their own smaller pool"
        );
        let _token_listen = hub
            .subscriber(SubscriberKind::Listen { anonymous: false })
            .expect("a caller with a token still gets a place when anonymous ones hold theirs");
        drop(two);
        let _three = hub.subscriber(SubscriberKind::Session).expect("a dropped subscriber frees its place");

        // A queue of one: the second distinct update drops the first, and stats count it.
        hub.changed(created("urn:x/Requirement/R-1"));
        hub.changed(Change::Activity);
        let stats = hub.stats();
        assert_eq!((stats.subscribers, stats.resources, stats.queued, stats.lagged), (1, 2, 1, 1));
        one.close();
        assert_eq!(hub.stats().queued, 0);
    }

    #[tokio::test]
    async fn missed_changes_requeue_every_watched_uri_marked_lagged() {
        let hub = Subscriptions::new(10, 10, 10, 16);
        let one = hub.subscriber(SubscriberKind::Session).unwrap();
        one.watch(Topic::Types, "trails://kg/types").unwrap();
        one.watch(Topic::Stats, "trails://stats").unwrap();
        let idle = hub.subscriber(SubscriberKind::Session).unwrap();
        hub.missed();
        let (first, second) = (one.next().await.unwrap(), one.next().await.unwrap());
        assert_eq!((first.lagged, second.lagged), (1, 0), "the first delivery says changes were missed");
        let mut uris = [first.update, second.update];
        uris.sort_by_key(|u| format!("{u:?}"));
        let expected = [Update::Resource("trails://kg/types".into()), Update::Resource("trails://stats".into())];
        assert_eq!(uris, expected);
        assert_eq!(idle.queue.len(), 0, "a subscriber watching nothing has nothing to re-read");
    }
}
