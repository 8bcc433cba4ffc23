//! A store on any SPARQL 1.1 Protocol endpoint (scale-out on an existing triple store;
//! `runtime/guide/03-knowledge-graph.md`). Queries are form-encoded POSTs (never
//! `application/sparql-query`: it hangs Virtuoso);
//! each logical write is **one** `DELETE … INSERT … WHERE` operation whose WHERE carries every
//! integrity check, so the endpoint applies all of it or nothing (Virtuoso does not roll back
//! multi-operation requests). A per-write revision triple tells whether the operation applied;
//! when it did not, each check is asked on its own to report which failed. Values are written as
//! RDF terms by the library (N-Triples syntax), never spliced from user text; no blank nodes;
//! always a named graph. Credentials are sent, never logged.

mod auth;
mod tls;

use std::fmt::Write as _;

use base64::Engine as _;
use oxrdf::vocab::rdf;
use oxrdf::{Literal, NamedNode, Term};
use sparesults::{QueryResultsFormat, QueryResultsParser, SliceQueryResultsParserOutput};

use super::store::{self, Check, Find, Found, Row, Store, StoreError, StoreFuture, Triples, Write, WriteError};

/// The revision marker of every written instance.
const REVISION: &str = "https://w3id.org/trails/capability#revision";
/// What a write receipt records: the subject it was for.
const RECEIPT: &str = "https://w3id.org/trails/capability#receiptFor";
/// The graph blob bytes live in (base64 literals), one subject per SHA-256.
const BLOB_GRAPH: &str = "urn:trails:blobs";
/// A blob's media type, and its bytes as standard base64.
const BLOB_MEDIA_TYPE: &str = "https://w3id.org/trails/capability#mediaType";
const BLOB_BASE64: &str = "https://w3id.org/trails/capability#base64";

fn blob_subject(sha256: &str) -> String {
    format!("<urn:trails:blob:sha256:{sha256}>")
}

/// A SPARQL 1.1 Protocol endpoint.
pub struct RemoteStore {
    client: reqwest::Client,
    query_url: String,
    update_url: String,
    credentials: Option<auth::Credentials>,
}

impl std::fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("RemoteStore")
            .field("query_url", &self.query_url)
            .field("update_url", &self.update_url)
            .field("user", &self.credentials.as_ref().map(auth::Credentials::user))
            .finish()
    }
}

/// How to reach a remote store; [`RemoteStore::builder`].
#[must_use]
pub struct RemoteStoreBuilder {
    query_url: String,
    update_url: Option<String>,
    credentials: Option<(String, String)>,
    ca_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for RemoteStoreBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("RemoteStoreBuilder")
            .field("query_url", &self.query_url)
            .field("update_url", &self.update_url)
            .field("user", &self.credentials.as_ref().map(|(user, _)| user))
            .finish_non_exhaustive()
    }
}

impl RemoteStoreBuilder {
    /// The SPARQL 1.1 update URL (default: the query URL).
    pub fn update_url(mut self, url: impl Into<String>) -> Self {
        self.update_url = Some(url.into());
        self
    }

    /// A user and password, answered in whichever scheme (Basic or Digest) the endpoint asks for.
    pub fn credentials(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.credentials = Some((user.into(), password.into()));
        self
    }

    /// CA certificates (PEM) trusted for `https://` endpoints besides the system's roots.
    pub fn ca_certificates_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca_pem = Some(pem.into());
        self
    }

    /// The store; refuses URLs that are not `http://` or `https://` and unreadable certificates.
    pub fn build(self) -> Result<RemoteStore, StoreError> {
        let update_url = self.update_url.unwrap_or_else(|| self.query_url.clone());
        let mut tls = false;
        for url in [&self.query_url, &update_url] {
            let parsed = reqwest::Url::parse(url)
                .map_err(|_| StoreError::Remote(format!("{url} is not an http:// or https:// URL")))?;
            // A password in the URL would be printed in every error about it: credentials go apart.
            if !parsed.username().is_empty() || parsed.password().is_some() {
                return Err(StoreError::Remote(
                    "a remote store URL may not hold a user or password; give them as credentials".into(),
                ));
            }
            match parsed.scheme() {
                "http" => {}
                "https" => tls = true,
                _ => return Err(StoreError::Remote(format!("{url} is not an http:// or https:// URL"))),
            }
        }
        let tls = match tls || self.ca_pem.is_some() {
            true => tls::client_config(self.ca_pem.as_deref())?,
            false => tls::trusting_nothing(),
        };
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .tls_backend_preconfigured(tls)
            .build()
            .map_err(|e| remote_error("building the HTTP client", e))?;
        let credentials = self.credentials.map(|(user, password)| auth::Credentials::new(user, password));
        Ok(RemoteStore { client, query_url: self.query_url, update_url, credentials })
    }
}

