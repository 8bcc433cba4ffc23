//! PROV-O provenance of every `tools/call`: one `prov:Activity` per call, in its own named graph
//! `<kg.base>/prov/<trace id>`, with start and end, the caller (`prov:wasAssociatedWith`), the
//! capability id and version, and the instances the call read (`prov:used`), wrote
//! (`prov:generated`) or deleted (`prov:invalidated`). Capability authors never write it: the
//! [`Kg`](super::Kg) handle of a call records what it touches, and the dispatcher writes the
//! activity when the call ends, success or failure. Retention is bounded (count and age).

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

/// Of the oldest activities (sorted oldest first: IRI, start time), those to drop: the first
/// `over` (beyond the count to keep) and any that started before `cutoff`.
pub(crate) fn to_prune(oldest: Vec<(String, String)>, over: usize, cutoff: DateTime<Utc>) -> Vec<String> {
    oldest
        .into_iter()
        .enumerate()
        .filter(|(index, (_, started))| {
            // A start time that does not parse is never "old": only the count can drop it.
            let aged = DateTime::parse_from_rfc3339(started).is_ok_and(|started| started < cutoff);
            *index < over || aged
        })
        .map(|(_, (iri, _))| iri)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
