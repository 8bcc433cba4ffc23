//! The `Store` trait: what any backend (the embedded one, a remote SPARQL endpoint) must do. A
//! write is one subject's new triples plus the integrity checks that must hold for it, applied
//! atomically: either every check passes and the write is durable, or nothing changes.

use std::future::Future;
use std::pin::Pin;

use oxrdf::{NamedNode, Term};

use crate::validate::FieldError;

/// An instance's (predicate, object) pairs.
pub type Triples = Vec<(NamedNode, Term)>;

/// One solution of a SPARQL SELECT: (variable, value) for each bound variable.
pub type Row = Vec<(String, Term)>;

/// The value `variable` has in `row`, if bound.
pub fn bound<'a>(row: &'a Row, variable: &str) -> Option<&'a Term> {
    row.iter().find(|(name, _)| name == variable).map(|(_, term)| term)
}

/// The IRI `variable` has in `row`, if it is one.
pub fn bound_iri(row: &Row, variable: &str) -> Option<NamedNode> {
    match bound(row, variable)? {
        Term::NamedNode(node) => Some(node.clone()),
        _ => None,
    }
}

/// The literal's text `variable` has in `row`, if it is one.
pub fn bound_text<'a>(row: &'a Row, variable: &str) -> Option<&'a str> {
    match bound(row, variable)? {
        Term::Literal(literal) => Some(literal.value()),
        _ => None,
    }
}

/// The count in variable `n` of a `SELECT (COUNT(…) AS ?n)` (0 when absent).
pub fn count_of(rows: &[Row]) -> usize {
    rows.first().and_then(|row| bound_text(row, "n")).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// A blob read back from a store, checked: the bytes must still hash to the SHA-256 they are
/// stored under (a store changed outside Trails, or a corrupted file, is an error, not data).
pub fn stored_blob(sha256: &str, media_type: &str, bytes: Vec<u8>) -> Result<trails_core::Blob, StoreError> {
    let corrupt = |why: String| StoreError::Corrupt(format!("blob {sha256}: {why}"));
    let blob = trails_core::Blob::new(media_type, bytes).map_err(|e| corrupt(e.to_string()))?;
    if blob.sha256() != sha256 {
        return Err(corrupt(format!("the bytes hash to {}", blob.sha256())));
    }
    Ok(blob)
}

/// The future a store operation returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One atomic change to one instance.
#[derive(Debug, Clone)]
pub struct Write {
    /// The named graph the instance lives in.
    pub graph: NamedNode,
    /// The instance.
    pub subject: NamedNode,
    /// The instance's triples after the write (`rdf:type` included); empty deletes it. A write
    /// that carries [`Check::Present`] replaces every triple the subject had; any other write is a
    /// creation and carries [`Check::Absent`] (a store may skip removing triples there, as the
    /// remote one does: Virtuoso drops a whole `DELETE … WHERE { OPTIONAL … }` that matches
    /// nothing).
    pub triples: Triples,
    /// What must hold, checked against the store as it is when the write applies.
    pub checks: Vec<Check>,
    /// The bytes of the instance's [`trails_core::Blob`] fields, stored content-addressed in the same
    /// atomic write (bytes the store holds already are kept once). Never removed by a later
    /// write: another instance may hold the same bytes.
    pub blobs: Vec<trails_core::Blob>,
}

/// An integrity condition of a write.
#[derive(Debug, Clone)]
pub enum Check {
    /// The instance must not exist yet (a create). `field` names the key field for the error.
    Absent {
        /// The key field (or empty when the IRI was generated).
        field: String,
        /// The key value as sent (echoed in the error).
        value: serde_json::Value,
    },
    /// The instance must exist (an update or delete).
    Present {
        /// The key field (or empty).
        field: String,
        /// The key value as sent (echoed in the error).
        value: serde_json::Value,
    },
    /// No *other* instance of `class` (in any graph: subtypes live in their own) may have these
    /// values for these predicates together.
    Unique {
        /// The node type's class.
        class: NamedNode,
        /// (field name, predicate, value) for each field of the group.
        fields: Vec<(String, NamedNode, Term)>,
    },
    /// `target` must be an instance of `class` (a `Ref<T>` value).
    Reference {
        /// The field path (`owner`, `reviewers/2`).
        field: String,
        /// The referenced IRI.
        target: NamedNode,
        /// The class `T`'s instances have.
        class: NamedNode,
    },
    /// The subject's triples must still be exactly these (an update's read-modify-write: a
    /// concurrent change in between makes the write a [`WriteError::Conflict`]).
    Unchanged {
        /// The triples the update started from.
        before: Triples,
    },
    /// No instance may point at the subject (a delete would leave dangling references).
    /// References from graphs under `ignore_graphs` (provenance: records, not owners) do not count.
    Unreferenced {
        /// A graph IRI prefix whose references are ignored.
        ignore_graphs: NamedNode,
    },
}

/// How hard SQLite syncs a commit (`[kg] synchronous`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Synchronous {
    /// fsync on every commit: an acknowledged write survives power loss (the default).
    #[default]
    Full,
    /// fsync at WAL checkpoints only: survives a process crash (`kill -9`), not power loss.
    Normal,
}

