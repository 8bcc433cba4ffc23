//! The embedded store: SQLite (WAL, `synchronous = FULL` by default) is the source of truth, an
//! in-memory oxigraph engine answers reads. One writer thread takes writes in batches (group
//! commit): it checks each write against the engine *inside* an engine transaction (so a batch
//! sees its own earlier writes), appends the accepted ones to one SQLite transaction, commits that
//! (durable), then commits the engine transaction and only then answers the callers. A crash
//! between the two commits loses nothing: start-up rebuilds the engine from SQLite.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, RwLock};

use oxigraph::sparql::{QueryResults, SparqlEvaluator};
use oxigraph::store::{Store as Engine, Transaction};
use oxrdf::vocab::rdf;
use oxrdf::{GraphName, GraphNameRef, NamedNode, NamedOrBlankNode, Quad, Term, TermRef};
use rusqlite::{params, Connection, TransactionBehavior};
use tokio::sync::{mpsc, oneshot};

use super::store::{Check, Find, Found, Row, Store, StoreError, StoreFuture, Synchronous, Triples, Write, WriteError};
use crate::validate::FieldError;

/// Rebuild the engine from SQLite once this many quads were removed from it, or as many as it
/// holds live if that is more: its memory then stays within about twice the live data's (plus
/// this floor's worth), whatever the write history, and a rebuild loads at most one quad per quad
/// removed. The floor keeps a small store under heavy writes from rebuilding all the time.
const REBUILD_AFTER_REMOVALS: usize = 50_000;

/// Most writes committed together (one fsync).
const MAX_BATCH: usize = 256;
/// Writes waiting for the writer; senders wait (asynchronously) beyond this.
const QUEUE: usize = 4096;

/// When the writer rebuilds the engine (tests make both small).
#[derive(Clone, Copy)]
struct Rebuilds {
    /// After this many quads were removed (or as many as are live, if more), at once.
    after_removals: usize,
    /// After this long without a write, if removals are worth it.
    quiet: std::time::Duration,
}

impl Rebuilds {
    /// The quiet period matches the server's own (`memory.rs`), so the rebuild and the return
    /// of freed memory to the system follow the same lull.
    const DEFAULT: Rebuilds =
        Rebuilds { after_removals: REBUILD_AFTER_REMOVALS, quiet: std::time::Duration::from_secs(10) };
}

struct Job {
    write: Write,
    reply: oneshot::Sender<Result<(), WriteError>>,
}

/// The embedded knowledge-graph store.
pub struct EmbeddedStore {
    /// The current engine. The writer swaps in a fresh one now and then: oxigraph's in-memory
    /// engine never frees removed quads, so without a rebuild memory would follow the write
    /// history instead of the live data. Readers clone the handle (an `Arc`) and keep their
    /// snapshot.
    engine: Arc<RwLock<Engine>>,
    jobs: mpsc::Sender<Job>,
    path: PathBuf,
    /// How often the engine was rebuilt from SQLite (for stats).
    rebuilds: Arc<AtomicUsize>,
    /// A read-only connection for blob bytes, which live in SQLite only (never in the engine's
    /// memory). WAL lets it read while the writer writes.
    blob_reader: Arc<Mutex<Connection>>,
    /// An exclusive lock on `kg.lock`, held while the store is open.
    _lock: std::fs::File,
    _temporary: Option<tempfile::TempDir>,
}

fn engine_error(error: impl std::fmt::Display) -> StoreError {
    StoreError::Engine(error.to_string())
}

impl EmbeddedStore {
    /// Open (creating it on first use) the store in `dir`, and rebuild the engine from it.
    pub fn open(dir: &Path, synchronous: Synchronous) -> Result<EmbeddedStore, StoreError> {
        EmbeddedStore::open_with(dir, synchronous, None, Rebuilds::DEFAULT)
    }

    /// A store in a fresh temporary directory, removed when the store is dropped (for tests).
    pub fn temporary() -> Result<EmbeddedStore, StoreError> {
        let dir = tempfile::tempdir().map_err(|source| StoreError::Io {
            what: "cannot create a temporary directory in",
            path: std::env::temp_dir(),
            source,
        })?;
        let path = dir.path().to_owned();
        EmbeddedStore::open_with(&path, Synchronous::Normal, Some(dir), Rebuilds::DEFAULT)
    }