fn remote_error(what: &str, error: impl std::error::Error) -> StoreError {
    // reqwest's own message hides the cause ("error sending request"): spell the whole chain.
    let mut message = format!("{what}: {error}");
    let mut source = error.source();
    while let Some(cause) = source {
        let _ = write!(message, ": {cause}");
        source = cause.source();
    }
    StoreError::Remote(message)
}

fn refused(url: &str, status: reqwest::StatusCode, body: &[u8]) -> StoreError {
    let snippet: String = String::from_utf8_lossy(body).chars().take(300).collect();
    StoreError::Remote(format!("{url} answered {status}: {snippet}"))
}

/// Whether a refused update was rolled back for a concurrent transaction (SQLSTATE 40001, which
/// Virtuoso reports as `Virtuoso 40001 Error SR172: Transaction deadlocked`): the write may be
/// retried as it is.
fn serialization_failure(body: &[u8]) -> bool {
    body.windows(5).take(64).any(|window| window == b"40001")
}

impl RemoteStore {
    /// The most triples one write may hold: the update is one operation (so it applies whole),
    /// and Virtuoso 7 refuses an operation beyond roughly 1,000–2,000 template triples
    /// ("generated SQL text has exceeded 10000 lines").
    pub const MAX_WRITE_TRIPLES: usize = crate::store::MAX_WRITE_TRIPLES;

    /// A store whose queries go to `query_url` (and updates too, unless
    /// [`RemoteStoreBuilder::update_url`] says otherwise).
    pub fn builder(query_url: impl Into<String>) -> RemoteStoreBuilder {
        RemoteStoreBuilder { query_url: query_url.into(), update_url: None, credentials: None, ca_pem: None }
    }

    /// A form-encoded POST (the one request shape every SPARQL 1.1 server accepts), answering one
    /// authentication challenge; a refusal is an error.
    async fn post(&self, url: &str, field: &str, text: &str, accept: &str) -> Result<Vec<u8>, StoreError> {
        self.post_form(url, &[(field, text)], accept).await
    }

    /// [`RemoteStore::post`] of several form fields.
    async fn post_form(&self, url: &str, form: &[(&str, &str)], accept: &str) -> Result<Vec<u8>, StoreError> {
        let (status, body) = self.send(url, form, accept).await?;
        if !status.is_success() {
            return Err(refused(url, status, &body));
        }
        Ok(body)
    }

