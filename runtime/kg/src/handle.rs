//! [`Kg`]: what a capability author writes and reads through — create, get, update, delete of
//! typed instances, each validated and integrity-checked by the store, and read-only SPARQL.

use std::fmt::Display;
use std::sync::Arc;

use base64::Engine as _;
use futures_util::StreamExt as _;
use oxrdf::vocab::rdf;
use oxrdf::{NamedNode, Term};
use serde_json::Value;

use super::changes::{Change, ChangeKind, Observer, Observers};
#[cfg(feature = "embedded")]
use super::embedded::EmbeddedStore;
use super::mapping;
use super::provenance::{self, Call, Role, Touched};
use super::store::{self, Check, Row, Store, StoreError, StoreFuture, Triples, Write, WriteError};
use crate::declare::{Blob, Datatype, Effects, NodeType, NodeTypeInfo, WriteOp};
use crate::error::{Error, Result};
use crate::registry::{Reasoning, ToolEntry};
use crate::validate::{FieldCode, FieldError};

/// An instance as stored: its IRI and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored<T> {
    /// `<kg.base>/<Label>/<key>` (or a generated id for node types without a `key`).
    pub iri: String,
    /// The instance.
    pub value: T,
}

/// Whether these are the triples of an instance of `info`'s class.
fn is_a(info: &NodeTypeInfo, triples: &Triples) -> bool {
    triples.iter().any(|(p, o)| p.as_ref() == rdf::TYPE && matches!(o, Term::NamedNode(c) if c.as_str() == info.iri))
}

/// A validated instance, ready to write.
struct Prepared {
    json: Value,
    triples: Triples,
    checks: Vec<Check>,
    blobs: Vec<Blob>,
}

/// A handle on the knowledge graph: cheap to clone, shared by every call.
#[derive(Clone)]
pub struct Kg {
    store: Arc<dyn Store>,
    base: Arc<str>,
    /// What this call touched, for its provenance activity (set by the dispatcher).
    touched: Option<Arc<Touched>>,
    /// Told about every acknowledged write; shared by every clone.
    observers: Arc<Observers>,
    /// Heaviest instance accepted (see [`Kg::with_max_instance_bytes`]).
    max_instance_bytes: usize,
    /// Updates of one instance through this handle (or a clone) take turns: the shard of its IRI
    /// is held for the read-modify-write, so in-process callers never race each other into
    /// conflicts (found by the soak: 64 callers updating one instance exhausted every attempt).
    /// Conflicts with other processes sharing a remote store are still retried.
    update_turns: Arc<[tokio::sync::Mutex<()>]>,
    /// The provenance activities kept, and what retention allows (shared by every clone).
    provenance: Arc<provenance::Log>,
    /// A call's handle: the writes its capability declared, which it is held to.
    held: Option<Arc<Held>>,
    /// What reads of a node type see: under `Rdfs`, the instances of the types that extend it
    /// too (a call's handle: its capability's `reasoning`).
    reasoning: Reasoning,
}

/// What one call's handle may write: its capability's declared effects, and the store as
/// [`Kg::store`] hands it out, refusing writes to any other graph (made the first time it is
/// asked for: most calls never ask).
struct Held {
    capability: &'static str,
    effects: Effects,
    store: std::sync::OnceLock<Arc<dyn Store>>,
}

/// The store under a held handle: reads pass, writes only to the graphs of declared node types.
struct HeldStore {
    inner: Arc<dyn Store>,
    capability: &'static str,
    graphs: Vec<String>,
}

impl Store for HeldStore {
    fn write(&self, write: Write) -> StoreFuture<'_, std::result::Result<(), WriteError>> {
        if self.graphs.iter().any(|graph| graph == write.graph.as_str()) {
            return self.inner.write(write);
        }
        let refused = format!(
            "capability {} wrote to graph {}, which its `side_effects(writes = …)` does not name; nothing was stored",
            self.capability, write.graph
        );
        Box::pin(async move { Err(WriteError::Store(StoreError::Refused(refused))) })
    }

    fn describe(
        &self,
        graph: NamedNode,
        subject: NamedNode,
    ) -> StoreFuture<'_, std::result::Result<Triples, StoreError>> {
        self.inner.describe(graph, subject)
    }

    fn describe_many(
        &self,
        graph: NamedNode,
        subjects: Vec<NamedNode>,
    ) -> StoreFuture<'_, std::result::Result<Vec<Triples>, StoreError>> {
        self.inner.describe_many(graph, subjects)
    }

    fn find(&self, find: store::Find) -> StoreFuture<'_, std::result::Result<store::Found, StoreError>> {
        self.inner.find(find)
    }

    fn select(
        &self,
        query: String,
        bindings: Vec<(String, Term)>,
    ) -> StoreFuture<'_, std::result::Result<Vec<Row>, StoreError>> {
        self.inner.select(query, bindings)
    }

    fn blob(&self, sha256: String) -> StoreFuture<'_, std::result::Result<Option<Blob>, StoreError>> {
        self.inner.blob(sha256)
    }

    fn sqlite_path(&self) -> Option<&std::path::Path> {
        self.inner.sqlite_path()
    }

    fn exclusive(&self) -> bool {
        self.inner.exclusive()
    }
}

