//! A store on any SPARQL 1.1 Protocol endpoint (scale-out on an existing triple store, DESIGN
//! §4.5). Queries are form-encoded POSTs (never `application/sparql-query`: it hangs Virtuoso);
//! each logical write is **one** `DELETE … INSERT … WHERE` operation whose WHERE carries every
//! integrity check, so the endpoint applies all of it or nothing (Virtuoso does not roll back
//! multi-operation requests). A per-write revision triple tells whether the operation applied;
//! when it did not, each check is asked on its own to report which failed. Values are written as
//! RDF terms by the library (N-Triples syntax), never spliced from user text; no blank nodes;
//! always a named graph. Credentials are sent, never logged.

use std::fmt::Write as _;

use oxigraph::model::vocab::rdf;
use oxigraph::model::{Literal, NamedNode, Term};
use oxigraph::sparql::results::{QueryResultsFormat, QueryResultsParser, SliceQueryResultsParserOutput};

use super::store::{Check, Find, Found, Row, Store, StoreError, StoreFuture, Triples, Write, WriteError};

/// The revision marker of every written instance.
const REVISION: &str = "https://w3id.org/trails/capability#revision";
/// What a write receipt records: the subject it was for.
const RECEIPT: &str = "https://w3id.org/trails/capability#receiptFor";

/// A SPARQL 1.1 Protocol endpoint.
pub struct RemoteStore {
    client: reqwest::Client,
    query_url: String,
    update_url: String,
    credentials: Option<(String, String)>,
}

impl std::fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("RemoteStore")
            .field("query_url", &self.query_url)
            .field("update_url", &self.update_url)
            .field("user", &self.credentials.as_ref().map(|(user, _)| user))
            .finish()
    }
}

fn remote_error(what: &str, error: impl std::fmt::Display) -> StoreError {
    StoreError::Remote(format!("{what}: {error}"))
}

impl RemoteStore {
    /// A store on `query_url` / `update_url`, with Basic credentials for updates if given.
    pub fn new(
        query_url: impl Into<String>,
        update_url: impl Into<String>,
        credentials: Option<(String, String)>,
    ) -> Self {
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .expect("a client without TLS options builds");
        RemoteStore { client, query_url: query_url.into(), update_url: update_url.into(), credentials }
    }

    async fn post(&self, url: &str, field: &str, text: &str, accept: &str) -> Result<Vec<u8>, StoreError> {
        let mut request = self.client.post(url).header("accept", accept).form(&[(field, text)]);
        if let Some((user, password)) = &self.credentials {
            request = request.basic_auth(user, Some(password));
        }
        let response = request.send().await.map_err(|e| remote_error(url, e))?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| remote_error(url, e))?;
        if !status.is_success() {
            let snippet: String = String::from_utf8_lossy(&body).chars().take(300).collect();
            return Err(StoreError::Remote(format!("{url} answered {status}: {snippet}")));
        }
        Ok(body.to_vec())
    }

    async fn solutions(&self, query: &str) -> Result<Vec<Row>, StoreError> {
        let body = self.post(&self.query_url, "query", query, "application/sparql-results+json").await?;
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
        let rows = self.solutions(query).await?;
        Ok(rows.first().and_then(|row| row.first()).is_some_and(|(_, t)| match t {
            Term::Literal(l) => matches!(l.value(), "true" | "1"),
            _ => false,
        }))
    }

    async fn update(&self, update: &str) -> Result<(), StoreError> {
        self.post(&self.update_url, "update", update, "*/*").await.map(drop)
    }
}

