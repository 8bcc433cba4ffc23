//! Several replicas of one app (`[coordination]`, the `redis` feature): what they share in Redis.
//! Budgets and idempotency keys are the governance guards' (given [`Replicas::governance`]);
//! this replica's knowledge-graph changes go out on the feed and the others' come in to this
//! replica's subscribers ([`Replicas::relay`]); provenance is reconciled under a lease.
//!
//! The connection is made on a small runtime of its own, so that it exists (and a Redis that does
//! not answer refuses the start) while the app is built, before any serving runtime does; the
//! feed's tasks and the keepalive run there too. A reconnection after a failure runs on the
//! runtime of the call that met it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use trails_coord::feed::{Following, Publisher, Received};
use trails_coord::{Coordinator, Options};

use super::notifier::Subscriptions;
use trails_core::declare::NodeTypeInfo;
use trails_kg::changes::{Change, ChangeKind, Observer};
use trails_kg::provenance::PruneLease;
use trails_kg::Kg;

/// How long the provenance lease lasts unrenewed (a pass renews it for every batch).
const PRUNE_LEASE: Duration = Duration::from_secs(60);

pub(crate) struct Replicas {
    /// `None` once dropped (shut down in the background: dropping a runtime inside another
    /// would block it).
    runtime: Option<tokio::runtime::Runtime>,
    coordinator: Coordinator,
    fail_open: bool,
    /// This replica's changes, published (kept alive here: the graph holds observers weakly).
    outbox: Mutex<Option<Arc<Outbox>>>,
    following: Mutex<Option<Following>>,
}

