//! PROV-O provenance of every `tools/call`: one `prov:Activity` per call, in its own named graph
//! `<kg.base>/prov/<trace id>`, with start and end, the caller (`prov:wasAssociatedWith`), the
//! capability id and version, and the instances the call read (`prov:used`), wrote
//! (`prov:generated`) or deleted (`prov:invalidated`). Capability authors never write it: the
//! [`Kg`](super::Kg) handle of a call records what it touches, and the dispatcher writes the
//! activity when the call ends, success or failure.
//!
//! Retention is bounded (count and age) by the [`Log`]: the call that records an activity also
//! retires the oldest ones beyond the bound, before it answers. Pruning is part of each call's own
//! work, so it cannot fall behind the call rate (a background pass did, under sustained load, and
//! the store's memory followed the log).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use oxigraph::model::vocab::{rdf, xsd};
use oxigraph::model::{Literal, NamedNode, Term};

use super::store::{Check, StoreError, Triples, Write};

/// The PROV-O namespace.
pub const PROV: &str = "http://www.w3.org/ns/prov#";
/// Trails' own terms (the manifest's `@vocab`).
pub const TRAILS: &str = "https://w3id.org/trails/capability#";

/// Most instances one activity lists (all roles together); a call that touches more says how
/// many were cut. With the activity's own few triples it stays within what a remote store
/// writes in one atomic operation.
const MAX_TOUCHED: usize = 960;
const _: () = assert!(MAX_TOUCHED + 16 <= super::RemoteStore::MAX_WRITE_TRIPLES);

/// How an instance took part in a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Used,
    Generated,
    Invalidated,
}

impl Role {
    fn predicate(self) -> NamedNode {
        NamedNode::new_unchecked(match self {
            Role::Used => "http://www.w3.org/ns/prov#used",
            Role::Generated => "http://www.w3.org/ns/prov#generated",
            Role::Invalidated => "http://www.w3.org/ns/prov#invalidated",
        })
    }
}

/// What a call's `Kg` touched, bounded.
#[derive(Debug, Default)]
pub(crate) struct Touched {
    seen: Mutex<(Vec<(Role, String)>, usize)>,
}

impl Touched {
    pub(crate) fn record(&self, role: Role, iri: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.0.iter().any(|(r, i)| *r == role && i == iri) {
            return;
        }
        if seen.0.len() < MAX_TOUCHED {
            seen.0.push((role, iri.to_owned()));
        } else {
            seen.1 += 1;
        }
    }

    fn take(&self) -> (Vec<(Role, String)>, usize) {
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// One finished call.
pub(crate) struct Call<'a> {
    pub(crate) trace_id: &'a str,
    pub(crate) capability: &'a str,
    pub(crate) version: &'a str,
    pub(crate) meta: bool,
    pub(crate) caller: Option<&'a str>,
    pub(crate) started: DateTime<Utc>,
    pub(crate) ended: DateTime<Utc>,
    /// `None` on success, the JSON-RPC code otherwise.
    pub(crate) error_code: Option<i32>,
}

fn prov(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{PROV}{local}"))
}

fn trails(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{TRAILS}{local}"))
}

fn time(at: DateTime<Utc>) -> Term {
    Term::Literal(Literal::new_typed_literal(at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true), xsd::DATE_TIME))
}

/// The graph (and IRI) of the activity of call `trace_id`.
pub(crate) fn activity_iri(base: &str, trace_id: &str) -> String {
    format!("{base}/prov/{trace_id}")
}

