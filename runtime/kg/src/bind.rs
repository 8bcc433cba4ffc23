//! Bound parameters of a read-only query ([`Kg::sparql`](super::Kg::sparql)), the same on every
//! store: the values go in as an inline `VALUES` block at the top of the WHERE group, so the
//! whole group — its FILTERs included — sees them, and a remote endpoint needs nothing beyond
//! SPARQL 1.1. The terms are written by the library (N-Triples syntax is valid SPARQL); user
//! text is never spliced into the query. (oxigraph's own `substitute_variable` would also reach
//! nested groups, but only works on projected variables and has no remote equivalent.)

use std::fmt::Write as _;

use oxrdf::{Term, Variable};

use crate::store::StoreError;

/// A read-only query ready to send.
pub(crate) struct Bound {
    pub(crate) text: String,
    /// An ASK (whose answer endpoints spell differently: Virtuoso sends a one-row table).
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) ask: bool,
    /// It names its dataset (`FROM` / `FROM NAMED`).
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) dataset: bool,
}

/// `query` (a read-only SELECT or ASK) with `bindings` bound.
pub(crate) fn bind(query: &str, bindings: &[(String, Term)]) -> Result<Bound, StoreError> {
    let parsed = spargebra::SparqlParser::new()
        .parse_query(query)
        .map_err(|e| StoreError::Query(format!("{e} (only read-only queries are accepted)")))?;
    if !matches!(parsed, spargebra::Query::Select { .. } | spargebra::Query::Ask { .. }) {
        return Err(StoreError::Query("CONSTRUCT and DESCRIBE are not supported; use SELECT or ASK".into()));
    }
    let ask = matches!(parsed, spargebra::Query::Ask { .. });
    let dataset = match &parsed {
        spargebra::Query::Select { dataset, .. } | spargebra::Query::Ask { dataset, .. } => dataset.is_some(),
        _ => false,
    };
    if bindings.is_empty() {
        return Ok(Bound { text: query.to_owned(), ask, dataset });
    }
    let (mut names, mut values) = (String::new(), String::new());
    for (name, term) in bindings {
        let variable = Variable::new(name).map_err(|e| StoreError::Query(format!("binding `{name}`: {e}")))?;
        let _ = write!(names, " {variable}");
        let _ = write!(values, " {term}");
    }
    let at =
        where_group(query).map_err(|why| StoreError::Query(format!("cannot bind values into this query: {why}")))?;
    let bound = format!("{} VALUES ({names} ) {{ ({values} ) }} {}", &query[..at], &query[at..]);
    // The parser checks the result is still a valid query; it cannot tell a block placed in
    // another group, so the scan above must find the right one (its tests cover the tricky cases).
    spargebra::SparqlParser::new()
        .parse_query(&bound)
        .map_err(|e| StoreError::Query(format!("cannot bind values into this query: {e}")))?;
    Ok(Bound { text: bound, ask, dataset })
}

/// The byte offset just inside the WHERE group's opening brace: the first `{` outside IRIs,
/// strings, comments and parentheses (a projection may hold `EXISTS { … }` inside parentheses).
/// Escapes outside strings (`ex:a\#b`) are stepped over; `\u` escapes there are refused, since
/// the parser would turn them into characters this scan never saw.
fn where_group(query: &str) -> Result<usize, &'static str> {
    let bytes = query.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'#' => at = query[at..].find('\n').map_or(bytes.len(), |n| at + n),
            b'\\' if matches!(bytes.get(at + 1), Some(b'u' | b'U')) => {
                return Err("`\\u` escapes outside strings are not supported with bound values")
            }
            b'\\' => at += 1,
            quote @ (b'"' | b'\'') => {
                let long = bytes.get(at + 1) == Some(&quote) && bytes.get(at + 2) == Some(&quote);
                let delimiter = if long { 3 } else { 1 };
                at += delimiter;
                loop {
                    match bytes.get(at) {
                        None => return Err("a string is not closed"),
                        Some(b'\\') => at += 2,
                        Some(&b) if b == quote && (!long || bytes[at..].starts_with(&[quote; 3])) => {
                            at += delimiter - 1;
                            break;
                        }
                        Some(_) => at += 1,
                    }
                }
            }
            b'<' => {
                // An IRI reference, or the less-than operator.
                let rest = &bytes[at + 1..];
                let end = rest.iter().position(|&b| !is_iri_byte(b));
                if let Some(end) = end.filter(|&end| rest[end] == b'>') {
                    at += end + 1;
                }
            }
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b'{' if depth == 0 => return Ok(at + 1),
            _ => {}
        }
        at += 1;
    }
    Err("the query has no WHERE group")
}

/// A byte an IRIREF may hold (SPARQL 1.1 grammar rule 139; non-ASCII bytes are UTF-8 parts).
fn is_iri_byte(b: u8) -> bool {
    b > 0x20 && !matches!(b, b'<' | b'>' | b'"' | b'{' | b'}' | b'|' | b'^' | b'`' | b'\\')
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::Literal;

    fn text(value: &str) -> Vec<(String, Term)> {
        vec![("x".to_owned(), Term::Literal(Literal::new_simple_literal(value)))]
    }

    #[test]
    fn values_go_inside_the_where_group_past_iris_strings_comments_and_projections() {
        let query = "PREFIX a: <http://e.org/(x#> # a comment with { brace\n\
                     SELECT (EXISTS { ?s ?p ?o } AS ?e) ?s WHERE { ?s a:p \"{\" FILTER(?s < ?x) }";
        let bound = bind(query, &text("v")).unwrap().text;
        assert!(bound.ends_with("WHERE { VALUES ( ?x ) { ( \"v\" ) }  ?s a:p \"{\" FILTER(?s < ?x) }"), "{bound}");
        let long = "SELECT * { ?s ?p '''it's { here''' }";
        assert!(bind(long, &text("v")).unwrap().text.starts_with("SELECT * { VALUES"));
        let ask = "ASK { ?s ?p ?x }";
        assert_eq!(bind(ask, &text("v")).unwrap().text, "ASK { VALUES ( ?x ) { ( \"v\" ) }  ?s ?p ?x }");
    }

    #[test]
    fn values_are_terms_and_only_reads_are_accepted() {
        let bound = bind("SELECT * { ?s ?p ?x }", &text("\" } DELETE { ?s ?p ?o } #")).unwrap().text;
        assert!(bound.contains(r#"( "\" } DELETE { ?s ?p ?o } #" )"#), "{bound}");
        assert!(bind("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", &[]).is_err());
        assert!(bind("DELETE WHERE { ?s ?p ?o }", &[]).is_err());
        assert!(bind("SELECT * { ?s ?p ?o }", &[("not a name".into(), Term::from(Literal::from(1)))]).is_err());
    }

    #[test]
    fn escapes_outside_strings_are_stepped_over_or_refused() {
        let escaped = "PREFIX ex: <http://e.org/>\nSELECT * FROM ex:g\\#1 WHERE {\n ?s ?p ?x OPTIONAL { ?s ex:q ?y } }";
        let bound = bind(escaped, &text("v")).unwrap().text;
        assert!(bound.contains("WHERE { VALUES ( ?x )"), "{bound}");
        let unicode = "SELECT * WHERE \\u007B ?s ?p ?x }";
        assert!(bind(unicode, &text("v")).is_err());
    }
}