    fn open_with(
        dir: &Path,
        synchronous: Synchronous,
        temporary: Option<tempfile::TempDir>,
        rebuilds_when: Rebuilds,
    ) -> Result<EmbeddedStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            what: "cannot create the data directory",
            path: dir.to_owned(),
            source,
        })?;
        let lock_path = dir.join("kg.lock");
        let lock = std::fs::File::create(&lock_path).map_err(|source| StoreError::Io {
            what: "cannot create",
            path: lock_path,
            source,
        })?;
        lock.try_lock().map_err(|_| StoreError::Locked { path: dir.to_owned() })?;
        let path = dir.join("kg.sqlite3");
        let conn = Connection::open(&path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", synchronous.pragma())?;
        // Keyed graph first: a write replaces one subject of one graph, which is then one range
        // of the one b-tree (a store made before this keeps its `(s, p, o, g)` key and the
        // `(g, s)` index it had for that).
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS quad (
                s TEXT NOT NULL, p TEXT NOT NULL, o TEXT NOT NULL, g TEXT NOT NULL,
                PRIMARY KEY (g, s, p, o)
             ) WITHOUT ROWID;
             CREATE TABLE IF NOT EXISTS blob (
                sha256 TEXT PRIMARY KEY, media_type TEXT NOT NULL, bytes BLOB NOT NULL
             );",
        )?;
        let blob_reader = Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        let (fresh, loaded) = fresh_engine(&conn)?;
        let engine = Arc::new(RwLock::new(fresh));
        let (jobs, queue) = mpsc::channel(QUEUE);
        let rebuilds = Arc::new(AtomicUsize::new(0));
        let writer = Writer {
            conn,
            shared: engine.clone(),
            queue,
            when: rebuilds_when,
            rebuilds: rebuilds.clone(),
            live: loaded,
        };
        std::thread::Builder::new().name("trails-kg-writer".into()).spawn(move || writer.run()).map_err(|source| {
            StoreError::Io { what: "cannot start the writer thread for", path: path.clone(), source }
        })?;
        Ok(EmbeddedStore {
            engine,
            jobs,
            path,
            rebuilds,
            blob_reader: Arc::new(Mutex::new(blob_reader)),
            _lock: lock,
            _temporary: temporary,
        })
    }

    /// The SQLite file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many quads the engine holds (a full scan).
    pub fn len(&self) -> Result<usize, StoreError> {
        self.engine().len().map_err(engine_error)
    }

    /// Whether the engine holds nothing.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        self.engine().is_empty().map_err(engine_error)
    }

    /// How many times the in-memory engine was rebuilt from SQLite.
    pub fn engine_rebuilds(&self) -> usize {
        self.rebuilds.load(AtomicOrdering::Relaxed)
    }

    /// The current engine (a snapshot handle).
    fn engine(&self) -> Engine {
        self.engine.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// A new engine holding exactly what SQLite holds, and how many quads that is.
fn fresh_engine(conn: &Connection) -> Result<(Engine, usize), StoreError> {
    let engine = Engine::new().map_err(engine_error)?;
    let loaded = load(conn, &engine)?;
    Ok((engine, loaded))
}

/// Every quad of SQLite into the (empty) engine; how many. Streamed: a rebuild holds the old
/// engine and the new one, not a third copy of every quad in between.
fn load(conn: &Connection, engine: &Engine) -> Result<usize, StoreError> {
    let mut statement = conn.prepare("SELECT s, p, o, g FROM quad")?;
    let mut loaded = 0;
    let quads = statement
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?, row.get::<_, String>(3)?))
        })?
        .map(|row| {
            let (s, p, o, g) = row?;
            loaded += 1;
            parse_quad(&s, &p, &o, &g)
        });
    // In small batches: the loader's default reserves a million quads (~200 MB) per rebuild,
    // which a store this size never needs.
    let mut loader = engine.bulk_loader().with_num_threads(1).with_max_memory_size_in_megabytes(4);
    loader.load_ok_quads::<StoreError, StoreError>(quads)?;
    loader.commit()?;
    Ok(loaded)
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        StoreError::Sqlite(Box::new(error))
    }
}

impl From<oxigraph::store::StorageError> for StoreError {
    fn from(error: oxigraph::store::StorageError) -> Self {
        engine_error(error)
    }
}