/// The activity of `call` as a write of its own graph.
pub(crate) fn activity(base: &str, call: &Call<'_>, touched: &Touched) -> Result<Write, StoreError> {
    let iri = activity_iri(base, call.trace_id);
    let subject = NamedNode::new(&iri).map_err(|e| StoreError::Engine(format!("activity IRI {iri}: {e}")))?;
    let agent = match call.caller {
        Some(name) => super::mapping::instance_iri(base, "agent", name),
        None => format!("{base}/agent/anonymous"),
    };
    let mut triples: Triples = vec![
        (rdf::TYPE.into_owned(), Term::NamedNode(prov("Activity"))),
        (prov("startedAtTime"), time(call.started)),
        (prov("endedAtTime"), time(call.ended)),
        (prov("wasAssociatedWith"), Term::NamedNode(NamedNode::new_unchecked(agent))),
        (trails("capability"), Term::Literal(Literal::new_simple_literal(call.capability))),
        (trails("capabilityVersion"), Term::Literal(Literal::new_simple_literal(call.version))),
        (
            trails("outcome"),
            Term::Literal(Literal::new_simple_literal(if call.error_code.is_none() { "success" } else { "error" })),
        ),
    ];
    if call.meta {
        triples.push((rdf::TYPE.into_owned(), Term::NamedNode(trails("MetaActivity"))));
    }
    if let Some(code) = call.error_code {
        triples.push((trails("errorCode"), Term::Literal(Literal::new_typed_literal(code.to_string(), xsd::INTEGER))));
    }
    let (touched, omitted) = touched.take();
    for (role, instance) in touched {
        if let Ok(node) = NamedNode::new(&instance) {
            triples.push((role.predicate(), Term::NamedNode(node)));
        }
    }
    if omitted > 0 {
        triples.push((
            trails("omittedEntities"),
            Term::Literal(Literal::new_typed_literal(omitted.to_string(), xsd::INTEGER)),
        ));
    }
    // Activities are never rewritten: the check makes that explicit to every store.
    let checks =
        vec![Check::Absent { field: String::new(), value: serde_json::Value::String(subject.as_str().into()) }];
    Ok(Write { graph: subject.clone(), subject, triples, checks, blobs: Vec::new() })
}

/// How many activities to keep, and for how long (`[kg] provenance_keep`, `provenance_max_age_days`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Retention {
    pub(crate) keep: usize,
    pub(crate) max_age: chrono::Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention { keep: 100_000, max_age: chrono::Duration::days(90) }
    }
}

/// Most activities one call retires besides making room for its own: a log found over its bound
/// (from an earlier run with a larger `keep`, or aged out) drains this much faster than calls come.
const RETIRE_PER_CALL: usize = 8;

