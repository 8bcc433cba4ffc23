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
use oxrdf::vocab::{rdf, xsd};
use oxrdf::{Literal, NamedNode, Term};

use super::store::{Check, StoreError, Triples, Write};
use crate::pipeline::{Failure, Guard, GuardFuture, Next, Refusal};
use crate::registry::ToolKind;

/// The PROV-O namespace.
pub const PROV: &str = "http://www.w3.org/ns/prov#";
/// Trails' own terms (the manifest's `@vocab`).
pub const TRAILS: &str = "https://w3id.org/trails/capability#";

/// Most instances one activity lists (all roles together); a call that touches more says how
/// many were cut. With the activity's own few triples it stays within what a remote store
/// writes in one atomic operation.
const MAX_TOUCHED: usize = 960;
const _: () = assert!(MAX_TOUCHED + 16 <= crate::store::MAX_WRITE_TRIPLES);

/// How an instance took part in a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
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
pub struct Touched {
    seen: Mutex<(Vec<(Role, String)>, usize)>,
}

impl Touched {
    pub fn record(&self, role: Role, iri: &str) {
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
pub struct Call<'a> {
    pub trace_id: &'a str,
    pub capability: &'a str,
    pub version: &'a str,
    pub meta: bool,
    pub caller: Option<&'a str>,
    /// The OAuth client acting for the caller.
    pub client: Option<&'a str>,
    pub started: DateTime<Utc>,
    pub ended: DateTime<Utc>,
    /// `None` on success, the JSON-RPC code otherwise.
    pub error_code: Option<i32>,
    /// A handler's domain error: its kind (`not_found`, `conflict`, …).
    pub error_kind: Option<&'static str>,
    /// The W3C trace id of the distributed trace the call belongs to.
    pub distributed_trace: Option<&'a str>,
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
pub fn activity_iri(base: &str, trace_id: &str) -> String {
    format!("{base}/prov/{trace_id}")
}

/// The agent a call is associated with: `<base>/agent/<name>` (percent-encoded), or for anonymous
/// callers `<base>/agent#anonymous`, which no name produces (`#` is encoded in a name): a token
/// named `anonymous` is not them.
pub fn agent_iri(base: &str, caller: Option<&str>) -> String {
    match caller {
        Some(name) => super::mapping::instance_iri(base, "agent", name),
        None => format!("{base}/agent#anonymous"),
    }
}

/// The activity of `call` as a write of its own graph.
pub fn activity(base: &str, call: &Call<'_>, touched: &Touched) -> Result<Write, StoreError> {
    let iri = activity_iri(base, call.trace_id);
    let subject = NamedNode::new(&iri).map_err(|e| StoreError::Engine(format!("activity IRI {iri}: {e}")))?;
    let agent = agent_iri(base, call.caller);
    let mut triples: Triples = vec![
        (rdf::TYPE.into_owned(), Term::NamedNode(prov("Activity"))),
        (prov("startedAtTime"), time(call.started)),
        (prov("endedAtTime"), time(call.ended)),
        (prov("wasAssociatedWith"), Term::NamedNode(NamedNode::new_unchecked(agent))),
        (trails("capability"), Term::Literal(Literal::new_simple_literal(call.capability))),
        (trails("capabilityVersion"), Term::Literal(Literal::new_simple_literal(call.version))),
        (
            trails("outcome"),
            Term::Literal(Literal::new_simple_literal(if call.error_code.is_none() && call.error_kind.is_none() {
                "success"
            } else {
                "error"
            })),
        ),
    ];
    if call.meta {
        triples.push((rdf::TYPE.into_owned(), Term::NamedNode(trails("MetaActivity"))));
    }
    if let Some(code) = call.error_code {
        triples.push((trails("errorCode"), Term::Literal(Literal::new_typed_literal(code.to_string(), xsd::INTEGER))));
    }
    if let Some(kind) = call.error_kind {
        triples.push((trails("errorKind"), Term::Literal(Literal::new_simple_literal(kind))));
    }
    if let Some(trace) = call.distributed_trace {
        triples.push((trails("traceId"), Term::Literal(Literal::new_simple_literal(trace))));
    }
    if let Some(client) = call.client {
        triples.push((trails("client"), Term::Literal(Literal::new_simple_literal(client))));
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
pub struct Retention {
    pub keep: usize,
    pub max_age: chrono::Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention { keep: 100_000, max_age: chrono::Duration::days(90) }
    }
}

/// Most activities one call retires besides making room for its own: a log found over its bound
/// (from an earlier run with a larger `keep`, or aged out) drains this much faster than calls come.
const RETIRE_PER_CALL: usize = 8;

/// An activity the log knows of, in 48 bytes: the IRI Trails gives it is `<base>/prov/<uuid>`, so
/// mostly the uuid is kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Name {
    /// `<base>/prov/<the uuid in its 32-digit form>`.
    Trace(u128),
    /// Any other IRI (written by another tool, or an older Trails).
    Iri(Box<str>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
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
    pub fn iri(&self, base: &str) -> String {
        match &self.name {
            Name::Trace(id) => format!("{base}/prov/{id:032x}"),
            Name::Iri(iri) => iri.to_string(),
        }
    }
}

/// The activities this process knows of, oldest first — those the store held when the log was
/// loaded, then every one recorded since, in the order their writes completed — and what
/// retention allows of them. An activity joins only once its write is acknowledged, so a call
/// never retires one that is not stored yet (its delete would find nothing, and the write that
/// lands after it would stay for good).
#[derive(Debug)]
pub struct Log {
    retention: Retention,
    state: Mutex<State>,
    /// Activities retired since start (by calls, and by reconciling passes).
    pub pruned: AtomicU64,
    /// Calls recorded since the last reconciling pass.
    pub since_reconcile: AtomicUsize,
    /// A reconciling pass is running (at most one at a time).
    pub reconciling: std::sync::atomic::AtomicBool,
    /// With several replicas on one store: the lease a reconciling pass must hold.
    pub lease: std::sync::OnceLock<std::sync::Arc<dyn PruneLease>>,
}

/// Who may prune the whole log now. Replicas sharing a remote store each retire what they
/// recorded themselves; the pass over everything (what other processes recorded) is one
/// replica's at a time, whoever holds this lease.
pub trait PruneLease: Send + Sync + std::fmt::Debug {
    /// Take or renew the lease; whether this process holds it.
    fn hold(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + '_>>;
}

#[derive(Debug, Default)]
struct State {
    kept: VecDeque<Kept>,
    /// Calls that made room and whose activity is not acknowledged yet: each holds a place, so
    /// calls that end together leave `keep` in all, not `keep` plus their number.
    pending: usize,
    load: Load,
    /// Activities recorded before the log was loaded: merged into it when it is.
    early: Vec<Kept>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Load {
    /// Nobody has tried yet.
    #[default]
    Due,
    Running,
    Failed(std::time::Instant),
    Done,
}

/// After a failed load, how long calls record without retiring before one tries again.
const RELOAD_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

impl Log {
    pub fn new(retention: Retention) -> Log {
        Log {
            retention,
            state: Mutex::default(),
            pruned: AtomicU64::new(0),
            since_reconcile: AtomicUsize::new(0),
            reconciling: Default::default(),
            lease: std::sync::OnceLock::new(),
        }
    }

    pub fn retention(&self) -> Retention {
        self.retention
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the caller should load the log now (it is due, or its last failure is old); it
    /// is then marked running, so only one caller loads.
    pub fn claim_load(&self) -> bool {
        let mut state = self.lock();
        let due = match state.load {
            Load::Due => true,
            Load::Failed(at) => at.elapsed() >= RELOAD_AFTER,
            Load::Running | Load::Done => false,
        };
        if due {
            state.load = Load::Running;
        }
        due
    }

    /// The outcome of the load [`Log::claim_load`] gave: the stored activities, oldest first.
    pub fn loaded(&self, base: &str, found: Option<Vec<(String, String)>>) {
        let mut state = self.lock();
        let Some(found) = found else {
            state.load = Load::Failed(std::time::Instant::now());
            return;
        };
        let early: Vec<Kept> = std::mem::take(&mut state.early);
        let mut missing: std::collections::HashSet<&Name> = early.iter().map(|kept| &kept.name).collect();
        let mut kept: VecDeque<Kept> = found
            .into_iter()
            .map(|(iri, started)| Kept::new(base, &iri, parse_time(&started)))
            .inspect(|kept| {
                missing.remove(&kept.name);
            })
            .collect();
        // Those recorded early that the load did not see yet, after it.
        let unseen: Vec<Kept> = early.iter().filter(|kept| missing.contains(&kept.name)).cloned().collect();
        kept.extend(unseen);
        state.kept = kept;
        state.load = Load::Done;
    }

    /// The activities a call ending at `now` retires to make room for its own: the oldest while
    /// the log (with the calls in flight) is at `keep` (so it keeps the newest one even with
    /// `keep = 0`) or past `max_age`, at most [`RETIRE_PER_CALL`] beyond the one that makes room.
    /// Nothing before the log is loaded. Follow it with [`Log::add`] or [`Log::abandon`].
    pub fn make_room(&self, now: DateTime<Utc>) -> Vec<Kept> {
        let cutoff = now.checked_sub_signed(self.retention.max_age).unwrap_or(DateTime::<Utc>::MIN_UTC);
        let cutoff = cutoff.timestamp_micros();
        let mut state = self.lock();
        let mut retired = Vec::new();
        while state.load == Load::Done && retired.len() <= RETIRE_PER_CALL {
            let Some(front) = state.kept.front() else { break };
            let aged = front.started.is_some_and(|started| started < cutoff);
            if state.kept.len() + state.pending < self.retention.keep && !aged {
                break;
            }
            retired.extend(state.kept.pop_front());
        }
        state.pending += 1;
        retired
    }

    /// The activity of a call that made room was not stored after all.
    pub fn abandon(&self) {
        let mut state = self.lock();
        state.pending = state.pending.saturating_sub(1);
    }

    /// The activity `iri` of a call that started at `started` is stored.
    pub fn add(&self, base: &str, iri: &str, started: DateTime<Utc>) {
        let kept = Kept::new(base, iri, Some(started));
        let mut state = self.lock();
        state.pending = state.pending.saturating_sub(1);
        match state.load {
            Load::Done => state.kept.push_back(kept),
            _ => state.early.push(kept),
        }
    }

    /// These were not retired after all (the store failed): oldest first again, to retry.
    pub fn restore(&self, mut retired: Vec<Kept>) {
        let mut state = self.lock();
        while let Some(entry) = retired.pop() {
            state.kept.push_front(entry);
        }
    }

    /// Activities known to the log.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().kept.len()
    }
}

/// A stored start time (however a store spells it: Virtuoso drops the fraction, others add an
/// offset).
fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text).ok().map(|at| at.with_timezone(&Utc))
}

/// Of the oldest activities (sorted oldest first: IRI, start time), those to drop: the first
/// `over` (beyond the count to keep) and any that started before `cutoff`.
pub fn to_prune(oldest: Vec<(String, String)>, over: usize, cutoff: DateTime<Utc>) -> Vec<String> {
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

/// The provenance guard, outermost: every call admitted to a tool leaves an activity — refused
/// by a later guard, failed (a panic too) or done — naming what it read and wrote, durable
/// before the call answers. A replay (an earlier call's result, answered again) ran nothing and
/// leaves none. A failure to record is logged; it never fails the call.
pub struct ProvenanceGuard(pub super::Kg);

impl Guard for ProvenanceGuard {
    fn call<'a>(&'a self, mut call: crate::pipeline::Call, next: Next<'a>) -> GuardFuture<'a> {
        Box::pin(async move {
            // The call's own handle records what it touches.
            let (kg, touched) = self.0.recording(call.tool());
            call.insert_extension(kg);
            let (tool, trace_id, caller, client) = (
                call.tool(),
                call.ctx().trace_id().to_owned(),
                call.ctx().caller().map(str::to_owned),
                call.ctx().client().map(str::to_owned),
            );
            let distributed_trace = call.ctx().distributed_trace_id().map(str::to_owned);
            let started = Utc::now();
            let dry_run = call.dry_run().is_some();
            let answer = next.run(call).await;
            // A dry run ran nothing: it leaves no activity.
            if dry_run {
                return answer;
            }
            let (error_code, error_kind) = match &answer {
                Ok(done) if done.is_replay() => return answer,
                Ok(done) => match done.failure() {
                    Some(Failure::Code(code)) => (Some(*code), None),
                    Some(Failure::Domain(domain)) => (None, Some(domain.kind().as_str())),
                    _ => (None, None),
                },
                // A round of an input-required result: it ended asking the client, not failing.
                Err(Refusal::InputRequired(_)) => (None, Some("input_required")),
                Err(refusal) => (Some(refusal.code()), None),
            };
            let call = Call {
                trace_id: &trace_id,
                capability: tool.id(),
                version: tool.version(),
                meta: tool.kind() == ToolKind::Meta,
                caller: caller.as_deref(),
                client: client.as_deref(),
                started,
                ended: Utc::now(),
                error_code,
                error_kind,
                distributed_trace: distributed_trace.as_deref(),
            };
            if let Err(error) = self.0.record_activity(&call, &touched).await {
                tracing::error!(%error, trace_id, "could not record provenance");
            }
            answer
        })
    }
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

    /// A loaded log (with `stored` in it) of this retention.
    fn log(keep: usize, max_age_days: i64, stored: Vec<(String, String)>) -> Log {
        let log = Log::new(Retention { keep, max_age: chrono::Duration::days(max_age_days) });
        assert!(log.claim_load());
        log.loaded(BASE, Some(stored));
        log
    }

    /// One call's turn: make room, then (its write acknowledged) add its activity.
    fn retired(log: &Log, n: u128, day: u32) -> Vec<String> {
        let retired = log.make_room(at(day)).iter().map(|kept| kept.iri(BASE)).collect();
        log.add(BASE, &iri(n), at(day));
        retired
    }

    #[test]
    fn each_call_retires_what_passes_the_bound_so_the_log_never_grows_past_it() {
        let log = log(3, 365, Vec::new());
        for n in 0..3 {
            assert!(retired(&log, n, 1).is_empty());
        }
        for n in 3..1000 {
            assert_eq!(retired(&log, n, 1), [iri(n - 3)], "the oldest goes as the newest comes");
            assert_eq!(log.len(), 3);
        }
    }

    #[test]
    fn calls_in_flight_never_retire_an_activity_not_stored_yet() {
        let log = log(2, 365, Vec::new());
        let _ = retired(&log, 1, 1);
        let _ = retired(&log, 2, 1);
        // Three calls make room before any of their writes is acknowledged: only what is
        // stored can go.
        let taken: Vec<String> = (0..3).flat_map(|_| log.make_room(at(1))).map(|kept| kept.iri(BASE)).collect();
        assert_eq!(taken, [iri(1), iri(2)], "each holds a place; the third finds nothing stored to take");
        for n in 3..6 {
            log.add(BASE, &iri(n), at(1));
        }
        assert_eq!(retired(&log, 6, 1), [iri(3), iri(4)], "back to the bound at the next call");
        assert_eq!(log.len(), 2);
        assert_eq!(log.make_room(at(1)).len(), 1);
        log.abandon();
        assert!(retired(&log, 7, 1).is_empty(), "an abandoned call holds no place");
        assert_eq!(log.len(), 2);
    }

    #[test]
    fn activities_past_their_age_go_however_few_are_kept() {
        let log = log(100, 10, Vec::new());
        assert!(retired(&log, 1, 1).is_empty());
        assert!(retired(&log, 2, 5).is_empty());
        // On the 14th, the 1st is 13 days old, the 5th 9.
        assert_eq!(retired(&log, 3, 14), [iri(1)]);
        assert_eq!(log.len(), 2);
        let forever = Log::new(Retention { keep: 10, max_age: chrono::Duration::MAX });
        assert!(forever.claim_load());
        forever.loaded(BASE, Some(Vec::new()));
        assert!(
            forever.make_room(at(1)).is_empty(),
            "an age past the calendar's start drops nothing (and never panics)"
        );
    }

    #[test]
    fn a_log_found_over_its_bound_drains_a_few_per_call_and_keeps_the_newest() {
        let stored: Vec<(String, String)> = (0..20).map(|n| (iri(n), at(1).to_rfc3339())).collect();
        let log = log(0, 1, stored);
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
    fn calls_before_the_load_retire_nothing_and_join_the_log_once_it_is_loaded() {
        let log = Log::new(Retention { keep: 2, max_age: chrono::Duration::days(365) });
        assert!(log.claim_load());
        assert!(!log.claim_load(), "one load at a time");
        // Recorded while the load runs: one the load sees, one it does not.
        assert!(retired(&log, 10, 2).is_empty());
        assert!(retired(&log, 11, 2).is_empty());
        let stored = vec![(iri(1), at(1).to_rfc3339()), (iri(10), at(2).to_rfc3339())];
        log.loaded(BASE, Some(stored));
        assert_eq!(log.len(), 3, "each once");
        assert_eq!(retired(&log, 12, 2), [iri(1), iri(10)]);
        assert_eq!(retired(&log, 13, 2), [iri(11)]);
    }

    #[test]
    fn a_failed_load_is_tried_again_later_not_by_every_call() {
        let log = Log::new(Retention::default());
        assert!(log.claim_load());
        log.loaded(BASE, None);
        assert!(!log.claim_load(), "not right after a failure");
        assert!(retired(&log, 1, 1).is_empty());
    }

    #[test]
    fn what_the_store_could_not_retire_is_retried_first() {
        let log = log(2, 365, Vec::new());
        let _ = retired(&log, 1, 1);
        let _ = retired(&log, 2, 1);
        let failed = log.make_room(at(1));
        assert_eq!(failed.len(), 1);
        log.restore(failed);
        log.add(BASE, &iri(3), at(1));
        assert_eq!(retired(&log, 4, 1), [iri(1), iri(2)], "the failed retirement comes first again");
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

    #[test]
    fn no_caller_name_is_the_anonymous_agent() {
        let base = "urn:trails:kg";
        let anonymous = agent_iri(base, None);
        for name in ["anonymous", "#anonymous", "agent#anonymous", "", "%23anonymous"] {
            assert_ne!(agent_iri(base, Some(name)), anonymous, "{name}");
        }
        assert_eq!(agent_iri(base, Some("ana")), "urn:trails:kg/agent/ana");
    }
}