fn parse_quad(s: &str, p: &str, o: &str, g: &str) -> Result<Quad, StoreError> {
    let corrupt = |what: &str, text: &str| StoreError::Corrupt(format!("{what} `{text}`"));
    let subject: NamedNode = s.parse().map_err(|_| corrupt("subject", s))?;
    let predicate: NamedNode = p.parse().map_err(|_| corrupt("predicate", p))?;
    let object: Term = o.parse().map_err(|_| corrupt("object", o))?;
    let graph: NamedNode = g.parse().map_err(|_| corrupt("graph", g))?;
    Ok(Quad::new(subject, predicate, object, graph))
}

/// The writer thread's state.
struct Writer {
    conn: Connection,
    /// Where readers take the engine from.
    shared: Arc<RwLock<Engine>>,
    queue: mpsc::Receiver<Job>,
    when: Rebuilds,
    rebuilds: Arc<AtomicUsize>,
    /// About how many quads the engine holds (what a rebuild would load): exact after a rebuild,
    /// then kept up to date with each batch's churn.
    live: usize,
}

/// What writes did to the engine: quads removed (which it keeps in memory until a rebuild) and
/// added.
#[derive(Debug, Default, Clone, Copy)]
struct Churn {
    removed: usize,
    added: usize,
}

impl Writer {
    fn run(mut self) {
        // The writer is a plain thread (SQLite and the engine block); a current-thread runtime of
        // its own only gives it a timed wait on the queue, for the work it does once quiet. Built
        // here, not by the opener: a runtime dropped inside async code panics.
        let timer = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
            Ok(timer) => Some(timer),
            Err(error) => {
                tracing::error!(%error, "the store's writer has no timer: the engine is rebuilt only after many removals");
                None
            }
        };
        let mut engine = self.shared.read().unwrap_or_else(|p| p.into_inner()).clone();
        // Quads removed from the current engine (which it keeps in memory until a rebuild).
        let mut removed = 0;
        // The engine missed a committed batch and its rebuild failed: rebuild at the next chance.
        let mut stale = false;
        // Whether writes came since the writer last went quiet (otherwise wait without a timeout).
        // Gone quiet, it rebuilds the engine if removed quads are pending (and worth a rebuild):
        // without that, the engine's memory after a burst of writes would stay at the burst's
        // high-water mark until the next `after_removals` removals. (`memory` then returns the
        // freed pages to the system.)
        let mut busy = false;
        loop {
            let next = match &timer {
                Some(timer) if busy => {
                    // The timeout is made inside `block_on`: its timer needs the runtime's context.
                    let quiet = self.when.quiet;
                    match timer.block_on(async { tokio::time::timeout(quiet, self.queue.recv()).await }) {
                        Ok(next) => next,
                        Err(_quiet) => {
                            if (stale || worth_a_quiet_rebuild(removed, self.live)) && self.rebuild(&mut engine) {
                                (removed, stale) = (0, false);
                            }
                            busy = false;
                            continue;
                        }
                    }
                }
                Some(timer) => timer.block_on(self.queue.recv()),
                None => self.queue.blocking_recv(),
            };
            let Some(first) = next else { return };
            busy = true;
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match self.queue.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            let (engine_committed, churn) = commit_batch(&mut self.conn, &engine, batch);
            removed += churn.removed;
            self.live = (self.live + churn.added).saturating_sub(churn.removed);
            stale |= !engine_committed;
            if (stale || removed >= self.when.after_removals.max(self.live)) && self.rebuild(&mut engine) {
                (removed, stale) = (0, false);
            }
        }
    }

    /// Swap in an engine loaded from SQLite; whether that worked. The replacement is built off to
    /// the side: readers keep the old one until the swap (and free it when their reads end).
    fn rebuild(&mut self, engine: &mut Engine) -> bool {
        match fresh_engine(&self.conn) {
            Ok((fresh, loaded)) => {
                *self.shared.write().unwrap_or_else(|p| p.into_inner()) = fresh.clone();
                *engine = fresh;
                self.live = loaded;
                self.rebuilds.fetch_add(1, AtomicOrdering::Relaxed);
                true
            }
            Err(error) => {
                tracing::error!(%error, "rebuilding the RDF engine from SQLite failed");
                false
            }
        }
    }
}