impl Synchronous {
    #[cfg_attr(not(feature = "embedded"), allow(dead_code))]
    pub(crate) fn pragma(self) -> &'static str {
        match self {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        }
    }
}

/// The most triples one write to a remote store may hold: the update is one operation (so it
/// applies whole), and Virtuoso 7 refuses an operation beyond roughly 1,000–2,000 template
/// triples. Provenance keeps each activity within it, whichever store is built in.
#[doc(hidden)]
pub const MAX_WRITE_TRIPLES: usize = 1000;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite (the embedded store's source of truth).
    #[error("SQLite: {0}")]
    Sqlite(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The in-memory RDF engine.
    #[error("RDF engine: {0}")]
    Engine(String),
    /// The data directory.
    #[error("{what} {path}: {source}", path = path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A call's handle refused a write its capability did not declare (see `side_effects`).
    #[error("{0}")]
    Refused(String),
    /// Stored data that does not parse (a corrupted file, or a change outside Trails).
    #[error("stored data is not valid RDF: {0}")]
    Corrupt(String),
    /// A remote endpoint failed or answered an error (the message never holds credentials).
    #[error("remote store: {0}")]
    Remote(String),
    /// A SPARQL query that does not parse or cannot run.
    #[error("SPARQL: {0}")]
    Query(String),
    /// Another store (in this or another process) has the data directory open: two engines on
    /// one SQLite file would each check integrity against their own view.
    #[error("{} is in use by another store (another server on the same `[kg] path`?); give each server its own", path.display())]
    Locked {
        /// The data directory.
        path: std::path::PathBuf,
    },
    /// The store's writer is gone (the process is shutting down).
    #[error("the store is closed")]
    Closed,
    /// One write holds more triples than the store applies atomically (refused whole, before
    /// anything is sent: splitting it would give up atomicity).
    #[error("the instance is {triples} triples; this store writes at most {max} in one atomic write (bound its lists with max_count)")]
    TooLarge {
        /// The write's triples.
        triples: usize,
        /// The store's bound.
        max: usize,
    },
}

/// Why a write did not happen.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// An integrity check failed: nothing was written.
    #[error("the write breaks {} integrity rule(s)", .0.len())]
    Rejected(Vec<FieldError>),
    /// The instance changed since it was read (see [`Check::Unchanged`]): nothing was written.
    #[error("the instance changed concurrently")]
    Conflict,
    /// The store failed: nothing was acknowledged.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A page of a node type's instances.
#[derive(Debug, Clone)]
pub struct Find {
    /// The graphs its instances are in: the node type's, and those of the types that extend it
    /// when they are read too (each instance is in one).
    pub graphs: Vec<NamedNode>,
    /// Its class.
    pub class: NamedNode,
    /// Every (predicate, value) must be present.
    pub filters: Vec<(NamedNode, Term)>,
    /// At most this many.
    pub limit: usize,
    /// Skip this many.
    pub offset: usize,
    /// Only subjects whose IRI sorts after this one (a cursor: pages stay exact while writes
    /// land between them). Pages are in IRI order; a sorted page is the typed query's.
    pub after: Option<NamedNode>,
}

/// What [`Find`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The page, in order.
    pub subjects: Vec<NamedNode>,
    /// How many match in all.
    pub total: usize,
}