/// Shards of [`Kg::update_turns`].
const UPDATE_SHARDS: usize = 64;

impl std::fmt::Debug for Kg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kg").field("base", &self.base).finish_non_exhaustive()
    }
}

/// The default `[kg] base`: instance IRIs are `urn:trails:kg/<Label>/<key>`.
pub const DEFAULT_BASE: &str = trails_pattern::DEFAULT_KG_BASE;

/// A store failure as the internal error a handler returns.
pub fn store_failed(error: StoreError) -> Error {
    Error::internal(format!("knowledge graph: {error}"))
}

/// The write's presence check failed: the instance it changes is not stored (any other
/// `reference` failure — a dangling `Ref`, a delete still referenced — says something else).
fn absent(errors: &[FieldError]) -> bool {
    errors.iter().any(|e| e.code == FieldCode::Reference && e.constraint == serde_json::json!("an existing instance"))
}

fn write_failed(error: WriteError) -> Error {
    match error {
        WriteError::Rejected(errors) => Error::validation(errors),
        WriteError::Conflict => {
            Error::conflict("a write conflicted with concurrent ones until it gave up; try again").retryable()
        }
        WriteError::Store(error) => store_failed(error),
    }
}

/// Before attempt `attempt` (1-based) of a write that lost a race: a random pause of up to
/// 2^attempt ms (at most 128 ms), so writers racing for one instance spread out instead of
/// colliding again in lockstep (found by the soak: 64 callers updating one instance exhausted
/// every attempt without it).
async fn backoff(attempt: usize) {
    let ceiling_ms = 1u64 << attempt.min(7);
    let jitter = (uuid::Uuid::new_v4().as_u128() % u128::from(ceiling_ms * 1000)) as u64;
    tokio::time::sleep(std::time::Duration::from_micros(jitter)).await;
}

/// Most provenance activities one reconciling pass removes, and the page size of reading them:
/// bounded work per pass, and every query far under a remote endpoint's row cap (Virtuoso's
/// `ResultSetMaxRows`, 10,000 on Debian).
pub(crate) const PRUNE_BATCH: usize = 1000;

/// Heaviest instance when `[kg] max_instance_bytes` is unset (see [`Kg::with_max_instance_bytes`]).
pub const DEFAULT_MAX_INSTANCE_BYTES: usize = 256 * 1024;

/// Deletes one pruning pass has in flight at once (a remote store gets this many requests).
const PRUNE_CONCURRENCY: usize = 32;

/// How often an update re-reads and re-applies its change after a concurrent one (and how often
/// a create or delete is re-sent when the store rolled it back for a concurrent transaction).
pub const UPDATE_ATTEMPTS: usize = 8;

impl Kg {
    /// A handle on `store`, naming instances under `base` (an absolute IRI without a trailing `/`).
    pub fn new(store: Arc<dyn Store>, base: impl Into<String>) -> Kg {
        let base: String = base.into();
        Kg {
            store,
            base: base.trim_end_matches('/').into(),
            touched: None,
            observers: Arc::default(),
            max_instance_bytes: DEFAULT_MAX_INSTANCE_BYTES,
            update_turns: (0..UPDATE_SHARDS).map(|_| tokio::sync::Mutex::new(())).collect(),
            provenance: Arc::new(provenance::Log::new(provenance::Retention::default())),
            held: None,
            reasoning: Reasoning::None,
        }
    }

    /// This handle, reading as `reasoning` says: under [`Reasoning::Rdfs`], a query, count or
    /// aggregate over a node type (and a `has` through a reference to one) includes the
    /// instances of every type that `extends` it, each read as the type asked for, from its
    /// own graph; `get_iri` finds them by their own IRIs. `get(key)` still names one type's
    /// instance. A capability's handle reads as its `reasoning` declares.
    pub fn with_reasoning(&self, reasoning: Reasoning) -> Kg {
        Kg { reasoning, ..self.clone() }
    }

    /// What this handle's reads infer ([`Kg::with_reasoning`]).
    pub fn reasoning(&self) -> Reasoning {
        self.reasoning
    }

    /// Refuse instances heavier than `bytes` (`[kg] max_instance_bytes`): the bytes the store
    /// keeps for it — every triple's subject, graph, predicate and object, datatypes included. Blob bytes are stored apart, once, and do not count. A heavier
    /// create or update is a `max_size` FieldError naming its heaviest field, and changes nothing.
    pub fn with_max_instance_bytes(mut self, bytes: usize) -> Kg {
        self.max_instance_bytes = bytes;
        self
    }

    /// Tell `observer` about every write acknowledged through this handle or any clone of it.
    #[doc(hidden)]
    pub fn observe(&self, observer: std::sync::Weak<dyn Observer>) {
        self.observers.add(observer);
    }