/// A rebuild loads every live quad again, so when quiet it is worth it only once removals are a
/// fair share of them: at most eight quads loaded per quad removed, however the writes trickle in.
fn worth_a_quiet_rebuild(removed: usize, live: usize) -> bool {
    removed > 0 && removed.saturating_mul(8) >= live
}

/// Commit one batch; (whether the engine took it, what it did to the engine).
fn commit_batch(conn: &mut Connection, engine: &Engine, batch: Vec<Job>) -> (bool, Churn) {
    let mut churn = Churn::default();
    let mut verdicts: Vec<Result<(), WriteError>> = Vec::with_capacity(batch.len());
    let outcome = (|| -> Result<bool, StoreError> {
        let mut tx = engine.start_transaction().map_err(engine_error)?;
        let mut sql = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        for job in &batch {
            if !unchanged(&tx, &job.write) {
                verdicts.push(Err(WriteError::Conflict));
                continue;
            }
            let violations = check(&tx, &job.write);
            if violations.is_empty() {
                match apply(&mut tx, &mut sql, &job.write) {
                    Ok(done) => {
                        churn.removed += done.removed;
                        churn.added += done.added;
                        verdicts.push(Ok(()));
                    }
                    // This write alone is undone; the batch goes on.
                    Err(error) => verdicts.push(Err(WriteError::Store(error))),
                }
            } else {
                verdicts.push(Err(WriteError::Rejected(violations)));
            }
        }
        sql.commit()?;
        // Durable from here on: if the engine commit fails, rebuild it from SQLite.
        Ok(tx.commit().is_ok())
    })();
    match outcome {
        Ok(engine_committed) => {
            if !engine_committed {
                tracing::error!("the RDF engine did not take a committed batch; it is rebuilt from SQLite");
            }
            for (job, verdict) in batch.into_iter().zip(verdicts) {
                let _ = job.reply.send(verdict);
            }
            (engine_committed, churn)
        }
        Err(error) => {
            tracing::error!(%error, "a write batch failed; nothing of it was written");
            let detail = error.to_string();
            for job in batch {
                let _ = job.reply.send(Err(WriteError::Store(StoreError::Engine(detail.clone()))));
            }
            (true, Churn::default())
        }
    }
}

/// Replace the subject's triples; how many quads were removed and added. SQLite first, inside a
/// savepoint: if it fails, only this write is undone (and the engine was not touched yet), so the
/// other writes of the batch still commit.
fn apply(tx: &mut Transaction<'_>, sql: &mut rusqlite::Transaction<'_>, write: &Write) -> Result<Churn, StoreError> {
    let graph = GraphName::NamedNode(write.graph.clone());
    let old: Vec<Quad> = tx
        .quads_for_pattern(Some(write.subject.as_ref().into()), None, None, Some(graph.as_ref()))
        .collect::<Result<_, _>>()
        .map_err(engine_error)?;
    {
        let (graph_text, subject_text) = (write.graph.to_string(), write.subject.to_string());
        let savepoint = sql.savepoint()?;
        savepoint
            .prepare_cached("DELETE FROM quad WHERE g = ?1 AND s = ?2")?
            .execute(params![graph_text, subject_text])?;
        {
            let mut insert =
                savepoint.prepare_cached("INSERT OR IGNORE INTO quad (s, p, o, g) VALUES (?1, ?2, ?3, ?4)")?;
            for (predicate, object) in &write.triples {
                insert.execute(params![subject_text, predicate.to_string(), object.to_string(), graph_text])?;
            }
            let mut insert_blob = savepoint
                .prepare_cached("INSERT OR IGNORE INTO blob (sha256, media_type, bytes) VALUES (?1, ?2, ?3)")?;
            for blob in &write.blobs {
                insert_blob.execute(params![blob.sha256(), blob.media_type(), blob.bytes()])?;
            }
        }
        savepoint.commit()?;
    }
    let new: HashSet<Quad> = write
        .triples
        .iter()
        .map(|(predicate, object)| Quad::new(write.subject.clone(), predicate.clone(), object.clone(), graph.clone()))
        .collect();
    // Only what changes is touched and counted: a quad the write keeps stays where it is, and
    // counting it as removed would make the writer rebuild for garbage that does not exist.
    let mut churn = Churn::default();
    for quad in old.iter().filter(|quad| !new.contains(*quad)) {
        tx.remove(quad);
        churn.removed += 1;
    }
    let old: HashSet<Quad> = old.into_iter().collect();
    for quad in new.iter().filter(|quad| !old.contains(*quad)) {
        tx.insert(quad);
        churn.added += 1;
    }
    Ok(churn)
}