/// The SPARQL condition of one check, with variables suffixed `n` so checks never share one.
fn condition(check: &Check, n: usize, graph: &NamedNode, subject: &NamedNode) -> Option<String> {
    let (g, s) = (graph.to_string(), subject.to_string());
    match check {
        Check::Absent { .. } => Some(format!("NOT EXISTS {{ GRAPH {g} {{ {s} a ?t{n} }} }}")),
        Check::Present { .. } => Some(format!("EXISTS {{ GRAPH {g} {{ {s} a ?t{n} }} }}")),
        Check::Unique { class, fields } => {
            let mut pattern = format!("?o{n} a {class}");
            for (_, predicate, value) in fields {
                let _ = write!(pattern, " ; {predicate} {value}");
            }
            Some(format!("NOT EXISTS {{ GRAPH ?g{n} {{ {pattern} }} FILTER(?o{n} != {s}) }}"))
        }
        Check::Reference { target, class, .. } => Some(format!("EXISTS {{ GRAPH ?g{n} {{ {target} a {class} }} }}")),
        Check::Unchanged { before } => {
            let revision = before.iter().find(|(p, _)| p.as_str() == REVISION).map(|(_, o)| o.to_string());
            Some(match revision {
                Some(revision) => format!("EXISTS {{ GRAPH {g} {{ {s} <{REVISION}> {revision} }} }}"),
                None => format!("NOT EXISTS {{ GRAPH {g} {{ {s} <{REVISION}> ?r{n} }} }}"),
            })
        }
        Check::Unreferenced { ignore_graphs } => Some(format!(
            "NOT EXISTS {{ GRAPH ?g{n} {{ ?x{n} ?p{n} {s} }} FILTER(?x{n} != {s} && ?p{n} != {rdf_type} && !STRSTARTS(STR(?g{n}), {prefix})) }}",
            rdf_type = rdf::TYPE,
            prefix = Literal::new_simple_literal(ignore_graphs.as_str())
        )),
    }
}

impl RemoteStore {
    async fn write_now(&self, write: Write) -> Result<(), WriteError> {
        let (g, s) = (write.graph.to_string(), write.subject.to_string());
        let revision = Literal::new_simple_literal(uuid::Uuid::new_v4().to_string());
        // The receipt: written by the same operation into a side graph, so "did it apply?" has an
        // answer even after a later write replaced this one (the instance's own revision triple
        // would be gone then). The object is a literal, so it never counts as a reference.
        let receipts = NamedNode::new_unchecked(format!("{}/receipts", write.graph.as_str()));
        let receipt = NamedNode::new_unchecked(format!("urn:uuid:{}", revision.value()));
        let mut update = format!("DELETE {{ GRAPH {g} {{ {s} ?p ?o }} }}\nINSERT {{\n");
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
        update.push_str("}\nWHERE {\n");
        let _ = writeln!(update, "  OPTIONAL {{ GRAPH {g} {{ {s} ?p ?o }} }}");
        for (n, check) in write.checks.iter().enumerate() {
            if let Some(condition) = condition(check, n, &write.graph, &write.subject) {
                let _ = writeln!(update, "  FILTER({condition})");
            }
        }
        update.push('}');
        self.update(&update).await?;
        let receipt_pattern = format!("GRAPH {receipts} {{ {receipt} <{RECEIPT}> ?x }}");
        let applied = self.ask(&format!("ASK {{ {receipt_pattern} }}")).await?;
        if applied {
            // Best effort: a receipt left behind by a crash here is a few bytes, never read again.
            if let Err(error) = self.update(&format!("DELETE WHERE {{ {receipt_pattern} }}")).await {
                tracing::debug!(%error, "could not remove a write receipt");
            }
            return Ok(());
        }
        // Not applied: ask each check alone, to say which failed.
        let mut errors = Vec::new();
        for (n, check) in write.checks.iter().enumerate() {
            let Some(condition) = condition(check, n, &write.graph, &write.subject) else { continue };
            if self.ask(&format!("ASK {{ FILTER({condition}) }}")).await? {
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
        let graph = find.graph.to_string();
        let count = format!("SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ GRAPH {graph} {{ {pattern} }} }}");
        let total = self
            .solutions(&count)
            .await?
            .first()
            .and_then(|row| row.iter().find(|(v, _)| v == "n"))
            .and_then(|(_, t)| match t {
                Term::Literal(l) => l.value().parse::<usize>().ok(),
                _ => None,
            })
            .unwrap_or(0);
        if find.limit == 0 {
            return Ok(Found { subjects: Vec::new(), total });
        }
        let page = match &find.order {
            Some((predicate, descending)) => {
                let direction = if *descending { "DESC(?key)" } else { "?key" };
                let aggregate = if *descending { "MAX" } else { "MIN" };
                format!(
                    "SELECT ?s ({aggregate}(?k) AS ?key) WHERE {{ GRAPH {graph} {{ {pattern} OPTIONAL {{ ?s {predicate} ?k }} }} }}
                     GROUP BY ?s ORDER BY (!BOUND(?key)) {direction} ?s LIMIT {} OFFSET {}",
                    find.limit, find.offset
                )
            }
            None => format!(
                "SELECT DISTINCT ?s WHERE {{ GRAPH {graph} {{ {pattern} }} }} ORDER BY ?s LIMIT {} OFFSET {}",
                find.limit, find.offset
            ),
        };
        let subjects = self
            .solutions(&page)
            .await?
            .into_iter()
            .filter_map(|row| {
                row.into_iter().find(|(v, _)| v == "s").and_then(|(_, t)| match t {
                    Term::NamedNode(n) => Some(n),
                    _ => None,
                })
            })
            .collect();
        Ok(Found { subjects, total })
    }
}

impl Store for RemoteStore {
    fn write(&self, write: Write) -> StoreFuture<'_, Result<(), WriteError>> {
        Box::pin(self.write_now(write))
    }

    fn describe(&self, graph: NamedNode, subject: NamedNode) -> StoreFuture<'_, Result<Triples, StoreError>> {
        Box::pin(async move {
            let query = format!("SELECT ?p ?o WHERE {{ GRAPH {graph} {{ {subject} ?p ?o }} }}");
            let rows = self.solutions(&query).await?;
            Ok(rows
                .into_iter()
                .filter_map(|row| {
                    let p = row.iter().find(|(v, _)| v == "p").and_then(|(_, t)| match t {
                        Term::NamedNode(n) => Some(n.clone()),
                        _ => None,
                    })?;
                    let o = row.into_iter().find(|(v, _)| v == "o")?.1;
                    Some((p, o))
                })
                .collect())
        })
    }