    fn changed(&self, node: &'static NodeTypeInfo, iri: &str, kind: ChangeKind) {
        self.observers.tell(Change::Instance { node, iri, kind });
    }

    /// A handle for one call of `tool` that records what it touches, and writes only what `tool`
    /// declared it writes (`side_effects(…)`; anything, when it declared none).
    pub(crate) fn recording(&self, tool: &ToolEntry) -> (Kg, Arc<Touched>) {
        let touched = Arc::new(Touched::default());
        let held = match tool.effects() {
            Effects::Undeclared => None,
            effects => Some(Arc::new(Held { capability: tool.id(), effects, store: std::sync::OnceLock::new() })),
        };
        (Kg { touched: Some(touched.clone()), held, reasoning: tool.reasoning(), ..self.clone() }, touched)
    }

    /// `Ok` when this handle may `op` an instance of `node`: a call's handle refuses what its
    /// capability did not declare, before anything is read or stored.
    fn may(&self, node: &NodeTypeInfo, op: WriteOp) -> Result<()> {
        let Some(held) = &self.held else { return Ok(()) };
        // The detail is the author's to read: logged with the call's trace id, as every internal
        // error's is.
        held.effects.allows(held.capability, node, op).map_err(Error::internal)
    }

    fn touch(&self, role: Role, iri: &str) {
        if let Some(touched) = &self.touched {
            touched.record(role, iri);
        }
    }

    /// An embedded store in a temporary directory (removed with the last handle): for tests.
    #[cfg(feature = "embedded")]
    pub fn temporary() -> std::result::Result<Kg, StoreError> {
        Ok(Kg::new(Arc::new(EmbeddedStore::temporary()?), DEFAULT_BASE))
    }

    /// The base IRI of instances.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The store behind this handle. Crate-private: capability code writes only through the
    /// typed, validated API, and never writes provenance.
    #[doc(hidden)]
    pub fn store(&self) -> &Arc<dyn Store> {
        let Some(held) = &self.held else { return &self.store };
        held.store.get_or_init(|| {
            Arc::new(HeldStore {
                inner: self.store.clone(),
                capability: held.capability,
                graphs: held.effects.writes().iter().map(|node| mapping::graph_iri(&self.base, node.label)).collect(),
            })
        })
    }

    fn graph(&self, info: &NodeTypeInfo) -> NamedNode {
        NamedNode::new_unchecked(mapping::graph_iri(&self.base, info.label))
    }

    /// The IRI of `T`'s instance with key `key`.
    pub fn iri<T: NodeType>(&self, key: impl Display) -> String {
        mapping::instance_iri(&self.base, T::INFO.label, &key.to_string())
    }

    fn key_of(info: &NodeTypeInfo, value: &Value) -> Option<String> {
        let key = value.get(info.key?)?;
        Some(key.as_str().map(str::to_owned).unwrap_or_else(|| key.to_string()))
    }

    /// Validate `value` like tool input, map it to triples and list the checks its references
    /// and unique groups need.
    fn prepare<T: NodeType>(&self, value: &T) -> Result<Prepared> {
        let info = T::INFO;
        let json = serde_json::to_value(value).map_err(Error::internal)?;
        let errors = T::validate(&json);
        if !errors.is_empty() {
            return Err(Error::validation(errors));
        }
        let mapping::Mapped { triples, blobs } = mapping::triples(info, &json).map_err(Error::validation)?;
        let mut checks = Vec::new();
        for predicate in info.all_predicates().into_iter().filter(|p| p.datatype == Datatype::Iri) {
            let Some(target) = predicate.target() else { continue };
            let class = NamedNode::new_unchecked(target.iri);
            let values: Vec<(String, &Value)> = match json.get(predicate.field) {
                Some(Value::Array(items)) => {
                    items.iter().enumerate().map(|(i, v)| (format!("{}/{i}", predicate.field), v)).collect()
                }
                Some(Value::Null) | None => Vec::new(),
                Some(value) => vec![(predicate.field.to_owned(), value)],
            };
            for (field, value) in values {
                if let Some(iri) = value.as_str() {
                    let target = NamedNode::new(iri).map_err(|e| {
                        Error::validation(vec![FieldError {
                            field: field.clone(),
                            code: FieldCode::Reference,
                            message: format!("{field} is not an IRI the store accepts: {e}"),
                            value: value.clone(),
                            constraint: serde_json::json!({ "class": target.iri }),
                        }])
                    })?;
                    checks.push(Check::Reference { field, target, class: class.clone() });
                }
            }
        }
        let mut class = Some(info);
        while let Some(node) = class {
            if !node.unique.is_empty() {
                let mut fields = Vec::with_capacity(node.unique.len());
                for name in node.unique {
                    let Some(predicate) = mapping::predicate(info, name) else {
                        return Err(Error::internal(format!(
                            "unique field `{name}` of {} has no predicate",
                            node.label
                        )));
                    };
                    // An absent field constrains nothing (as SQL's NULLs): the group is skipped.
                    let Some(value) = json.get(*name).filter(|v| !v.is_null()) else {
                        fields.clear();
                        break;
                    };
                    let term = mapping::term(predicate, name, value).map_err(|e| Error::validation(vec![e]))?;
                    fields.push(((*name).to_owned(), NamedNode::new_unchecked(predicate.iri), term));
                }
                if !fields.is_empty() {
                    // The declaring type's class: instances of its subtypes (other graphs) count too.
                    checks.push(Check::Unique { class: NamedNode::new_unchecked(node.iri), fields });
                }
            }
            class = node.parent;
        }
        Ok(Prepared { json, triples, checks, blobs })
    }