fn has_type(tx: &Transaction<'_>, subject: &NamedNode, class: &NamedNode, graph: Option<GraphNameRef<'_>>) -> bool {
    tx.quads_for_pattern(Some(subject.as_ref().into()), Some(rdf::TYPE), Some(class.as_ref().into()), graph)
        .next()
        .is_some()
}

/// Whether the subject still has exactly the triples an update read (true without that check).
fn unchanged(tx: &Transaction<'_>, write: &Write) -> bool {
    let Some(before) = write.checks.iter().find_map(|c| match c {
        Check::Unchanged { before } => Some(before),
        _ => None,
    }) else {
        return true;
    };
    let graph = GraphName::NamedNode(write.graph.clone());
    let mut now: Vec<(NamedNode, Term)> = tx
        .quads_for_pattern(Some(write.subject.as_ref().into()), None, None, Some(graph.as_ref()))
        .filter_map(Result::ok)
        .map(|quad| (quad.predicate, quad.object))
        .collect();
    let mut before = before.clone();
    now.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.to_string().cmp(&b.1.to_string())));
    before.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.to_string().cmp(&b.1.to_string())));
    now == before
}

/// Every failed check of `write`, against the store as this transaction sees it.
fn check(tx: &Transaction<'_>, write: &Write) -> Vec<FieldError> {
    let graph = GraphName::NamedNode(write.graph.clone());
    let exists = tx
        .quads_for_pattern(Some(write.subject.as_ref().into()), Some(rdf::TYPE), None, Some(graph.as_ref()))
        .next()
        .is_some();
    let mut errors = Vec::new();
    for check in &write.checks {
        match check {
            Check::Absent { .. } if exists => errors.extend(check.violation(&write.subject, None)),
            Check::Present { .. } if !exists => errors.extend(check.violation(&write.subject, None)),
            Check::Absent { .. } | Check::Present { .. } | Check::Unchanged { .. } => {}
            Check::Unique { class, fields } => {
                let Some((_, first_predicate, first_value)) = fields.first() else { continue };
                // Any graph: a parent's group holds across its subtypes, which live in their own.
                let clash = tx
                    .quads_for_pattern(None, Some(first_predicate.as_ref()), Some(first_value.as_ref()), None)
                    .filter_map(Result::ok)
                    .filter_map(|quad| match (quad.subject, quad.graph_name) {
                        (NamedOrBlankNode::NamedNode(subject), GraphName::NamedNode(g)) => Some((subject, g)),
                        _ => None,
                    })
                    .find(|(subject, g)| {
                        let g = GraphName::NamedNode(g.clone());
                        subject != &write.subject
                            && has_type(tx, subject, class, Some(g.as_ref()))
                            && fields.iter().skip(1).all(|(_, predicate, value)| {
                                let quad = Quad::new(subject.clone(), predicate.clone(), value.clone(), g.clone());
                                tx.contains(&quad).unwrap_or(false)
                            })
                    });
                if let Some((other, _)) = clash {
                    errors.extend(check.violation(&write.subject, Some(other.as_str())));
                }
            }
            Check::Reference { target, class, .. } => {
                if !has_type(tx, target, class, None) {
                    errors.extend(check.violation(&write.subject, None));
                }
            }
            Check::Unreferenced { ignore_graphs } => {
                let object: TermRef<'_> = write.subject.as_ref().into();
                let referrer =
                    tx.quads_for_pattern(None, None, Some(object), None).filter_map(Result::ok).find(|quad| {
                        matches!(&quad.subject, NamedOrBlankNode::NamedNode(s) if s != &write.subject)
                            && quad.predicate.as_ref() != rdf::TYPE
                            && !in_graphs(&quad.graph_name, ignore_graphs)
                    });
                if let Some(quad) = referrer {
                    let culprit = format!("{} ({})", quad.subject, quad.predicate.as_str());
                    errors.extend(check.violation(&write.subject, Some(&culprit)));
                }
            }
        }
    }
    errors
}