    /// The POST of [`RemoteStore::post`], with whatever status the endpoint answered.
    async fn send(
        &self,
        url: &str,
        form: &[(&str, &str)],
        accept: &str,
    ) -> Result<(reqwest::StatusCode, Vec<u8>), StoreError> {
        let form = form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish().into_bytes();
        let target = reqwest::Url::parse(url).map_err(|e| remote_error(url, e))?;
        let mut challenged = false;
        let (status, body) = loop {
            let mut request = self
                .client
                .post(target.clone())
                .header("accept", accept)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form.clone());
            if let Some(authorization) = self.credentials.as_ref().and_then(|c| c.authorization(&target, &form)) {
                request = request.header("authorization", authorization);
            }
            let response = request.send().await.map_err(|e| remote_error(url, e))?;
            let status = response.status();
            let challenge = response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).map(str::to_owned);
            if let (reqwest::StatusCode::UNAUTHORIZED, Some(credentials), Some(challenge), false) =
                (status, &self.credentials, &challenge, challenged)
            {
                credentials.challenged(&target, challenge).map_err(|e| remote_error(url, e))?;
                challenged = true;
                continue;
            }
            break (status, response.bytes().await.map_err(|e| remote_error(url, e))?);
        };
        Ok((status, body.to_vec()))
    }

    async fn solutions(&self, query: &str) -> Result<Vec<Row>, StoreError> {
        self.solutions_over(query, false).await
    }

    /// [`RemoteStore::solutions`]; `union`: the default graph is the union of every graph
    /// (Oxigraph's and Fuseki's `union-default-graph` parameter; Virtuoso's default anyway).
    async fn solutions_over(&self, query: &str, union: bool) -> Result<Vec<Row>, StoreError> {
        let mut form = vec![("query", query)];
        if union {
            form.push(("union-default-graph", "true"));
        }
        let body = self.post_form(&self.query_url, &form, "application/sparql-results+json").await?;
        match QueryResultsParser::from_format(QueryResultsFormat::Json).for_slice(&body) {
            Ok(SliceQueryResultsParserOutput::Solutions(solutions)) => {
                let mut rows = Vec::new();
                for solution in solutions {
                    let solution = solution.map_err(|e| StoreError::Query(e.to_string()))?;
                    rows.push(solution.iter().map(|(v, t)| (v.as_str().to_owned(), t.clone())).collect());
                }
                Ok(rows)
            }
            Ok(SliceQueryResultsParserOutput::Boolean(answer)) => {
                Ok(vec![vec![("result".to_owned(), Term::Literal(Literal::from(answer)))]])
            }
            Err(error) => Err(StoreError::Query(format!("unreadable results: {error}"))),
        }
    }

    async fn ask(&self, query: &str) -> Result<bool, StoreError> {
        Ok(answer(&self.solutions(query).await?))
    }

    /// Whether a write's receipt is there (asked up to three times; `None`: no answer).
    async fn receipt_present(&self, pattern: &str) -> Option<bool> {
        for attempt in 0..3u64 {
            match self.ask(&format!("ASK {{ {pattern} }}")).await {
                Ok(answer) => return Some(answer),
                Err(error) => {
                    tracing::warn!(%error, attempt, "could not ask whether a write applied");
                    tokio::time::sleep(std::time::Duration::from_millis(100 * (attempt + 1))).await;
                }
            }
        }
        None
    }

    async fn update(&self, update: &str) -> Result<(), StoreError> {
        self.post(&self.update_url, "update", update, "*/*").await.map(drop)
    }
}

/// The SPARQL condition of one check, as a group pattern that yields one solution when the check
/// holds and none otherwise; variables are suffixed `n` so checks never share one. Each is a
/// `COUNT` sub-select, not `FILTER (NOT) EXISTS`: Virtuoso 7 answers `EXISTS` true for any
/// pattern when nothing outside the filter binds a variable.
fn condition(check: &Check, n: usize, graph: &NamedNode, subject: &NamedNode) -> String {
    let (g, s) = (graph.to_string(), subject.to_string());
    let (pattern, holds) = match check {
        Check::Absent { .. } => (format!("GRAPH {g} {{ {s} a ?t{n} }}"), "= 0"),
        Check::Present { .. } => (format!("GRAPH {g} {{ {s} a ?t{n} }}"), "> 0"),
        Check::Unique { class, fields } => {
            let mut pattern = format!("GRAPH ?g{n} {{ ?o{n} a {class}");
            for (_, predicate, value) in fields {
                let _ = write!(pattern, " ; {predicate} {value}");
            }
            let _ = write!(pattern, " }} FILTER(?o{n} != {s})");
            (pattern, "= 0")
        }
        Check::Reference { target, class, .. } => (format!("GRAPH ?g{n} {{ {target} a {class} }}"), "> 0"),
        Check::Unchanged { before } => {
            match before.iter().find(|(p, _)| p.as_str() == REVISION).map(|(_, o)| o.to_string()) {
                Some(revision) => (format!("GRAPH {g} {{ {s} <{REVISION}> {revision} }}"), "> 0"),
                None => (format!("GRAPH {g} {{ {s} <{REVISION}> ?r{n} }}"), "= 0"),
            }
        }
        Check::Unreferenced { ignore_graphs } => (
            format!(
                "GRAPH ?g{n} {{ ?x{n} ?p{n} {s} }} FILTER(?x{n} != {s} && ?p{n} != {rdf_type} && !STRSTARTS(STR(?g{n}), {prefix}))",
                rdf_type = rdf::TYPE,
                prefix = Literal::new_simple_literal(ignore_graphs.as_str())
            ),
            "= 0",
        ),
    };
    format!("{{ SELECT (COUNT(*) AS ?c{n}) WHERE {{ {pattern} }} }} FILTER(?c{n} {holds})")
}