    fn describe_many(
        &self,
        graph: NamedNode,
        subjects: Vec<NamedNode>,
    ) -> StoreFuture<'_, Result<Vec<Triples>, StoreError>> {
        Box::pin(async move {
            if subjects.is_empty() {
                return Ok(Vec::new());
            }
            let mut values = String::new();
            for subject in &subjects {
                let _ = write!(values, " {subject}");
            }
            let query = format!("SELECT ?s ?p ?o WHERE {{ VALUES ?s {{{values} }} GRAPH {graph} {{ ?s ?p ?o }} }}");
            let mut all: Vec<Triples> = vec![Vec::new(); subjects.len()];
            let index: std::collections::HashMap<&NamedNode, usize> =
                subjects.iter().enumerate().map(|(i, s)| (s, i)).collect();
            for row in self.solutions(&query).await? {
                let named = |name: &str| {
                    row.iter().find(|(v, _)| v == name).and_then(|(_, t)| match t {
                        Term::NamedNode(n) => Some(n.clone()),
                        _ => None,
                    })
                };
                let (Some(s), Some(p)) = (named("s"), named("p")) else { continue };
                let Some((_, o)) = row.iter().find(|(v, _)| v == "o") else { continue };
                if let Some(&at) = index.get(&s) {
                    all[at].push((p, o.clone()));
                }
            }
            Ok(all)
        })
    }

    fn find(&self, find: Find) -> StoreFuture<'_, Result<Found, StoreError>> {
        Box::pin(self.find_now(find))
    }

    fn select(&self, query: String, bindings: Vec<(String, Term)>) -> StoreFuture<'_, Result<Vec<Row>, StoreError>> {
        Box::pin(async move {
            // Check it is a read-only query here, and bind values with a trailing VALUES clause:
            // the terms are serialised by the library.
            let _parsed = oxigraph::sparql::SparqlEvaluator::new()
                .parse_query(&query)
                .map_err(|e| StoreError::Query(format!("{e} (only read-only queries are accepted)")))?;
            let mut text = query;
            if !bindings.is_empty() {
                let mut names = String::new();
                let mut values = String::new();
                for (name, term) in &bindings {
                    let variable = oxigraph::model::Variable::new(name)
                        .map_err(|e| StoreError::Query(format!("binding `{name}`: {e}")))?;
                    let _ = write!(names, " {variable}");
                    let _ = write!(values, " {term}");
                }
                let _ = write!(text, "\nVALUES ({names} ) {{ ({values} ) }}");
            }
            self.solutions(&text).await
        })
    }
}