/// Whether `graph` is under the IRI prefix `prefix`.
fn in_graphs(graph: &GraphName, prefix: &NamedNode) -> bool {
    matches!(graph, GraphName::NamedNode(g) if g.as_str().starts_with(prefix.as_str()))
}

impl EmbeddedStore {
    fn find_now(&self, find: &Find) -> Result<Found, StoreError> {
        let engine = self.engine();
        // Each instance is in one of the graphs: (subject, its graph), sorted by IRI.
        let mut subjects: Vec<(NamedNode, GraphName)> = Vec::new();
        for graph in &find.graphs {
            let graph = GraphName::NamedNode(graph.clone());
            let typed = |subject: &NamedNode| {
                engine.contains(&Quad::new(subject.clone(), rdf::TYPE.into_owned(), find.class.clone(), graph.clone()))
            };
            match find.filters.split_first() {
                Some(((predicate, value), rest)) => {
                    for quad in engine.quads_for_pattern(
                        None,
                        Some(predicate.as_ref()),
                        Some(value.as_ref()),
                        Some(graph.as_ref()),
                    ) {
                        let NamedOrBlankNode::NamedNode(subject) = quad.map_err(engine_error)?.subject else {
                            continue;
                        };
                        let mut keep = typed(&subject).map_err(engine_error)?;
                        for (predicate, value) in rest {
                            if !keep {
                                break;
                            }
                            let quad = Quad::new(subject.clone(), predicate.clone(), value.clone(), graph.clone());
                            keep = engine.contains(&quad).map_err(engine_error)?;
                        }
                        if keep {
                            subjects.push((subject, graph.clone()));
                        }
                    }
                }
                None => {
                    for quad in engine.quads_for_pattern(
                        None,
                        Some(rdf::TYPE),
                        Some(find.class.as_ref().into()),
                        Some(graph.as_ref()),
                    ) {
                        if let NamedOrBlankNode::NamedNode(subject) = quad.map_err(engine_error)?.subject {
                            subjects.push((subject, graph.clone()));
                        }
                    }
                }
            }
        }
        subjects.sort_by(|(a, _), (b, _)| a.cmp(b));
        subjects.dedup_by(|(a, _), (b, _)| a == b);
        let total = subjects.len();
        if let Some(after) = &find.after {
            // Sorted by IRI above: everything up to the cursor goes.
            subjects.retain(|(subject, _)| subject.as_str() > after.as_str());
        }
        let page = subjects.into_iter().map(|(subject, _)| subject).skip(find.offset).take(find.limit).collect();
        Ok(Found { subjects: page, total })
    }

    fn select_now(&self, query: &str, bindings: Vec<(String, Term)>) -> Result<Vec<Row>, StoreError> {
        let bound = super::bind::bind(query, &bindings)?;
        let mut prepared = SparqlEvaluator::new()
            .parse_query(&bound.text)
            .map_err(|e| StoreError::Query(format!("{e} (only read-only queries are accepted)")))?;
        if prepared.dataset().is_default_dataset() {
            prepared.dataset_mut().set_default_graph_as_union();
        }
        match prepared.on_store(&self.engine()).execute().map_err(|e| StoreError::Query(e.to_string()))? {
            QueryResults::Solutions(solutions) => {
                let mut rows = Vec::new();
                for solution in solutions {
                    let solution = solution.map_err(|e| StoreError::Query(e.to_string()))?;
                    rows.push(
                        solution.iter().map(|(variable, term)| (variable.as_str().to_owned(), term.clone())).collect(),
                    );
                }
                Ok(rows)
            }
            QueryResults::Boolean(answer) => {
                let literal = oxrdf::Literal::from(answer);
                Ok(vec![vec![("result".to_owned(), Term::Literal(literal))]])
            }
            QueryResults::Graph(_) => {
                Err(StoreError::Query("CONSTRUCT and DESCRIBE are not supported; use SELECT or ASK".into()))
            }
        }
    }
}