    /// The value as the store gives it back (list items in their stored order), so what a write
    /// returns is what a read returns. Blob fields get their bytes from `known` (the write's
    /// own) or from the store.
    async fn stored_form<T: NodeType>(
        &self,
        info: &NodeTypeInfo,
        triples: &Triples,
        iri: &str,
        known: &[Blob],
    ) -> Result<T> {
        let mut json = mapping::instance(info, triples);
        for predicate in info.all_predicates().into_iter().filter(|p| p.datatype == Datatype::Blob) {
            let shown: Vec<&mut Value> = match json.get_mut(predicate.field) {
                Some(Value::Array(items)) => items.iter_mut().collect(),
                Some(Value::Null) | None => Vec::new(),
                Some(one) => vec![one],
            };
            for shown in shown {
                let Some(sha256) = shown.get("sha256").and_then(Value::as_str).map(str::to_owned) else { continue };
                let blob =
                    match known.iter().find(|blob| blob.sha256() == sha256) {
                        Some(blob) => blob.clone(),
                        None => self.store.blob(sha256.clone()).await.map_err(store_failed)?.ok_or_else(|| {
                            Error::internal(format!("blob {sha256} of {iri} is missing from the store"))
                        })?,
                    };
                shown["base64"] = Value::String(base64::engine::general_purpose::STANDARD.encode(blob.bytes()));
            }
        }
        serde_json::from_value(json)
            .map_err(|e| Error::internal(format!("{} at {iri} does not read back: {e}", info.label)))
    }

    /// Store a new instance. Fails with `-32602` FieldErrors (and changes nothing) when it breaks
    /// a declared constraint, its key or a `unique` group is taken, or a `Ref` points at nothing.
    pub async fn create<T: NodeType>(&self, value: T) -> Result<Stored<T>> {
        let info = T::INFO;
        self.may(info, WriteOp::Create)?;
        let Prepared { json, triples, mut checks, blobs } = self.prepare(&value)?;
        let iri = match Kg::key_of(info, &json) {
            Some(key) => mapping::instance_iri(&self.base, info.label, &key),
            None => mapping::instance_iri(&self.base, info.label, &uuid::Uuid::new_v4().to_string()),
        };
        let key = Kg::key_of(info, &json).map(Value::String).unwrap_or_else(|| Value::String(iri.clone()));
        checks.push(Check::Absent { field: info.key.unwrap_or_default().to_owned(), value: key });
        let subject = NamedNode::new(&iri).map_err(Error::internal)?;
        self.check_weight(info, &json, &iri, &triples)?;
        let stored = self.stored_form::<T>(info, &triples, &iri, &blobs).await?;
        let write = Write { graph: self.graph(info), subject, triples, checks, blobs };
        self.apply(write).await?;
        self.touch(Role::Generated, &iri);
        self.changed(info, &iri, ChangeKind::Created);
        Ok(Stored { iri, value: stored })
    }

    /// The instance at `iri`, if there is one of type `T`.
    pub async fn get_iri<T: NodeType>(&self, iri: &str) -> Result<Option<Stored<T>>> {
        let Ok(subject) = NamedNode::new(iri) else { return Ok(None) };
        Ok(self.get_many(vec![subject]).await?.pop())
    }

