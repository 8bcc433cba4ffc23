//! A typed query as SPARQL, the same text for every store. Values are RDF terms written by the
//! RDF library (N-Triples syntax, escaped), never caller text spliced into the query. Only
//! joins, `UNION`, `MINUS`, `VALUES` and `FILTER` on bound variables are used: Virtuoso 7
//! answers `EXISTS` wrongly when nothing outside it binds a variable.

use std::fmt::Write as _;

use oxrdf::{Literal, NamedNode, Term};

use super::filter::{Cmp, Expr, Test, TextOp};
use crate::declare::{NodeTypeInfo, PredicateInfo};
use crate::mapping;
use crate::registry::Reasoning;

/// Where a keyset page starts: the sort keys' values of the last instance read, and its IRI.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Position {
    pub(crate) keys: Vec<Option<Term>>,
    pub(crate) iri: NamedNode,
}

/// The graphs a read sees: the store's `base`, and whether a node type's reads include the
/// types that extend it.
#[derive(Clone, Copy)]
pub(crate) struct Dataset<'a> {
    pub(crate) base: &'a str,
    pub(crate) reasoning: Reasoning,
}

/// Builds the WHERE group of one query: fresh variable names, graphs by node type. An instance
/// of a type read with its subtypes (`rdfs`) is in one of their graphs: its subject's graph is
/// then a variable (`?g_s` for `?s`), bound to that list where the subject is.
pub(crate) struct Compiler<'a> {
    dataset: Dataset<'a>,
    fresh: usize,
    out: String,
}

impl<'a> Compiler<'a> {
    pub(crate) fn new(dataset: Dataset<'a>) -> Self {
        Compiler { dataset, fresh: 0, out: String::new() }
    }

    fn var(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("?{prefix}{}", self.fresh)
    }