impl RemoteStore {
    async fn write_now(&self, write: Write) -> Result<(), WriteError> {
        if write.triples.len() > Self::MAX_WRITE_TRIPLES {
            return Err(WriteError::Store(StoreError::TooLarge {
                triples: write.triples.len(),
                max: Self::MAX_WRITE_TRIPLES,
            }));
        }
        let (g, s) = (write.graph.to_string(), write.subject.to_string());
        let revision = Literal::new_simple_literal(uuid::Uuid::new_v4().to_string());
        // The receipt: written by the same operation into a side graph, so "did it apply?" has an
        // answer even after a later write replaced this one (the instance's own revision triple
        // would be gone then). The object is a literal, so it never counts as a reference.
        let receipts = NamedNode::new_unchecked(format!("{}/receipts", write.graph.as_str()));
        let receipt = NamedNode::new_unchecked(format!("urn:uuid:{}", revision.value()));
        // An existing instance (the write checks it is present): delete what the WHERE matches.
        // A new one: insert only. Never `OPTIONAL` in the WHERE: Virtuoso drops the whole
        // operation, insert included, for a solution that leaves the DELETE template unbound.
        let replaces = write.checks.iter().any(|check| matches!(check, Check::Present { .. }));
        let mut update = String::new();
        if replaces {
            let _ = writeln!(update, "DELETE {{ GRAPH {g} {{ {s} ?p ?o }} }}");
        }
        update.push_str("INSERT {\n");
        let _ = writeln!(
            update,
            "  GRAPH {receipts} {{ {receipt} <{RECEIPT}> {} }}",
            Literal::new_simple_literal(write.subject.as_str())
        );
        if !write.triples.is_empty() {
            let _ = writeln!(update, "  GRAPH {g} {{");
            for (predicate, object) in &write.triples {
                let _ = writeln!(update, "    {s} {predicate} {object} .");
            }
            let _ = writeln!(update, "    {s} <{REVISION}> {revision} .\n  }}");
        }
        for blob in &write.blobs {
            let bytes = Literal::new_simple_literal(base64::engine::general_purpose::STANDARD.encode(blob.bytes()));
            let _ = writeln!(
                update,
                "  GRAPH <{BLOB_GRAPH}> {{ {} <{BLOB_MEDIA_TYPE}> {} ; <{BLOB_BASE64}> {bytes} }}",
                blob_subject(&blob.sha256()),
                Literal::new_simple_literal(blob.media_type()),
            );
        }
        update.push_str("}\nWHERE {\n");
        if replaces {
            let _ = writeln!(update, "  GRAPH {g} {{ {s} ?p ?o }}");
        }
        for (n, check) in write.checks.iter().enumerate() {
            let _ = writeln!(update, "  {}", condition(check, n, &write.graph, &write.subject));
        }
        update.push('}');
        let receipt_pattern = format!("GRAPH {receipts} {{ {receipt} <{RECEIPT}> ?x }}");
        let failure = match self.send(&self.update_url, &[("update", &update)], "*/*").await {
            Ok((status, _)) if status.is_success() => None,
            Ok((_, body)) if serialization_failure(&body) => return Err(WriteError::Conflict),
            Ok((status, body)) => Some(refused(&self.update_url, status, &body)),
            Err(error) => Some(error),
        };
        // Whether it applied is the receipt's to say — also after a failure, since a timeout, a
        // reset connection or a proxy's 502 can come after the endpoint committed the write.
        let applied = self.receipt_present(&receipt_pattern).await;
        match (applied, failure) {
            (Some(true), _) => {
                // Best effort: a receipt left behind by a crash here is a few bytes, never read again.
                if let Err(error) = self.update(&format!("DELETE WHERE {{ {receipt_pattern} }}")).await {
                    tracing::debug!(%error, "could not remove a write receipt");
                }
                return Ok(());
            }
            (_, Some(error)) => return Err(WriteError::Store(error)),
            (None, None) => {
                return Err(WriteError::Store(StoreError::Remote(
                    "the endpoint took the write but cannot be asked whether it applied".into(),
                )))
            }
            (Some(false), None) => {}
        }
        // Not applied: ask each check alone, to say which failed.
        let mut errors = Vec::new();
        for (n, check) in write.checks.iter().enumerate() {
            let condition = condition(check, n, &write.graph, &write.subject);
            if self.ask(&format!("ASK {{ {condition} }}")).await? {
                continue;
            }
            match check.violation(&write.subject, None) {
                Some(error) => errors.push(error),
                None => return Err(WriteError::Conflict),
            }
        }
        if errors.is_empty() {
            // Every check holds now: another write raced this one; the caller may retry.
            Err(WriteError::Conflict)
        } else {
            Err(WriteError::Rejected(errors))
        }
    }