    /// The instances at `iris` that are `T`s, each once, in the order first given (what is not
    /// there, or not a `T`, is left out), read together: one store request where
    /// `iri` per row would be one each — e.g. the owners a page of tasks refers to.
    pub async fn get_iris<T: NodeType>(
        &self,
        iris: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Result<Vec<Stored<T>>> {
        let mut seen = std::collections::HashSet::new();
        let subjects: Vec<NamedNode> = iris
            .into_iter()
            .filter_map(|iri| NamedNode::new(iri.as_ref()).ok())
            .filter(|subject| seen.insert(subject.clone()))
            .collect();
        self.get_many(subjects).await
    }

    /// The instances at `subjects` that are `T`s, in order (one store request for the page; one
    /// per graph when, under `rdfs`, some are of types that extend `T`).
    pub(crate) async fn get_many<T: NodeType>(&self, subjects: Vec<NamedNode>) -> Result<Vec<Stored<T>>> {
        let info = T::INFO;
        let mut described: Vec<Option<Triples>> = vec![None; subjects.len()];
        let own = |subject: &NamedNode| match self.reasoning {
            Reasoning::Rdfs => mapping::own_type(&self.base, info, subject.as_str()),
            Reasoning::None => info,
        };
        let mut graphs: Vec<&NodeTypeInfo> = Vec::new();
        for subject in &subjects {
            let node = own(subject);
            if !graphs.iter().any(|seen| seen.iri == node.iri) {
                graphs.push(node);
            }
        }
        for node in graphs {
            let (at, these): (Vec<usize>, Vec<NamedNode>) = subjects
                .iter()
                .enumerate()
                .filter(|(_, subject)| own(subject).iri == node.iri)
                .map(|(n, subject)| (n, subject.clone()))
                .unzip();
            let read = self.store.describe_many(self.graph(node), these).await.map_err(store_failed)?;
            for (n, triples) in at.into_iter().zip(read) {
                described[n] = Some(triples);
            }
        }
        let mut items = Vec::with_capacity(subjects.len());
        for (subject, triples) in subjects.into_iter().zip(described) {
            // Not a `T` (or deleted between the two reads of a page): simply not there. An
            // instance of a type that extends `T` is one (the store writes both classes).
            let triples = triples.unwrap_or_default();
            if !is_a(info, &triples) {
                continue;
            }
            let iri = subject.as_str();
            let value = self.stored_form(info, &triples, iri, &[]).await?;
            self.touch(Role::Used, iri);
            items.push(Stored { iri: iri.to_owned(), value });
        }
        Ok(items)
    }

    /// Apply a write whose checks do not depend on what the caller read: a conflict (the store
    /// rolled it back for a concurrent transaction) is retried as it is; the checks are evaluated
    /// afresh each time.
    async fn apply(&self, write: Write) -> Result<()> {
        self.retrying(write).await.map_err(write_failed)
    }

    /// One write to the store, in a span of its own (a child of the call's: the time a call
    /// spends committing shows in its trace).
    fn write_traced(
        &self,
        write: Write,
    ) -> impl std::future::Future<Output = std::result::Result<(), WriteError>> + '_ {
        let span = tracing::debug_span!(target: trails_core::SPANS, "kg.write", graph = write.graph.as_str(), triples = write.triples.len());
        tracing::Instrument::instrument(self.store.write(write), span)
    }

    /// [`Kg::apply`] with the store's own error.
    async fn retrying(&self, write: Write) -> std::result::Result<(), WriteError> {
        for attempt in 1..UPDATE_ATTEMPTS {
            match self.write_traced(write.clone()).await {
                Err(WriteError::Conflict) => backoff(attempt).await,
                done => return done,
            }
        }
        self.write_traced(write).await
    }

    /// Refuse an instance heavier than the bound, naming the heaviest field. The weight is what
    /// the store keeps: each triple's subject, graph, predicate and object (a literal's datatype
    /// IRI included) — a long key repeated on every triple counts every time.
    fn check_weight(&self, info: &NodeTypeInfo, json: &Value, subject: &str, triples: &Triples) -> Result<()> {
        let per_triple = subject.len() + self.graph(info).as_str().len();
        let weight_of = |(predicate, object): &(NamedNode, Term)| {
            per_triple
                + predicate.as_str().len()
                + match object {
                    Term::Literal(literal) => literal.value().len() + literal.datatype().as_str().len(),
                    Term::NamedNode(node) => node.as_str().len(),
                    other => other.to_string().len(),
                }
        };
        let weight: usize = triples.iter().map(weight_of).sum();
        if weight <= self.max_instance_bytes {
            return Ok(());
        }
        let predicates = info.all_predicates();
        let heaviest = predicates
            .iter()
            .map(|p| (p, triples.iter().filter(|(q, _)| q.as_str() == p.iri).map(weight_of).sum::<usize>()))
            .max_by_key(|(_, weight)| *weight);
        let (field, field_weight) = heaviest.map(|(p, w)| (p.field, w)).unwrap_or_default();
        Err(Error::validation(vec![FieldError {
            field: field.to_owned(),
            code: FieldCode::MaxSize,
            message: format!(
                "the {} weighs {weight} bytes ({field} alone {field_weight}); the store keeps at most {} per \
                 instance ([kg] max_instance_bytes): send less, or store large content as a Blob",
                info.label, self.max_instance_bytes
            ),
            value: crate::validate::echo(json.get(field).unwrap_or(&Value::Null)),
            constraint: serde_json::json!({ "max_instance_bytes": self.max_instance_bytes }),
        }]))
    }

    /// `T`'s instance with key `key`.
    pub async fn get<T: NodeType>(&self, key: impl Display) -> Result<Option<Stored<T>>> {
        self.get_iri(&self.iri::<T>(key)).await
    }

    /// Nothing to change or delete: a well-formed call for an instance that does not exist is
    /// the caller's to act on (`not_found`), not an argument error.
    fn missing(info: &NodeTypeInfo, iri: &str) -> Error {
        Error::not_found(format!("there is no {} at {iri}", info.label))
    }