    /// The subtypes whose instances a read of `info` sees too.
    fn subtypes(&self, info: &NodeTypeInfo) -> &'static [&'static NodeTypeInfo] {
        match self.dataset.reasoning {
            Reasoning::Rdfs => mapping::subtypes(info),
            Reasoning::None => &[],
        }
    }

    /// Where `subject`'s triples are read, an instance of `info`: `GRAPH <its type's graph>`; read
    /// with its subtypes, `GRAPH ?g_<subject>`, the graph its binding found it in (an instance's
    /// triples are in its own type's graph only).
    fn graph(&self, info: &NodeTypeInfo, subject: &str) -> String {
        match self.subtypes(info) {
            [] => format!("GRAPH {}", NamedNode::new_unchecked(mapping::graph_iri(self.dataset.base, info.label))),
            _ => format!("GRAPH {}", graph_variable(subject)),
        }
    }

    /// `?s` is an instance of `info` that passes `expr`.
    pub(crate) fn instances(&mut self, info: &NodeTypeInfo, expr: &Expr) {
        self.bind(info, "?s");
        self.expr(info, "?s", expr, true);
    }

    /// `subject` passes `expr`, as patterns added to the current group; `bound`: the group
    /// binds `subject` already. Answers whether it does after. Positive conditions come first,
    /// negations last as `MINUS`, which removes from what the group has matched so far — so a
    /// group holding only negations binds its subject first (`MINUS` from nothing leaves
    /// nothing), and every union branch and `MINUS` group binds it (`MINUS` of a solution that
    /// shares no variable removes nothing).
    fn expr(&mut self, info: &NodeTypeInfo, subject: &str, expr: &Expr, bound: bool) -> bool {
        match expr {
            Expr::Value(predicate, test) => {
                self.value(info, subject, predicate, test);
                true
            }
            Expr::Ref { via, target, inner } => {
                let object = self.var("r");
                let graph = self.graph(info, subject);
                let _ = write!(self.out, "{graph} {{ {subject} {} {object} }} ", NamedNode::new_unchecked(via.iri));
                self.bind(target, &object);
                self.expr(target, &object, inner, true);
                true
            }
            Expr::All(all) => {
                let (negations, positives): (Vec<&Expr>, Vec<&Expr>) =
                    all.iter().partition(|e| matches!(e, Expr::Not(_)));
                let mut bound = bound;
                for expr in positives.into_iter().chain(negations) {
                    bound = self.expr(info, subject, expr, bound);
                }
                bound
            }
            Expr::Any(any) if any.is_empty() => {
                self.out.push_str("FILTER(false) ");
                bound
            }
            Expr::Any(any) => {
                for (n, expr) in any.iter().enumerate() {
                    if n > 0 {
                        self.out.push_str("UNION ");
                    }
                    self.group(info, subject, expr);
                }
                true
            }
            Expr::Not(inner) => {
                if !bound {
                    self.bind(info, subject);
                }
                self.out.push_str("MINUS ");
                self.group(info, subject, inner);
                true
            }
        }
    }

    /// `{ … }`: a group of its own in which `subject` passes `expr`, and is bound.
    fn group(&mut self, info: &NodeTypeInfo, subject: &str, expr: &Expr) {
        self.out.push_str("{ ");
        if !self.expr(info, subject, expr, false) {
            self.bind(info, subject);
        }
        self.out.push_str("} ");
    }

    /// `subject` is an instance of `info` (or, read with its subtypes, of one of them: each
    /// instance holds its type's class and its parents').
    fn bind(&mut self, info: &NodeTypeInfo, subject: &str) {
        let class = NamedNode::new_unchecked(info.iri);
        let subtypes = self.subtypes(info);
        if subtypes.is_empty() {
            let graph = self.graph(info, subject);
            let _ = write!(self.out, "{graph} {{ {subject} a {class} }} ");
            return;
        }
        let graph = graph_variable(subject);
        let _ = write!(self.out, "VALUES {graph} {{");
        for node in std::iter::once(info).chain(subtypes.iter().copied()) {
            let _ =
                write!(self.out, " {}", NamedNode::new_unchecked(mapping::graph_iri(self.dataset.base, node.label)));
        }
        let _ = write!(self.out, " }} GRAPH {graph} {{ {subject} a {class} }} ");
    }

    fn value(&mut self, info: &NodeTypeInfo, subject: &str, predicate: &PredicateInfo, test: &Test) {
        let graph = self.graph(info, subject);
        let p = NamedNode::new_unchecked(predicate.iri);
        let condition = |v: &str| -> Option<String> {
            match test {
                Test::Eq(_) | Test::In(_) | Test::Present => None,
                Test::Cmp(cmp, term) => Some(format!("{v} {} {term}", cmp.operator())),
                Test::Between(low, high) => Some(format!("{v} >= {low} && {v} <= {high}")),
                Test::Text { op, needle, fold } => {
                    let text = if *fold { format!("LCASE(STR({v}))") } else { format!("STR({v})") };
                    let function = match op {
                        TextOp::Contains => "CONTAINS",
                        TextOp::StartsWith => "STRSTARTS",
                        TextOp::EndsWith => "STRENDS",
                    };
                    Some(format!("{function}({text}, {})", Literal::new_simple_literal(needle)))
                }
            }
        };
        match test {
            // The term itself in the pattern: the store's index finds it, and equality is the
            // term's (as every write maps a value to one term).
            Test::Eq(term) => {
                let _ = write!(self.out, "{graph} {{ {subject} {p} {term} }} ");
            }
            Test::In(terms) if terms.is_empty() => self.out.push_str("FILTER(false) "),
            Test::In(terms) => {
                let v = self.var("v");
                let _ = write!(self.out, "VALUES {v} {{");
                for term in terms {
                    let _ = write!(self.out, " {term}");
                }
                let _ = write!(self.out, " }} {graph} {{ {subject} {p} {v} }} ");
            }
            _ => {
                let v = self.var("v");
                let _ = write!(self.out, "{graph} {{ {subject} {p} {v} ");
                if let Some(condition) = condition(&v) {
                    let _ = write!(self.out, "FILTER({condition}) ");
                }
                self.out.push_str("} ");
            }
        }
    }

    /// The group so far.
    pub(crate) fn finish(self) -> String {
        self.out
    }
}