    async fn find_now(&self, find: Find) -> Result<Found, StoreError> {
        let mut pattern = format!("?s a {}", find.class);
        for (predicate, value) in &find.filters {
            let _ = write!(pattern, " ; {predicate} {value}");
        }
        // One graph by name; several as a list the graph variable takes. `within` puts a group
        // in the instance's graph (this endpoint's default graph is not their union).
        let (graphs, graph) = match find.graphs.as_slice() {
            [one] => (String::new(), one.to_string()),
            graphs => {
                let graphs: String = graphs.iter().map(|graph| format!(" {graph}")).collect();
                (format!("VALUES ?g {{{graphs} }} "), "?g".to_owned())
            }
        };
        let within = |group: &str| format!("{graphs}GRAPH {graph} {{ {group} }}");
        let matched = within(&pattern);
        let count = format!("SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ {matched} }}");
        let total = store::count_of(&self.solutions(&count).await?);
        if find.limit == 0 {
            return Ok(Found { subjects: Vec::new(), total });
        }
        // IRIs ordered by their text (as the embedded store does): Virtuoso orders IRIs by an
        // internal id otherwise.
        let after = match &find.after {
            Some(after) => format!("FILTER(STR(?s) > {})", Literal::new_simple_literal(after.as_str())),
            None => String::new(),
        };
        let page = format!(
            "SELECT DISTINCT ?s WHERE {{ {matched} {after} }} ORDER BY STR(?s) LIMIT {} OFFSET {}",
            find.limit, find.offset
        );
        let subjects = self.solutions(&page).await?.into_iter().filter_map(|row| store::bound_iri(&row, "s")).collect();
        Ok(Found { subjects, total })
    }
}

/// The answer of an ASK as the endpoint sent it (Virtuoso: a one-row table of `1` or `0`).
fn answer(rows: &[Row]) -> bool {
    rows.first().and_then(|row| row.first()).is_some_and(|(_, t)| match t {
        Term::Literal(l) => matches!(l.value(), "true" | "1"),
        _ => false,
    })
}

/// Rows one read may return: endpoints cap results silently (Virtuoso's `ResultSetMaxRows`,
/// 10,000 on Debian) and refuse to sort past it, so instances are read in groups whose rows stay
/// under this bound — a group that reaches it is split and read again.
const ROWS_PER_READ: usize = 5000;

/// Instances asked for in one read, before any split.
const SUBJECTS_PER_READ: usize = 250;