/// An activity the log knows of, in 32 bytes: the IRI Trails gives it is `<base>/prov/<uuid>`, so
/// mostly the uuid is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Name {
    /// `<base>/prov/<the uuid in its 32-digit form>`.
    Trace(u128),
    /// Any other IRI (written by another tool, or an older Trails).
    Iri(Box<str>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Kept {
    name: Name,
    /// Microseconds since the epoch; `None` for a start time that does not parse, which is never
    /// "old" (only the count can retire it).
    started: Option<i64>,
}

impl Kept {
    fn new(base: &str, iri: &str, started: Option<DateTime<Utc>>) -> Kept {
        let trace = iri
            .strip_prefix(base)
            .and_then(|rest| rest.strip_prefix("/prov/"))
            .filter(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
            .and_then(|id| u128::from_str_radix(id, 16).ok());
        Kept {
            name: match trace {
                Some(id) => Name::Trace(id),
                None => Name::Iri(iri.into()),
            },
            started: started.map(|at| at.timestamp_micros()),
        }
    }

    /// The activity's IRI (also the name of its graph).
    pub(crate) fn iri(&self, base: &str) -> String {
        match &self.name {
            Name::Trace(id) => format!("{base}/prov/{id:032x}"),
            Name::Iri(iri) => iri.to_string(),
        }
    }
}

/// The activities this process knows of, oldest first — those the store held when the log was
/// first used, then every one recorded since, in the order they were recorded (a call that ran
/// long is recorded, and retired, after shorter ones that started later) — and what retention
/// allows of them.
#[derive(Debug)]
pub(crate) struct Log {
    retention: Retention,
    kept: Mutex<VecDeque<Kept>>,
    /// Filled from the store by the first call that records an activity (other calls wait).
    loaded: tokio::sync::OnceCell<()>,
    /// Activities retired since start (by calls, and by reconciling passes).
    pub(crate) pruned: AtomicU64,
    /// Calls recorded since the last reconciling pass.
    pub(crate) since_reconcile: AtomicUsize,
    /// A reconciling pass is running (at most one at a time).
    pub(crate) reconciling: std::sync::atomic::AtomicBool,
}

impl Log {
    pub(crate) fn new(retention: Retention) -> Log {
        Log {
            retention,
            kept: Mutex::default(),
            loaded: tokio::sync::OnceCell::new(),
            pruned: AtomicU64::new(0),
            since_reconcile: AtomicUsize::new(0),
            reconciling: Default::default(),
        }
    }

    pub(crate) fn retention(&self) -> Retention {
        self.retention
    }

    /// Whether the activities the store held at start are known (loading them failed otherwise).
    pub(crate) async fn load<F, E>(&self, base: &str, read: impl FnOnce() -> F) -> Result<(), E>
    where
        F: std::future::Future<Output = Result<Vec<(String, String)>, E>>,
    {
        self.loaded
            .get_or_try_init(|| async {
                let found = read().await?;
                let mut kept = self.lock();
                // Oldest first; anything recorded meanwhile (nothing is: recording waits) after.
                let loaded = found.into_iter().map(|(iri, started)| Kept::new(base, &iri, parse_time(&started)));
                let recorded = std::mem::take(&mut *kept);
                kept.extend(loaded);
                kept.extend(recorded);
                Ok(())
            })
            .await
            .map(|_| ())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Kept>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Add the activity of a call that started at `started`; the activities it retires: those
    /// beyond `keep` (never the one just added) and those older than `max_age`, oldest first, at
    /// most [`RETIRE_PER_CALL`] beyond the one that makes room.
    pub(crate) fn admit(&self, base: &str, iri: &str, started: DateTime<Utc>, now: DateTime<Utc>) -> Vec<Kept> {
        let cutoff = (now - self.retention.max_age).timestamp_micros();
        let mut kept = self.lock();
        kept.push_back(Kept::new(base, iri, Some(started)));
        let mut retired = Vec::new();
        while retired.len() <= RETIRE_PER_CALL && kept.len() > 1 {
            let front = kept.front().expect("more than one");
            let aged = front.started.is_some_and(|started| started < cutoff);
            if kept.len() <= self.retention.keep && !aged {
                break;
            }
            retired.extend(kept.pop_front());
        }
        retired
    }

    /// `activity` was not recorded after all: forget it.
    pub(crate) fn forget(&self, base: &str, iri: &str) {
        let gone = Kept::new(base, iri, None).name;
        let mut kept = self.lock();
        if let Some(at) = kept.iter().rposition(|entry| entry.name == gone) {
            kept.remove(at);
        }
    }

    /// These were not retired after all (the store failed): oldest first again, to retry.
    pub(crate) fn restore(&self, mut retired: Vec<Kept>) {
        let mut kept = self.lock();
        while let Some(entry) = retired.pop() {
            kept.push_front(entry);
        }
    }

    /// Activities known to the log.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// A stored start time (however a store spells it: Virtuoso drops the fraction, others add an
/// offset).
fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text).ok().map(|at| at.with_timezone(&Utc))
}

/// Of the oldest activities (sorted oldest first: IRI, start time), those to drop: the first
/// `over` (beyond the count to keep) and any that started before `cutoff`.
pub(crate) fn to_prune(oldest: Vec<(String, String)>, over: usize, cutoff: DateTime<Utc>) -> Vec<String> {
    oldest
        .into_iter()
        .enumerate()
        .filter(|(index, (_, started))| {
            // A start time that does not parse is never "old": only the count can drop it.
            let aged = parse_time(started).is_some_and(|started| started < cutoff);
            *index < over || aged
        })
        .map(|(_, (iri, _))| iri)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "urn:trails:kg";

    fn iri(n: u128) -> String {
        format!("{BASE}/prov/{n:032x}")
    }

    fn at(day: u32) -> DateTime<Utc> {
        format!("2026-11-{day:02}T00:00:00Z").parse().unwrap()
    }

    fn retired(log: &Log, n: u128, day: u32) -> Vec<String> {
        log.admit(BASE, &iri(n), at(day), at(day)).iter().map(|kept| kept.iri(BASE)).collect()
    }

    #[test]
    fn each_call_retires_what_passes_the_bound_so_the_log_never_grows_past_it() {
        let log = Log::new(Retention { keep: 3, max_age: chrono::Duration::days(365) });
        for n in 0..3 {
            assert!(retired(&log, n, 1).is_empty());
        }
        for n in 3..1000 {
            assert_eq!(retired(&log, n, 1), [iri(n - 3)], "the oldest goes as the newest comes");
            assert_eq!(log.len(), 3);
        }
    }

    #[test]
    fn activities_past_their_age_go_however_few_are_kept() {
        let log = Log::new(Retention { keep: 100, max_age: chrono::Duration::days(10) });
        assert!(retired(&log, 1, 1).is_empty());
        assert!(retired(&log, 2, 5).is_empty());
        // On the 14th, the 1st is 13 days old, the 5th 9.
        assert_eq!(retired(&log, 3, 14), [iri(1)]);
        assert_eq!(log.len(), 2);
    }

    #[test]
    fn a_log_found_over_its_bound_drains_a_few_per_call_and_never_loses_the_newest() {
        let log = Log::new(Retention { keep: 0, max_age: chrono::Duration::days(1) });
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let stored: Vec<(String, String)> = (0..20).map(|n| (iri(n), at(1).to_rfc3339())).collect();
        runtime.block_on(log.load::<_, ()>(BASE, || async { Ok(stored) })).unwrap();
        assert_eq!(log.len(), 20);
        let first = retired(&log, 100, 1);
        assert_eq!(first.len(), RETIRE_PER_CALL + 1, "the oldest ones, a few at a time");
        assert_eq!(first[0], iri(0));
        let _ = retired(&log, 101, 1);
        let third = retired(&log, 102, 1);
        assert_eq!(third.last(), Some(&iri(101)), "down to the newest");
        assert_eq!(log.len(), 1, "the activity just recorded stays, even with keep = 0");
    }

    #[test]
    fn what_the_store_could_not_retire_is_retried_first_and_what_it_did_not_record_is_forgotten() {
        let log = Log::new(Retention { keep: 2, max_age: chrono::Duration::days(365) });
        let _ = retired(&log, 1, 1);
        let _ = retired(&log, 2, 1);
        let failed = log.admit(BASE, &iri(3), at(1), at(1));
        assert_eq!(failed.len(), 1);
        log.restore(failed);
        log.forget(BASE, &iri(3));
        assert_eq!(retired(&log, 4, 1), [iri(1)], "the failed retirement comes first again");
        assert_eq!(log.len(), 2);
    }

    #[test]
    fn any_activity_iri_is_kept_exactly() {
        for name in [iri(u128::MAX), iri(7), format!("{BASE}/prov/not-a-uuid"), "https://elsewhere.example/a".into()] {
            assert_eq!(Kept::new(BASE, &name, None).iri(BASE), name);
        }
        assert!(matches!(Kept::new(BASE, &iri(7), None).name, Name::Trace(7)));
        let upper = format!("{BASE}/prov/{:032X}", 0xabcu128);
        assert_eq!(Kept::new(BASE, &upper, None).iri(BASE), upper, "only the form Trails writes is shortened");
    }

    #[test]
    fn pruning_keeps_the_newest_within_age() {
        let at = |s: &str| s.to_owned();
        let activities = vec![
            ("a".to_owned(), at("2026-01-01T00:00:00.000000Z")),
            ("b".to_owned(), at("2026-06-01T00:00:00.000000Z")),
            ("c".to_owned(), at("2026-11-01T00:00:00.000000Z")),
            ("d".to_owned(), at("2026-11-02T00:00:00.000000Z")),
        ];
        let cutoff: DateTime<Utc> = "2026-03-01T00:00:00Z".parse().unwrap();
        assert_eq!(to_prune(activities.clone(), 0, cutoff), ["a"]);
        assert_eq!(to_prune(activities.clone(), 2, cutoff), ["a", "b"]);
        // However a store spells the time (Virtuoso drops the fraction, others add an offset).
        let spelt =
            vec![("e".to_owned(), at("2026-02-28T23:00:00-02:00")), ("f".to_owned(), at("2026-02-28T23:59:59Z"))];
        assert_eq!(to_prune(spelt, 0, cutoff), ["f"]);
    }
}