impl Cmp {
    fn operator(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
}

/// The variable holding the graph `subject` (`?s`, `?r1`) is in: `?g_s`, `?g_r1`.
fn graph_variable(subject: &str) -> String {
    format!("?g_{}", subject.trim_start_matches('?'))
}

/// One sort key: a single-valued field, and whether largest first.
pub(crate) type Key = (&'static PredicateInfo, bool);

/// The page query: instances of `info` passing `expr`, ordered by `keys` (absent values last)
/// then by IRI, after `position` if given. Projects `?s` and `?k0…` (the keys' values).
pub(crate) fn page(
    dataset: Dataset<'_>,
    info: &NodeTypeInfo,
    expr: &Expr,
    keys: &[Key],
    position: Option<&Position>,
    limit: usize,
    offset: usize,
) -> String {
    let mut compiler = Compiler::new(dataset);
    compiler.instances(info, expr);
    let graph = compiler.graph(info, "?s");
    let mut body = compiler.finish();
    let mut projection = String::from("?s");
    let mut order = String::new();
    for (n, (predicate, descending)) in keys.iter().enumerate() {
        let p = NamedNode::new_unchecked(predicate.iri);
        if textual(predicate) {
            let _ = write!(body, "OPTIONAL {{ {graph} {{ ?s {p} ?o{n} }} BIND(STR(?o{n}) AS ?k{n}) }} ");
        } else {
            let _ = write!(body, "OPTIONAL {{ {graph} {{ ?s {p} ?k{n} }} }} ");
        }
        let _ = write!(projection, " ?k{n}");
        let direction = if *descending { format!("DESC(?k{n})") } else { format!("?k{n}") };
        let _ = write!(order, "(!BOUND(?k{n})) {direction} ");
    }
    if let Some(position) = position {
        let _ = write!(body, "FILTER({}) ", after(keys, position));
    }
    format!("SELECT DISTINCT {projection} WHERE {{ {body}}} ORDER BY {order}STR(?s) LIMIT {limit} OFFSET {offset}")
}

/// How many instances of `info` pass `expr`.
pub(crate) fn count(dataset: Dataset<'_>, info: &NodeTypeInfo, expr: &Expr) -> String {
    let mut compiler = Compiler::new(dataset);
    compiler.instances(info, expr);
    format!("SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ {}}}", compiler.finish())
}

/// An aggregate over the instances that pass `expr`, each counted once however many ways it
/// passes, joined with their values of `fields` (each bound to its variable, `?v`, `?g`):
/// `projection` reads them, `tail` is `GROUP BY …` or empty.
pub(crate) fn aggregate(
    dataset: Dataset<'_>,
    info: &NodeTypeInfo,
    expr: &Expr,
    fields: &[(&PredicateInfo, &str)],
    projection: &str,
    tail: &str,
) -> String {
    let mut compiler = Compiler::new(dataset);
    compiler.instances(info, expr);
    let graph = compiler.graph(info, "?s");
    let read_with_subtypes = !compiler.subtypes(info).is_empty();
    let matching = compiler.finish();
    let mut values = String::new();
    for (predicate, variable) in fields {
        let _ = write!(values, "{graph} {{ ?s {} {variable} }} ", NamedNode::new_unchecked(predicate.iri));
    }
    if once(expr) {
        format!("SELECT {projection} WHERE {{ {matching}{values}}} {tail}")
    } else {
        // A sub-select keeps each instance once before its values are aggregated.
        // (With the graph it is in, when that is a variable: its values are read there.)
        let graph = if read_with_subtypes { " ?g_s" } else { "" };
        format!("SELECT {projection} WHERE {{ {{ SELECT DISTINCT ?s{graph} WHERE {{ {matching}}} }} {values}}} {tail}")
    }
}

/// Whether `expr` matches each instance in one way at most (so the values it is joined with
/// need no `DISTINCT` first): a fixed value matches one triple; a test on a single-valued field
/// one; a negation removes only. Lists, unions and references may match several ways.
fn once(expr: &Expr) -> bool {
    match expr {
        Expr::Value(_, Test::Eq(_)) => true,
        Expr::Value(predicate, _) => !predicate.many,
        Expr::All(all) => all.iter().all(once),
        Expr::Not(_) => true,
        Expr::Any(_) | Expr::Ref { .. } => false,
    }
}

/// Whether a sort key is compared as its text: SPARQL's `<` has no order for references,
/// booleans or JSON literals (an error, which a `FILTER` reads as false), and Virtuoso orders
/// IRIs by an internal id — and compares a stored `xsd:string` with a constant in a `FILTER` by
/// when it was stored (its `ORDER BY` is right), so a cursor past a string skipped the
/// instances stored before it. Their text orders them the same way on every store.
pub(crate) fn textual(predicate: &PredicateInfo) -> bool {
    use crate::declare::Datatype;
    matches!(predicate.datatype, Datatype::String | Datatype::Iri | Datatype::Boolean | Datatype::Json | Datatype::Blob)
}

/// Past `position` in the order of `keys` (absent values last), then of IRIs.
fn after(keys: &[Key], position: &Position) -> String {
    let mut branches = Vec::new();
    let mut equal: Vec<String> = Vec::new();
    for (n, ((_, descending), value)) in keys.iter().zip(&position.keys).enumerate() {
        let k = format!("?k{n}");
        match value {
            Some(value) => {
                let beyond = if *descending { "<" } else { ">" };
                let mut branch = equal.clone();
                branch.push(format!("(!BOUND(?k{n}) || {k} {beyond} {value})"));
                branches.push(branch.join(" && "));
                equal.push(format!("(BOUND(?k{n}) && {k} = {value})"));
            }
            // Nothing sorts after an absent value but other absent ones.
            None => equal.push(format!("!BOUND(?k{n})")),
        }
    }
    equal.push(format!("STR(?s) > {}", Literal::new_simple_literal(position.iri.as_str())));
    branches.push(equal.join(" && "));
    branches.iter().map(|b| format!("({b})")).collect::<Vec<_>>().join(" || ")
}