impl RemoteStore {
    /// The triples of each of `subjects` in `graph`, in order.
    async fn describe_all(&self, graph: NamedNode, subjects: Vec<NamedNode>) -> Result<Vec<Triples>, StoreError> {
        let mut all: Vec<Triples> = vec![Vec::new(); subjects.len()];
        let indices: Vec<usize> = (0..subjects.len()).collect();
        let mut pending: Vec<&[usize]> = indices.chunks(SUBJECTS_PER_READ).collect();
        while let Some(group) = pending.pop() {
            let mut values = String::new();
            for &at in group {
                let _ = write!(values, " {}", subjects[at]);
            }
            let query = format!(
                "SELECT ?s ?p ?o WHERE {{ VALUES ?s {{{values} }} GRAPH {graph} {{ ?s ?p ?o }} }} LIMIT {ROWS_PER_READ}"
            );
            let rows = self.solutions(&query).await?;
            if rows.len() >= ROWS_PER_READ {
                match group.len() {
                    1 => {
                        return Err(StoreError::Remote(format!(
                            "{} has {ROWS_PER_READ} triples or more; the remote store reads instances below that",
                            subjects[group[0]]
                        )))
                    }
                    n => {
                        pending.push(&group[..n / 2]);
                        pending.push(&group[n / 2..]);
                        continue;
                    }
                }
            }
            let index: std::collections::HashMap<&NamedNode, usize> =
                group.iter().map(|&at| (&subjects[at], at)).collect();
            for row in rows {
                let (Some(s), Some(p), Some(o)) =
                    (store::bound_iri(&row, "s"), store::bound_iri(&row, "p"), store::bound(&row, "o"))
                else {
                    continue;
                };
                if let Some(&at) = index.get(&s) {
                    all[at].push((p, o.clone()));
                }
            }
        }
        Ok(all)
    }
}

impl Store for RemoteStore {
    fn write(&self, write: Write) -> StoreFuture<'_, Result<(), WriteError>> {
        Box::pin(self.write_now(write))
    }

    fn describe(&self, graph: NamedNode, subject: NamedNode) -> StoreFuture<'_, Result<Triples, StoreError>> {
        Box::pin(async move { Ok(self.describe_all(graph, vec![subject]).await?.pop().unwrap_or_default()) })
    }

    fn describe_many(
        &self,
        graph: NamedNode,
        subjects: Vec<NamedNode>,
    ) -> StoreFuture<'_, Result<Vec<Triples>, StoreError>> {
        Box::pin(self.describe_all(graph, subjects))
    }

    fn find(&self, find: Find) -> StoreFuture<'_, Result<Found, StoreError>> {
        Box::pin(self.find_now(find))
    }

    fn select(&self, query: String, bindings: Vec<(String, Term)>) -> StoreFuture<'_, Result<Vec<Row>, StoreError>> {
        Box::pin(async move {
            let bound = super::bind::bind(&query, &bindings)?;
            let rows = self.solutions_over(&bound.text, !bound.dataset).await?;
            if bound.ask {
                return Ok(vec![vec![("result".to_owned(), Term::Literal(Literal::from(answer(&rows))))]]);
            }
            Ok(rows)
        })
    }

    fn blob(&self, sha256: String) -> StoreFuture<'_, Result<Option<trails_core::Blob>, StoreError>> {
        Box::pin(async move {
            // `sha256` is 64 hex digits (checked by every caller's parser): safe in an IRI.
            if !crate::declare::blob::is_sha256(&sha256) {
                return Ok(None);
            }
            let query = format!(
                "SELECT ?m ?b WHERE {{ GRAPH <{BLOB_GRAPH}> {{ {} <{BLOB_MEDIA_TYPE}> ?m ; <{BLOB_BASE64}> ?b }} }} ORDER BY ?m LIMIT 1",
                blob_subject(&sha256)
            );
            let rows = self.solutions(&query).await?;
            let Some(row) = rows.first() else { return Ok(None) };
            let corrupt = |why: String| StoreError::Corrupt(format!("blob {sha256}: {why}"));
            let media_type = store::bound_text(row, "m").ok_or_else(|| corrupt("no media type".into()))?;
            let encoded = store::bound_text(row, "b").ok_or_else(|| corrupt("no bytes".into()))?;
            let bytes =
                base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|e| corrupt(e.to_string()))?;
            store::stored_blob(&sha256, media_type, bytes).map(Some)
        })
    }
}