impl Replicas {
    /// Connect to Redis, or say why not. `fail_open`: Redis unavailable mid-run lets calls
    /// through uncharged rather than refusing them.
    pub(crate) fn connect(options: Options, fail_open: bool) -> Result<Replicas, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("trails-coordination")
            .enable_all()
            .build()
            .map_err(|error| format!("cannot start the coordination runtime: {error}"))?;
        // On a thread of its own: `build` may run inside an async test, where blocking on a
        // runtime is refused.
        let connected = std::thread::scope(|scope| {
            scope.spawn(|| runtime.block_on(Coordinator::connect(options))).join().expect("connecting does not panic")
        });
        let coordinator = connected.map_err(|error| format!("[coordination]: {error}"))?;
        tracing::info!(redis = coordinator.url(), replica = coordinator.replica(), "sharing state with other replicas");
        Ok(Replicas {
            runtime: Some(runtime),
            coordinator,
            fail_open,
            outbox: Mutex::default(),
            following: Mutex::default(),
        })
    }

    /// Budgets and idempotency keys in Redis.
    pub(crate) fn governance(&self) -> trails_governance::coordination::Coordination {
        trails_governance::coordination::Coordination {
            coordinator: self.coordinator.clone(),
            fail_open: self.fail_open,
        }
    }

    /// Publish `kg`'s changes to the other replicas, tell `subscriptions` theirs, and reconcile
    /// provenance only under the lease.
    pub(crate) fn relay(&self, kg: &Kg, subscriptions: &Arc<Subscriptions>, node_types: &[&'static NodeTypeInfo]) {
        let runtime = self.runtime.as_ref().expect("running");
        let _entered = runtime.enter();
        let outbox = Arc::new(Outbox(self.coordinator.publisher()));
        kg.observe(Arc::downgrade(&outbox) as Weak<dyn Observer>);
        *self.outbox.lock().unwrap_or_else(|p| p.into_inner()) = Some(outbox);

        let by_label: HashMap<&'static str, &'static NodeTypeInfo> =
            node_types.iter().map(|node| (node.label, *node)).collect();
        let subscriptions = Arc::downgrade(subscriptions);
        let following = self.coordinator.follow(move |received| {
            let Some(subscriptions) = subscriptions.upgrade() else { return };
            match received {
                Received::Entry(entry) => match decode(&entry, &by_label) {
                    Some(Decoded::Instance { node, iri, kind }) => {
                        subscriptions.changed(Change::Instance { node, iri: &iri, kind });
                    }
                    Some(Decoded::Activity) => subscriptions.changed(Change::Activity),
                    Some(Decoded::Pruned) => subscriptions.changed(Change::Pruned),
                    // A node type this build does not declare (a replica of another version):
                    // whoever watches re-reads.
                    None => subscriptions.missed(),
                },
                Received::Lagged => {
                    tracing::warn!(
                        "changes made through other replicas may have been missed; subscribers are told to re-read"
                    );
                    subscriptions.missed();
                }
            }
        });
        *self.following.lock().unwrap_or_else(|p| p.into_inner()) = Some(following);
        kg.prune_under(Arc::new(Lease(self.coordinator.clone())));
    }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        self.following.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Puts this replica's acknowledged changes on the feed (never waits).
struct Outbox(Publisher);

impl Observer for Outbox {
    fn changed(&self, change: Change<'_>) {
        self.0.publish(encode(change));
    }
}

/// The provenance lease, in Redis. Redis unreachable: no pass (another replica, or this one
/// later, does it).
#[derive(Debug)]
struct Lease(Coordinator);

impl PruneLease for Lease {
    fn hold(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + '_>> {
        Box::pin(async move {
            match self.0.lease("provenance-pruning", PRUNE_LEASE).await {
                Ok(held) => held,
                Err(error) => {
                    tracing::warn!(%error, "cannot take the provenance-pruning lease; not pruning now");
                    false
                }
            }
        })
    }
}

/// A change as it travels: `i` + `c`/`u`/`d` + label, a tab, the IRI; `a` an activity; `p` a
/// pruning.
fn encode(change: Change<'_>) -> String {
    match change {
        Change::Instance { node, iri, kind } => {
            let kind = match kind {
                ChangeKind::Created => 'c',
                ChangeKind::Updated => 'u',
                ChangeKind::Deleted => 'd',
            };
            format!("i{kind}{}\t{iri}", node.label)
        }
        Change::Activity => "a".to_owned(),
        Change::Pruned => "p".to_owned(),
    }
}

enum Decoded {
    Instance { node: &'static NodeTypeInfo, iri: String, kind: ChangeKind },
    Activity,
    Pruned,
}

fn decode(entry: &str, by_label: &HashMap<&'static str, &'static NodeTypeInfo>) -> Option<Decoded> {
    match entry {
        "a" => return Some(Decoded::Activity),
        "p" => return Some(Decoded::Pruned),
        _ => {}
    }
    let rest = entry.strip_prefix('i')?;
    let kind = match rest.chars().next()? {
        'c' => ChangeKind::Created,
        'u' => ChangeKind::Updated,
        'd' => ChangeKind::Deleted,
        _ => return None,
    };
    let (label, iri) = rest[1..].split_once('\t')?;
    Some(Decoded::Instance { node: by_label.get(label)?, iri: iri.to_owned(), kind })
}

#[cfg(test)]
mod tests {
    use super::*;

    static REQUIREMENT: NodeTypeInfo = NodeTypeInfo {
        label: "Requirement",
        iri: "https://example.org/req#Requirement",
        key: Some("req_id"),
        unique: &[],
        predicates: &[],
        parent: None,
        validate: |_, _, _| {},
    };

    #[test]
    fn changes_travel_and_come_back_the_same() {
        let by_label = HashMap::from([("Requirement", &REQUIREMENT)]);
        let iri = "urn:trails:kg/Requirement/R\t1";
        for kind in [ChangeKind::Created, ChangeKind::Updated, ChangeKind::Deleted] {
            let entry = encode(Change::Instance { node: &REQUIREMENT, iri, kind });
            let Some(Decoded::Instance { node, iri: back, kind: came }) = decode(&entry, &by_label) else {
                panic!("{entry:?}")
            };
            assert_eq!((node.label, back.as_str(), came), ("Requirement", iri, kind));
        }
        assert!(matches!(decode(&encode(Change::Activity), &by_label), Some(Decoded::Activity)));
        assert!(matches!(decode(&encode(Change::Pruned), &by_label), Some(Decoded::Pruned)));
        assert!(decode("icTask\turn:x", &by_label).is_none(), "a node type this build does not know");
        assert!(decode("ix", &by_label).is_none());
    }
}