    /// Change the instance at `iri` with `change`; validated and checked like a create. The key
    /// cannot change (it is the identity): delete and create instead. The write applies only if
    /// the instance is still as it was read; after a concurrent change, `change` runs again on the
    /// fresh value (at most [`UPDATE_ATTEMPTS`] times), so no update is silently lost.
    pub async fn update_iri<T: NodeType>(&self, iri: &str, mut change: impl FnMut(&mut T)) -> Result<Stored<T>> {
        let info = T::INFO;
        self.may(info, WriteOp::Update)?;
        let subject = NamedNode::new(iri).map_err(|_| Kg::missing(info, iri))?;
        let shard = {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            iri.hash(&mut hasher);
            (hasher.finish() % UPDATE_SHARDS as u64) as usize
        };
        let _turn = self.update_turns[shard].lock().await;
        for attempt in 0..UPDATE_ATTEMPTS {
            if attempt > 0 {
                backoff(attempt).await;
            }
            let before = self.store.describe(self.graph(info), subject.clone()).await.map_err(store_failed)?;
            if !is_a(info, &before) {
                return Err(Kg::missing(info, iri));
            }
            let current = mapping::instance(info, &before);
            let mut value: T = self.stored_form(info, &before, iri, &[]).await?;
            change(&mut value);
            let Prepared { json, triples, mut checks, blobs } = self.prepare(&value)?;
            self.check_weight(info, &json, iri, &triples)?;
            if let Some(key) = info.key.filter(|k| current.get(*k) != json.get(*k)) {
                return Err(Error::validation(vec![FieldError {
                    field: key.to_owned(),
                    code: FieldCode::Unique,
                    message: format!("{key} names the instance and cannot change; delete it and create a new one"),
                    value: json.get(key).cloned().unwrap_or_default(),
                    constraint: current.get(key).cloned().unwrap_or_default(),
                }]));
            }
            let key =
                current.get(info.key.unwrap_or_default()).cloned().unwrap_or_else(|| Value::String(iri.to_owned()));
            checks.push(Check::Present { field: info.key.unwrap_or_default().to_owned(), value: key });
            checks.push(Check::Unchanged { before });
            let stored = self.stored_form::<T>(info, &triples, iri, &blobs).await?;
            let write = Write { graph: self.graph(info), subject: subject.clone(), triples, checks, blobs };
            match self.write_traced(write).await {
                Ok(()) => {
                    self.touch(Role::Used, iri);
                    self.touch(Role::Generated, iri);
                    self.changed(info, iri, ChangeKind::Updated);
                    return Ok(Stored { iri: iri.to_owned(), value: stored });
                }
                Err(WriteError::Conflict) => {}
                // Deleted between the read and the write.
                Err(WriteError::Rejected(errors)) if absent(&errors) => return Err(Kg::missing(info, iri)),
                Err(error) => return Err(write_failed(error)),
            }
        }
        Err(Error::conflict(format!(
            "{iri} kept changing concurrently; the update gave up after {UPDATE_ATTEMPTS} attempts: try again"
        ))
        .retryable())
    }

    /// Change `T`'s instance with key `key` (see [`Kg::update_iri`]).
    pub async fn update<T: NodeType>(&self, key: impl Display, change: impl FnMut(&mut T)) -> Result<Stored<T>> {
        self.update_iri(&self.iri::<T>(key), change).await
    }

    /// Remove the instance at `iri`. Refused while other instances refer to it.
    pub async fn delete_iri<T: NodeType>(&self, iri: &str) -> Result<()> {
        let info = T::INFO;
        self.may(info, WriteOp::Delete)?;
        let subject = NamedNode::new(iri).map_err(|_| Kg::missing(info, iri))?;
        let field = info.key.unwrap_or_default().to_owned();
        let provenance = NamedNode::new_unchecked(format!("{}/prov/", self.base));
        let value = Value::String(iri.to_owned());
        let checks = vec![Check::Present { field, value }, Check::Unreferenced { ignore_graphs: provenance }];
        let write = Write { graph: self.graph(info), subject, triples: Vec::new(), checks, blobs: Vec::new() };
        match self.retrying(write).await {
            Ok(()) => {}
            // The presence check failed (checked atomically with the delete): nothing to delete.
            Err(WriteError::Rejected(errors)) if absent(&errors) => return Err(Kg::missing(info, iri)),
            Err(error) => return Err(write_failed(error)),
        }
        self.touch(Role::Invalidated, iri);
        self.changed(info, iri, ChangeKind::Deleted);
        Ok(())
    }

    /// Remove `T`'s instance with key `key`.
    pub async fn delete<T: NodeType>(&self, key: impl Display) -> Result<()> {
        self.delete_iri::<T>(&self.iri::<T>(key)).await
    }

    /// Keep at most `retention.keep` provenance activities (at least the newest), none older than
    /// `retention.max_age` (`[kg] provenance_keep`, `provenance_max_age_days`; by default 100,000
    /// and 90 days).
    #[doc(hidden)]
    pub fn with_provenance_retention(mut self, retention: provenance::Retention) -> Kg {
        self.provenance = Arc::new(provenance::Log::new(retention));
        self
    }