/// A knowledge-graph backend.
pub trait Store: Send + Sync + 'static {
    /// Apply `write` atomically with its checks; durable when it returns `Ok`.
    fn write(&self, write: Write) -> StoreFuture<'_, Result<(), WriteError>>;

    /// Every (predicate, object) of `subject` in `graph`.
    fn describe(
        &self,
        graph: NamedNode,
        subject: NamedNode,
    ) -> StoreFuture<'_, Result<Vec<(NamedNode, Term)>, StoreError>>;

    /// Every (predicate, object) of each of `subjects` in `graph`, in the order given (a page of
    /// instances). The default asks [`Store::describe`] per subject; remote stores answer in one
    /// request.
    fn describe_many(
        &self,
        graph: NamedNode,
        subjects: Vec<NamedNode>,
    ) -> StoreFuture<'_, Result<Vec<Triples>, StoreError>> {
        Box::pin(async move {
            let mut all = Vec::with_capacity(subjects.len());
            for subject in subjects {
                all.push(self.describe(graph.clone(), subject).await?);
            }
            Ok(all)
        })
    }

    /// A page of instances.
    fn find(&self, find: Find) -> StoreFuture<'_, Result<Found, StoreError>>;

    /// A read-only SPARQL SELECT or ASK with `bindings` substituted as RDF terms (never spliced
    /// as text). A query that names no dataset (no `FROM`) reads the union of every graph as its
    /// default graph; `GRAPH` reaches each named graph.
    fn select(&self, query: String, bindings: Vec<(String, Term)>) -> StoreFuture<'_, Result<Vec<Row>, StoreError>>;

    /// The stored blob whose SHA-256 (lowercase hex) is `sha256`, with the media type it was
    /// first stored with.
    fn blob(&self, sha256: String) -> StoreFuture<'_, Result<Option<trails_core::Blob>, StoreError>>;

    /// The SQLite file the store keeps its data in, if it has one (the embedded store): the
    /// server keeps its idempotency keys there too.
    fn sqlite_path(&self) -> Option<&std::path::Path> {
        None
    }

    /// Whether this process is the only writer (the embedded store holds a lock on its
    /// directory). Otherwise other processes may record provenance in it too, and a pass over
    /// the whole log now and then retires what they leave beyond retention.
    fn exclusive(&self) -> bool {
        false
    }
}

impl Check {
    /// The error of this check when it failed on `subject`, spelled once for every backend.
    /// `culprit` names what broke it when the backend knows (the other instance holding a unique
    /// value, the instance still pointing at a deleted one). `Unchanged` is a conflict, not an
    /// error: `None`.
    pub fn violation(&self, subject: &NamedNode, culprit: Option<&str>) -> Option<FieldError> {
        use crate::validate::FieldCode;
        use serde_json::json;
        let by = culprit.map(|c| format!(" by {c}")).unwrap_or_default();
        let by_iri = |value: &serde_json::Value| value.as_str() == Some(subject.as_str());
        let (field, code, message, value, constraint) = match self {
            Check::Absent { field, value } if by_iri(value) => (
                field.clone(),
                FieldCode::Unique,
                format!("{} already exists", subject.as_str()),
                value.clone(),
                json!("unique"),
            ),
            Check::Absent { field, value } => (
                field.clone(),
                FieldCode::Unique,
                format!("{} is already taken ({})", shown(field, value), subject.as_str()),
                value.clone(),
                json!("unique"),
            ),
            Check::Present { field, value } if by_iri(value) => (
                field.clone(),
                FieldCode::Reference,
                format!("there is nothing at {}", subject.as_str()),
                value.clone(),
                json!("an existing instance"),
            ),
            Check::Present { field, value } => (
                field.clone(),
                FieldCode::Reference,
                format!("there is nothing with {} ({})", shown(field, value), subject.as_str()),
                value.clone(),
                json!("an existing instance"),
            ),
            Check::Unique { fields, .. } => {
                let names: Vec<&str> = fields.iter().map(|(name, _, _)| name.as_str()).collect();
                let values: Vec<String> = fields.iter().map(|(_, _, value)| term_text(value)).collect();
                (
                    names.first().map(|n| (*n).to_owned()).unwrap_or_default(),
                    FieldCode::Unique,
                    format!(
                        "{} = {} is already used{}",
                        names.join(", "),
                        values.join(", "),
                        culprit_or(&by, " by another instance")
                    ),
                    json!(values),
                    json!({ "unique": names }),
                )
            }
            Check::Reference { field, target, class } => {
                let kind = class.as_str().rsplit(['#', '/']).next().unwrap_or(class.as_str());
                (
                    field.clone(),
                    FieldCode::Reference,
                    format!("{field} points at {}, which is not a stored {kind}", target.as_str()),
                    json!(target.as_str()),
                    json!({ "class": class.as_str() }),
                )
            }
            Check::Unreferenced { .. } => (
                String::new(),
                FieldCode::Reference,
                format!("{} is still referenced{by}; remove those references first", subject.as_str()),
                json!(subject.as_str()),
                json!("not referenced"),
            ),
            Check::Unchanged { .. } => return None,
        };
        Some(FieldError { field, code, message, value: crate::validate::echo(&value), constraint })
    }
}

fn culprit_or<'a>(by: &'a str, otherwise: &'a str) -> &'a str {
    if by.is_empty() {
        otherwise
    } else {
        by
    }
}

fn shown(field: &str, value: &serde_json::Value) -> String {
    let value = value.as_str().map(str::to_owned).unwrap_or_else(|| value.to_string());
    if field.is_empty() {
        value
    } else {
        format!("{field} {value}")
    }
}

/// A term as a person reads it: a literal's value, an IRI without brackets.
pub fn term_text(term: &Term) -> String {
    match term {
        Term::Literal(literal) => literal.value().to_owned(),
        Term::NamedNode(node) => node.as_str().to_owned(),
        other => other.to_string(),
    }
}