impl Store for EmbeddedStore {
    fn sqlite_path(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn exclusive(&self) -> bool {
        true
    }

    fn write(&self, write: Write) -> StoreFuture<'_, Result<(), WriteError>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            self.jobs.send(Job { write, reply }).await.map_err(|_| StoreError::Closed)?;
            answer.await.map_err(|_| StoreError::Closed)?
        })
    }

    fn describe(&self, graph: NamedNode, subject: NamedNode) -> StoreFuture<'_, Result<Triples, StoreError>> {
        let graph = GraphName::NamedNode(graph);
        let result = self
            .engine()
            .quads_for_pattern(Some(subject.as_ref().into()), None, None, Some(graph.as_ref()))
            .map(|quad| quad.map(|q| (q.predicate, q.object)).map_err(engine_error))
            .collect();
        Box::pin(std::future::ready(result))
    }

    fn find(&self, find: Find) -> StoreFuture<'_, Result<Found, StoreError>> {
        Box::pin(std::future::ready(self.find_now(&find)))
    }

    fn select(&self, query: String, bindings: Vec<(String, Term)>) -> StoreFuture<'_, Result<Vec<Row>, StoreError>> {
        Box::pin(std::future::ready(self.select_now(&query, bindings)))
    }

    fn blob(&self, sha256: String) -> StoreFuture<'_, Result<Option<trails_core::Blob>, StoreError>> {
        let reader = self.blob_reader.clone();
        Box::pin(async move {
            // Megabytes from disk: off the async workers.
            let read = move || -> Result<Option<trails_core::Blob>, StoreError> {
                let conn = reader.lock().unwrap_or_else(|p| p.into_inner());
                let mut statement = conn.prepare_cached("SELECT media_type, bytes FROM blob WHERE sha256 = ?1")?;
                let mut rows = statement.query(params![sha256])?;
                let Some(row) = rows.next()? else { return Ok(None) };
                let (media_type, bytes): (String, Vec<u8>) = (row.get(0)?, row.get(1)?);
                super::store::stored_blob(&sha256, &media_type, bytes).map(Some)
            };
            tokio::task::spawn_blocking(read).await.map_err(|e| StoreError::Engine(e.to_string()))?
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn node(iri: &str) -> NamedNode {
        NamedNode::new(iri).unwrap()
    }

    #[test]
    fn the_engine_is_rebuilt_after_enough_removals_and_keeps_the_live_data() {
        let dir = tempfile::tempdir().unwrap();
        let when = Rebuilds { after_removals: 20, quiet: Duration::from_secs(3600) };
        let store = EmbeddedStore::open_with(dir.path(), Synchronous::Normal, None, when).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (graph, subject) = (node("urn:g"), node("urn:s"));
        for round in 0..10 {
            let triples = (0..5)
                .map(|i| (node(&format!("urn:p{i}")), Term::Literal(oxrdf::Literal::from(round as i64))))
                .collect();
            let write = Write {
                graph: graph.clone(),
                subject: subject.clone(),
                triples,
                checks: Vec::new(),
                blobs: Vec::new(),
            };
            runtime.block_on(store.write(write)).unwrap();
        }
        // 9 replacements removed 45 quads: at least two rebuilds past 20 each.
        assert!(store.engine_rebuilds() >= 2, "{} rebuilds", store.engine_rebuilds());
        let now = runtime.block_on(store.describe(graph, subject)).unwrap();
        assert_eq!(now.len(), 5, "the rebuilt engine holds the live triples only");
        assert!(now.iter().all(|(_, o)| o.to_string().starts_with("\"9\"")), "{now:?}");
        assert_eq!(store.len().unwrap(), 5);
    }

    #[test]
    fn a_large_store_waits_for_as_many_removals_as_it_holds_live() {
        let dir = tempfile::tempdir().unwrap();
        let when = Rebuilds { after_removals: 4, quiet: Duration::from_secs(3600) };
        let store = EmbeddedStore::open_with(dir.path(), Synchronous::Normal, None, when).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        for i in 0..40 {
            replace(&store, &runtime, &format!("urn:s{i}"), 0);
        }
        // 40 live quads: 30 removals are past the floor of 4 but not worth reloading 40.
        for i in 0..30 {
            replace(&store, &runtime, &format!("urn:s{i}"), 1);
        }
        // The writer answers a batch before it decides on a rebuild: give it time to.
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(store.engine_rebuilds(), 0, "30 removals against 40 live quads");
        for i in 0..10 {
            replace(&store, &runtime, &format!("urn:s{i}"), 2);
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while store.engine_rebuilds() == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(store.engine_rebuilds(), 1, "40 removals: as many as are live");
        assert_eq!(store.len().unwrap(), 40);
    }

    /// A data directory made before the quad table was keyed graph first still opens, and a
    /// write still replaces its subject's triples there.
    #[test]
    fn a_store_with_the_earlier_quad_key_opens_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        {
            let conn = Connection::open(dir.path().join("kg.sqlite3")).unwrap();
            conn.execute_batch(
                "CREATE TABLE quad (
                    s TEXT NOT NULL, p TEXT NOT NULL, o TEXT NOT NULL, g TEXT NOT NULL,
                    PRIMARY KEY (s, p, o, g)
                 ) WITHOUT ROWID;
                 CREATE INDEX quad_by_graph_subject ON quad (g, s);
                 INSERT INTO quad VALUES ('<urn:s1>', '<urn:p>', '\"0\"^^<http://www.w3.org/2001/XMLSchema#integer>', '<urn:g>');
                 INSERT INTO quad VALUES ('<urn:s2>', '<urn:p>', '\"0\"^^<http://www.w3.org/2001/XMLSchema#integer>', '<urn:g>');",
            )
            .unwrap();
        }
        let store = EmbeddedStore::open(dir.path(), Synchronous::Normal).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        assert_eq!(store.len().unwrap(), 2, "the earlier store's quads are read");
        replace(&store, &runtime, "urn:s1", 7);
        assert_eq!(store.len().unwrap(), 2, "replaced, not added");
        let now = runtime.block_on(store.describe(node("urn:g"), node("urn:s1"))).unwrap();
        assert_eq!(now.len(), 1);
        assert!(now[0].1.to_string().starts_with("\"7\""), "{now:?}");
        drop(store);
        let reopened = EmbeddedStore::open(dir.path(), Synchronous::Normal).unwrap();
        let again = runtime.block_on(reopened.describe(node("urn:g"), node("urn:s1"))).unwrap();
        assert_eq!(again, now, "durable in the earlier schema");
    }

    fn replace(store: &EmbeddedStore, runtime: &tokio::runtime::Runtime, subject: &str, value: i64) {
        let write = Write {
            graph: node("urn:g"),
            subject: node(subject),
            triples: vec![(node("urn:p"), Term::Literal(oxrdf::Literal::from(value)))],
            checks: Vec::new(),
            blobs: Vec::new(),
        };
        runtime.block_on(store.write(write)).unwrap();
    }

    #[test]
    fn a_quiet_writer_rebuilds_the_engine_once_removals_are_worth_it() {
        let dir = tempfile::tempdir().unwrap();
        let when = Rebuilds { after_removals: 1_000_000, quiet: Duration::from_millis(200) };
        let store = EmbeddedStore::open_with(dir.path(), Synchronous::Normal, None, when).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let quiet = || std::thread::sleep(Duration::from_millis(600));
        for i in 0..20 {
            replace(&store, &runtime, &format!("urn:s{i}"), 0);
        }
        quiet();
        assert_eq!(store.engine_rebuilds(), 0, "writes that remove nothing never cause a rebuild");
        for _ in 0..5 {
            replace(&store, &runtime, "urn:s0", 0);
        }
        quiet();
        assert_eq!(store.engine_rebuilds(), 0, "a write that keeps its quads removes none");
        // Two removals against 20 live quads (2 × 8 < 20): not worth reloading them.
        replace(&store, &runtime, "urn:s0", 1);
        replace(&store, &runtime, "urn:s1", 1);
        quiet();
        assert_eq!(store.engine_rebuilds(), 0, "two removals against 20 live quads are not worth a rebuild");
        // A third (3 × 8 ≥ 20).
        replace(&store, &runtime, "urn:s1", 4);
        quiet();
        assert_eq!(store.engine_rebuilds(), 1, "enough removals, then quiet: one rebuild");
        assert_eq!(store.len().unwrap(), 20, "the rebuilt engine holds the live quads");
        let now = runtime.block_on(store.describe(node("urn:g"), node("urn:s1"))).unwrap();
        assert!(now.iter().all(|(_, o)| o.to_string().starts_with("\"4\"")), "{now:?}");
        quiet();
        assert_eq!(store.engine_rebuilds(), 1, "staying quiet does not rebuild again");
    }
}