    /// Reconcile provenance (retire what other processes recorded) only while holding `lease`:
    /// one replica at a time, for replicas sharing a store. Shared by every clone; set once.
    #[doc(hidden)]
    pub fn prune_under(&self, lease: Arc<dyn provenance::PruneLease>) {
        let _ = self.provenance.lease.set(lease);
    }

    /// Activities retired since start.
    #[doc(hidden)]
    pub fn provenance_pruned(&self) -> u64 {
        self.provenance.pruned.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Write the provenance activity of a finished call (see `provenance`), durable before this
    /// returns, and in the same breath retire the activities retention no longer allows (on the
    /// embedded store usually in the same write batch), so the log never grows past its bound by
    /// more than the calls in flight.
    pub(crate) async fn record_activity(
        &self,
        call: &Call<'_>,
        touched: &Touched,
    ) -> std::result::Result<(), StoreError> {
        let write = provenance::activity(&self.base, call, touched)?;
        let (kg, started) = (self.clone(), call.started);
        // A task of its own: a caller that goes away mid-call (a client hanging up on `/invoke`)
        // must not leave an activity stored but unknown to the log, nor retirements taken from
        // the log but never deleted.
        // In the call's span: its store write belongs to the call's trace.
        tokio::spawn(tracing::Instrument::in_current_span(async move { kg.record_and_retire(write, started).await }))
            .await
            .map_err(|error| StoreError::Engine(format!("recording provenance: {error}")))?
    }

    async fn record_and_retire(
        &self,
        write: Write,
        started: chrono::DateTime<chrono::Utc>,
    ) -> std::result::Result<(), StoreError> {
        if self.provenance.claim_load() {
            // In the background: calls record meanwhile (and retire nothing until it is done).
            let kg = self.clone();
            tokio::spawn(async move {
                let found = kg.oldest_activities(None).await;
                if let Err(error) = &found {
                    tracing::error!(%error, "could not read the stored provenance activities; retention waits until they are read");
                }
                kg.provenance.loaded(&kg.base, found.ok());
            });
        }
        let iri = write.subject.as_str().to_owned();
        let retired = self.provenance.make_room(chrono::Utc::now());
        let record = async {
            self.retrying(write).await.map_err(|error| match error {
                WriteError::Store(error) => error,
                WriteError::Rejected(errors) => StoreError::Engine(format!("provenance write rejected: {errors:?}")),
                WriteError::Conflict => StoreError::Engine("provenance write conflicted".into()),
            })
        };
        let retire =
            futures_util::future::join_all(retired.iter().map(|kept| self.delete_activity(&kept.iri(&self.base))));
        let (recorded, retirements) = futures_util::future::join(record, retire).await;
        let mut failed = Vec::new();
        let mut dropped = 0;
        for (kept, outcome) in retired.into_iter().zip(retirements) {
            match outcome {
                Ok(()) => dropped += 1,
                // Already gone (another process pruned it): the log holds only stored activities.
                Err(WriteError::Rejected(_)) => {}
                Err(error) => {
                    tracing::warn!(?error, "retiring a provenance activity failed; a later call retries");
                    failed.push(kept);
                }
            }
        }
        self.provenance.restore(failed);
        self.provenance.pruned.fetch_add(dropped, std::sync::atomic::Ordering::Relaxed);
        if let Err(error) = recorded {
            self.provenance.abandon();
            return Err(error);
        }
        self.provenance.add(&self.base, &iri, started);
        self.observers.tell(Change::Activity);
        if dropped > 0 {
            self.observers.tell(Change::Pruned);
        }
        self.reconcile_now_and_then();
        Ok(())
    }

    /// Now and then (every `keep` calls, at least 1,000), one pass over the whole log, in the
    /// background: it retires what this process does not know of — activities other processes
    /// sharing a remote store recorded — oldest first, down to `keep` in all.
    fn reconcile_now_and_then(&self) {
        use std::sync::atomic::Ordering;
        let log = &self.provenance;
        if self.store.exclusive() {
            return;
        }
        let every = log.retention().keep.max(1000);
        if log.since_reconcile.fetch_add(1, Ordering::Relaxed) + 1 < every
            || log.reconciling.swap(true, Ordering::AcqRel)
        {
            return;
        }
        log.since_reconcile.store(0, Ordering::Relaxed);
        let kg = self.clone();
        tokio::spawn(async move {
            let retention = kg.provenance.retention();
            loop {
                // Held (renewed) for every batch: a pass that outlasts it stops.
                if let Some(lease) = kg.provenance.lease.get() {
                    if !lease.hold().await {
                        break;
                    }
                }
                match kg.prune_provenance(retention.keep, retention.max_age).await {
                    Ok(dropped) => {
                        kg.provenance.pruned.fetch_add(dropped as u64, Ordering::Relaxed);
                        if dropped < PRUNE_BATCH {
                            break;
                        }
                    }
                    Err(error) => {
                        tracing::error!(%error, "pruning provenance failed");
                        break;
                    }
                }
            }
            kg.provenance.reconciling.store(false, Ordering::Release);
        });
    }

    /// Every stored activity with its start time, oldest first (`limit`: the oldest so many). A
    /// store other processes share is read in pages its row cap does not cut; the embedded one
    /// in one query (paging by offset would sort the whole log once per page).
    async fn oldest_activities(&self, limit: Option<usize>) -> std::result::Result<Vec<(String, String)>, StoreError> {
        let most_per_page = if self.store.exclusive() { usize::MAX } else { PRUNE_BATCH };
        let mut found: Vec<(String, String)> = Vec::new();
        loop {
            let page = limit.unwrap_or(usize::MAX).saturating_sub(found.len()).min(most_per_page);
            if page == 0 {
                break;
            }
            let paging = match page {
                usize::MAX => String::new(),
                page => format!("LIMIT {page} OFFSET {}", found.len()),
            };
            let query = format!(
                "SELECT ?a ?t WHERE {{ GRAPH ?a {{ ?a a <{PROV}Activity> ; <{PROV}startedAtTime> ?t }} }} \
                 ORDER BY ?t ?a {paging}",
                PROV = provenance::PROV,
            );
            let rows = self.store.select(query, Vec::new()).await?;
            let got = rows.len();
            found.extend(rows.into_iter().filter_map(|row| {
                let iri = store::bound_iri(&row, "a")?.into_string();
                Some((iri, store::bound_text(&row, "t")?.to_owned()))
            }));
            if got < page {
                break;
            }
        }
        Ok(found)
    }

    /// Delete the activity whose graph is `iri` (refused as a violation when it is not there).
    fn delete_activity(&self, iri: &str) -> StoreFuture<'_, std::result::Result<(), WriteError>> {
        let node = NamedNode::new_unchecked(iri);
        let present = Check::Present { field: String::new(), value: Value::String(iri.to_owned()) };
        self.store.write(Write {
            graph: node.clone(),
            subject: node,
            triples: Vec::new(),
            checks: vec![present],
            blobs: Vec::new(),
        })
    }

    /// Drop activities beyond the newest `keep` and those older than `max_age`, oldest first and
    /// at most [`PRUNE_BATCH`] per pass; how many went.
    pub(crate) async fn prune_provenance(
        &self,
        keep: usize,
        max_age: chrono::Duration,
    ) -> std::result::Result<usize, StoreError> {
        let activity =
            format!("GRAPH ?a {{ ?a a <{PROV}Activity> ; <{PROV}startedAtTime> ?t }}", PROV = provenance::PROV);
        let count = self.store.select(format!("SELECT (COUNT(?a) AS ?n) WHERE {{ {activity} }}"), Vec::new()).await?;
        let total = store::count_of(&count);
        let oldest = self.oldest_activities(Some(PRUNE_BATCH)).await?;
        let doomed = provenance::to_prune(oldest, total.saturating_sub(keep), chrono::Utc::now() - max_age);
        // Many deletes in flight at once: the embedded store commits them in batches (one fsync
        // each), so a pass keeps up with any call rate instead of paying a commit per activity.
        let deletes: Vec<_> = doomed.iter().map(|iri| self.delete_activity(iri)).collect();
        let mut outcomes = futures_util::stream::iter(deletes).buffer_unordered(PRUNE_CONCURRENCY);
        let mut dropped = 0;
        while let Some(outcome) = outcomes.next().await {
            match outcome {
                Ok(()) => dropped += 1,
                // Already gone (another replica pruned it) or busy: the next pass sees it again.
                Err(WriteError::Rejected(_) | WriteError::Conflict) => {}
                Err(WriteError::Store(error)) => return Err(error),
            }
        }
        if dropped > 0 {
            self.observers.tell(Change::Pruned);
        }
        Ok(dropped)
    }

    /// A read-only SPARQL query (SELECT or ASK). `bindings` are substituted as RDF terms by the
    /// engine, never spliced into the text. Each row maps variable names to terms. A query that
    /// names no dataset (no `FROM`) reads the union of the store's graphs as its default
    /// graph — so `?s a ex:Task` finds the tasks without `GRAPH ?g { … }` — and `GRAPH` reaches
    /// each named graph.
    pub async fn sparql(&self, query: &str, bindings: &[(&str, Term)]) -> Result<Vec<Row>> {
        let bindings = bindings.iter().map(|(name, term)| ((*name).to_owned(), term.clone())).collect();
        self.store.select(query.to_owned(), bindings).await.map_err(|error| match error {
            StoreError::Query(message) => Error::validation(vec![FieldError {
                field: "query".into(),
                code: FieldCode::Type,
                message,
                value: Value::String(query.chars().take(200).collect()),
                constraint: serde_json::json!("a SPARQL 1.1 SELECT or ASK query"),
            }]),
            other => store_failed(other),
        })
    }
}
