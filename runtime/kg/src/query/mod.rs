//! The typed query API:
//!
//! ```text
//! Requirement::objects(ctx)
//!     .filter(Requirement::FIELDS.status.eq("proposed") & Requirement::FIELDS.priority.le(2))
//!     .order_by(Requirement::FIELDS.priority)
//!     .then_by(Requirement::FIELDS.req_id)
//!     .limit(20)
//!     .page()
//!     .await?
//! ```
//!
//! Fields are generated typed handles, so a misspelt field, a value of the wrong type or an
//! operator the field's type has not (`gt` on a bool) fails the build. A query compiles to one
//! SPARQL text (`sparql`) that every store runs alike; an unordered one whose filters are all
//! equalities goes to the store's own lookup ([`Store::find`](crate::Store::find)) instead.

mod cursor;
mod filter;
mod sparql;

use std::marker::PhantomData;

use oxrdf::{NamedNode, Term};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::handle::{store_failed, Kg, Stored};
use super::store::{self, Find, Row};
use crate::declare::{NodeType, PredicateInfo};
use crate::error::{Error, Result};
use trails_core::Ctx;

use filter::Expr;
pub use filter::{kind, Contains, Field, Filter, MayBeAbsent, Numeric, Ordered, Single, Text};
use sparql::{Key, Position};

/// Page size when none is asked for.
pub const DEFAULT_LIMIT: usize = 100;
/// Largest page: [`Query::page`] refuses a larger limit (never clamps it silently), and
/// [`Query::all`] reads this many at a time.
pub const MAX_LIMIT: usize = 1000;

/// One page of instances, how many match in all, and where the next page starts.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Page<T> {
    /// The instances, in order.
    pub items: Vec<Stored<T>>,
    /// How many instances match the filters, over all pages.
    pub total: usize,
    /// Give it to [`Query::after`] for the page that follows (`None`: this is the last). The
    /// next page starts after this one's last instance, so writes in between neither repeat
    /// nor skip one (unless they change its sort values). Opaque, safe to hand to a client: a cursor that does not decode, or was made
    /// for another ordering, is refused.
    pub next: Option<String>,
}

/// A query over `T`'s instances (see the module docs).
pub struct Query<T> {
    kg: Result<Kg>,
    filter: Vec<Expr>,
    keys: Vec<Key>,
    after: Option<String>,
    limit: Option<usize>,
    offset: usize,
    error: Option<Error>,
    node: PhantomData<fn() -> T>,
}

impl<T: NodeType> Query<T> {
    /// Every instance of `T` in `ctx`'s knowledge graph (generated as `T::objects(ctx)`).
    pub fn new(ctx: &Ctx) -> Query<T> {
        Query::on(super::KgCtx::kg(ctx).cloned())
    }

    /// Every instance of `T` in `kg`.
    pub fn on(kg: Result<Kg>) -> Query<T> {
        Query {
            kg,
            filter: Vec::new(),
            keys: Vec::new(),
            after: None,
            limit: None,
            offset: 0,
            error: None,
            node: PhantomData,
        }
    }

    /// Keep the instances that pass `filter` (several calls: all must pass).
    pub fn filter(mut self, filter: Filter<T>) -> Self {
        match filter.expr {
            Ok(expr) => self.filter.push(expr),
            Err(error) => self.error = self.error.or(Some(error)),
        }
        self
    }

    /// Keep instances whose `field` equals `value` (on a list: has it): `filter(field.eq(value))`.
    pub fn where_eq<V: serde::Serialize, K>(self, field: Field<T, V, K>, value: impl Into<V>) -> Self {
        self.filter(field.eq(value))
    }

    /// Order by `field`, smallest first (numbers by value, text by code point, absent values
    /// last), then by IRI. Replaces any ordering set before; add keys with `then_by`.
    pub fn order_by<V, K: Single>(mut self, field: Field<T, V, K>) -> Self {
        self.keys = vec![(field.predicate(), false)];
        self
    }

    /// Order by `field`, largest first (absent values still last).
    pub fn order_by_desc<V, K: Single>(mut self, field: Field<T, V, K>) -> Self {
        self.keys = vec![(field.predicate(), true)];
        self
    }

    /// Among instances equal on the keys before, order by `field`, smallest first.
    pub fn then_by<V, K: Single>(mut self, field: Field<T, V, K>) -> Self {
        self.keys.push((field.predicate(), false));
        self
    }

    /// Among instances equal on the keys before, order by `field`, largest first.
    pub fn then_by_desc<V, K: Single>(mut self, field: Field<T, V, K>) -> Self {
        self.keys.push((field.predicate(), true));
        self
    }

    /// At most `limit` instances: a [`page`](Query::page) holds 100 by default and at most 1000
    /// (a larger one is an error: bound a limit a client sends with `.min(MAX_LIMIT)`);
    /// [`all`](Query::all) reads up to `limit` whatever its size.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Skip the first `offset` instances (after the cursor, if one is given).
    pub fn offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }

    /// Start after the instance a previous page ended on ([`Page::next`]). The query must
    /// order as the one that made the cursor did; a cursor that does not decode, or was made
    /// for another ordering, is a validation error on `cursor`.
    pub fn after(mut self, cursor: impl Into<String>) -> Self {
        self.after = Some(cursor.into());
        self
    }

    /// One page (`limit`, default 100, at most 1000, from the cursor and `offset`), how many
    /// match in all, and the cursor of the next page.
    pub async fn page(mut self) -> Result<Page<T>> {
        let (kg, expr) = self.start()?;
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        if limit > MAX_LIMIT {
            return Err(Error::internal(format!(
                "a page holds at most {MAX_LIMIT} {}s, and the query asks for {limit}: read them with `all()`, \
                 or page with `after`",
                T::LABEL
            )));
        }
        let position = self.position()?;
        if limit == 0 {
            return Ok(Page { items: Vec::new(), total: self.count_of(&kg, &expr).await?, next: None });
        }
        let read = self.read(&kg, &expr, position.as_ref(), limit, self.offset).await?;
        // A first page that holds every match has counted them: no second query.
        let total = match (read.total, &position, self.offset, &read.next) {
            (Some(total), ..) => total,
            (None, None, 0, None) => read.read,
            _ => self.count_of(&kg, &expr).await?,
        };
        let next = read.next.map(|position| cursor::encode(T::INFO, &self.keys, &position));
        Ok(Page { items: read.items, total, next })
    }

    /// Every instance that matches, in order — from the cursor and `offset`, and no more than
    /// `limit` when one is set — read 1000 at a time, each read starting after the last
    /// instance of the one before (writes in between that leave sort values alone neither repeat
    /// nor skip one). Virtuoso
    /// refuses to sort more than its `ResultSetMaxRows` (10,000 by default) in one read.
    pub async fn all(mut self) -> Result<Vec<Stored<T>>> {
        let (kg, expr) = self.start()?;
        let wanted = self.limit.unwrap_or(usize::MAX);
        let mut position = self.position()?;
        let mut offset = self.offset;
        let mut items = Vec::new();
        while items.len() < wanted {
            let size = MAX_LIMIT.min(wanted - items.len());
            let read = self.read(&kg, &expr, position.as_ref(), size, offset).await?;
            items.extend(read.items);
            match read.next {
                Some(next) => position = Some(next),
                None => break,
            }
            offset = 0;
        }
        Ok(items)
    }

    /// How many instances match (ignores the cursor, limit and offset).
    pub async fn count(mut self) -> Result<usize> {
        let (kg, expr) = self.start()?;
        self.count_of(&kg, &expr).await
    }

    /// How many matching instances have each value of `field` (on a list: each item), in the
    /// values' order. Instances without a value are not counted: count them with `is_none`.
    pub async fn count_by<V: DeserializeOwned, K>(mut self, field: Field<T, V, K>) -> Result<Vec<(V, usize)>> {
        let (kg, expr) = self.start()?;
        let predicate = field.predicate();
        // References in their IRIs' order (Virtuoso orders IRIs by an internal id).
        let order = if predicate.datatype == crate::declare::Datatype::Iri { "STR(?v)" } else { "?v" };
        let tail = format!("GROUP BY ?v ORDER BY {order}");
        let query = sparql::aggregate(
            dataset(&kg),
            T::INFO,
            &expr,
            &[(predicate, "?v")],
            "?v (COUNT(DISTINCT ?s) AS ?n)",
            &tail,
        );
        let mut counts = Vec::new();
        for row in select(&kg, query).await? {
            let Some(value) = store::bound(&row, "v") else { continue };
            counts.push((value_of(predicate, value)?, store::count_of(std::slice::from_ref(&row))));
        }
        Ok(counts)
    }

    /// The smallest value of `field` among the matching instances (`None`: no value).
    pub async fn min<V: Ordered + DeserializeOwned, K>(self, field: Field<T, V, K>) -> Result<Option<V>> {
        self.extreme(field, "MIN").await
    }

    /// The largest value of `field` among the matching instances (`None`: no value).
    pub async fn max<V: Ordered + DeserializeOwned, K>(self, field: Field<T, V, K>) -> Result<Option<V>> {
        self.extreme(field, "MAX").await
    }

    /// The sum of `field`'s values over the matching instances (on a list: of every item).
    pub async fn sum<V: Numeric, K>(mut self, field: Field<T, V, K>) -> Result<V> {
        let (kg, expr) = self.start()?;
        let predicate = field.predicate();
        let query = sparql::aggregate(
            dataset(&kg),
            T::INFO,
            &expr,
            &[(predicate, "?v")],
            "(SUM(?v) AS ?x) (COUNT(?v) AS ?n)",
            "",
        );
        let rows = select(&kg, query).await?;
        match rows.first() {
            Some(row) => sum_of(predicate, row),
            None => number_of(predicate, &Term::Literal(oxrdf::Literal::from(0))),
        }
    }

    /// The sum of `field` per value of `group` (on a list: per item), in the group values'
    /// order; a group whose instances have no value of `field` is left out. `sum` per owner,
    /// per status, … in one query.
    pub async fn sum_by<G: DeserializeOwned, KG, V: Numeric, KV>(
        mut self,
        group: Field<T, G, KG>,
        field: Field<T, V, KV>,
    ) -> Result<Vec<(G, V)>> {
        let (kg, expr) = self.start()?;
        let (by, predicate) = (group.predicate(), field.predicate());
        let order = if by.datatype == crate::declare::Datatype::Iri { "STR(?g)" } else { "?g" };
        let query = sparql::aggregate(
            dataset(&kg),
            T::INFO,
            &expr,
            &[(by, "?g"), (predicate, "?v")],
            "?g (SUM(?v) AS ?x) (COUNT(?v) AS ?n)",
            &format!("GROUP BY ?g ORDER BY {order}"),
        );
        let mut sums = Vec::new();
        for row in select(&kg, query).await? {
            let Some(value) = store::bound(&row, "g") else { continue };
            sums.push((value_of(by, value)?, sum_of(predicate, &row)?));
        }
        Ok(sums)
    }

    /// The mean of `field`'s values over the matching instances (`None`: no value).
    pub async fn avg<V: Numeric, K>(mut self, field: Field<T, V, K>) -> Result<Option<f64>> {
        let (kg, expr) = self.start()?;
        let query = sparql::aggregate(
            dataset(&kg),
            T::INFO,
            &expr,
            &[(field.predicate(), "?v")],
            "(AVG(?v) AS ?x) (COUNT(?v) AS ?n)",
            "",
        );
        let rows = select(&kg, query).await?;
        let Some(row) = rows.first().filter(|row| store::count_of(std::slice::from_ref(*row)) > 0) else {
            return Ok(None);
        };
        let mean = store::bound(row, "x").map(store::term_text).and_then(|text| text.parse::<f64>().ok());
        mean.map(Some).ok_or_else(|| Error::internal(format!("the store's mean of {} is not a number", field.name())))
    }

    async fn extreme<V: DeserializeOwned, K>(mut self, field: Field<T, V, K>, function: &str) -> Result<Option<V>> {
        let (kg, expr) = self.start()?;
        let predicate = field.predicate();
        let projection = format!("({function}(?v) AS ?x)");
        let query = sparql::aggregate(dataset(&kg), T::INFO, &expr, &[(predicate, "?v")], &projection, "");
        let rows = select(&kg, query).await?;
        match rows.first().and_then(|row| store::bound(row, "x")) {
            Some(value) => value_of(predicate, value).map(Some),
            None => Ok(None),
        }
    }

    /// The knowledge graph and the filters as one condition, or the error the query met while
    /// it was built.
    fn start(&mut self) -> Result<(Kg, Expr)> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        let kg = std::mem::replace(&mut self.kg, Err(Error::internal("a query runs once")))?;
        Ok((kg, Expr::All(std::mem::take(&mut self.filter))))
    }

    /// Where the cursor says to start.
    fn position(&self) -> Result<Option<Position>> {
        self.after.as_deref().map(|text| cursor::decode(T::INFO, &self.keys, text)).transpose()
    }

    async fn count_of(&self, kg: &Kg, expr: &Expr) -> Result<usize> {
        if let Some(find) = equalities::<T>(kg, expr) {
            return Ok(kg.store().find(find).await.map_err(store_failed)?.total);
        }
        let rows = select(kg, sparql::count(dataset(kg), T::INFO, expr)).await?;
        Ok(store::count_of(&rows))
    }

    /// `limit` instances after `position` and `offset`, and where the next read starts if
    /// there is more.
    async fn read(
        &self,
        kg: &Kg,
        expr: &Expr,
        position: Option<&Position>,
        limit: usize,
        offset: usize,
    ) -> Result<Read<T>> {
        // One more than asked: whether another page follows.
        let lookup = if self.keys.is_empty() { equalities::<T>(kg, expr) } else { None };
        let (mut positions, total) = match lookup {
            Some(mut find) => {
                find.limit = limit + 1;
                find.offset = offset;
                find.after = position.map(|p| p.iri.clone());
                let found = kg.store().find(find).await.map_err(store_failed)?;
                let positions = found.subjects.into_iter().map(|iri| Position { keys: Vec::new(), iri }).collect();
                (positions, Some(found.total))
            }
            None => (self.positions(kg, expr, position, limit + 1, offset).await?, None),
        };
        let more = positions.len() > limit;
        positions.truncate(limit);
        let next = if more { positions.last().cloned() } else { None };
        let read = positions.len();
        let subjects: Vec<NamedNode> = positions.into_iter().map(|p| p.iri).collect();
        Ok(Read { items: kg.get_many::<T>(subjects).await?, read, total, next })
    }

    /// Where the instances of a page are, through the page's SPARQL query.
    async fn positions(
        &self,
        kg: &Kg,
        expr: &Expr,
        position: Option<&Position>,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<Position>> {
        let query = sparql::page(dataset(kg), T::INFO, expr, &self.keys, position, limit, offset);
        let mut positions: Vec<Position> = Vec::with_capacity(limit);
        let mut seen = std::collections::HashSet::new();
        for row in select(kg, query).await? {
            let Some(iri) = store::bound_iri(&row, "s") else { continue };
            // A single-valued field holding two values (written outside Trails) repeats its
            // instance: the first row, its smallest, places it.
            if !seen.insert(iri.clone()) {
                continue;
            }
            let keys = (0..self.keys.len()).map(|n| store::bound(&row, &format!("k{n}")).cloned()).collect();
            positions.push(Position { keys, iri });
        }
        Ok(positions)
    }
}

/// The store's own lookup when every filter is an equality (`where_eq`, the commonest query)
/// and the order is by IRI: its index answers those, and counts the matches in the same pass,
/// without planning a SPARQL query. Same answers, cursors and order as the SPARQL query; the
/// conformance suite runs both.
fn equalities<T: NodeType>(kg: &Kg, expr: &Expr) -> Option<Find> {
    fn collect(expr: &Expr, out: &mut Vec<(NamedNode, Term)>) -> bool {
        match expr {
            Expr::All(all) => all.iter().all(|e| collect(e, out)),
            Expr::Value(predicate, filter::Test::Eq(term)) => {
                out.push((NamedNode::new_unchecked(predicate.iri), term.clone()));
                true
            }
            _ => false,
        }
    }
    // Read with its subtypes, a type's instances are in several graphs: SPARQL reads those.
    if kg.reasoning() == crate::registry::Reasoning::Rdfs && !super::mapping::subtypes(T::INFO).is_empty() {
        return None;
    }
    let mut filters = Vec::new();
    if !collect(expr, &mut filters) {
        return None;
    }
    Some(Find {
        graphs: vec![NamedNode::new_unchecked(super::mapping::graph_iri(kg.base(), T::INFO.label))],
        class: NamedNode::new_unchecked(T::INFO.iri),
        filters,
        limit: 0,
        offset: 0,
        after: None,
    })
}

/// What one read of a page found.
struct Read<T> {
    items: Vec<Stored<T>>,
    /// Instances on the page (before those deleted meanwhile are left out).
    read: usize,
    /// How many match in all, when the read counted them.
    total: Option<usize>,
    next: Option<Position>,
}

/// The graphs `kg`'s reads see.
fn dataset(kg: &Kg) -> sparql::Dataset<'_> {
    sparql::Dataset { base: kg.base(), reasoning: kg.reasoning() }
}

async fn select(kg: &Kg, query: String) -> Result<Vec<Row>> {
    kg.store().select(query, Vec::new()).await.map_err(store_failed)
}

/// The sum `?x` of `?n` values of `predicate` in `row`: an error when values were there and the
/// store has no sum (its arithmetic failed: an integer sum past its range), never zero.
fn sum_of<V: DeserializeOwned>(predicate: &PredicateInfo, row: &Row) -> Result<V> {
    match (store::bound(row, "x"), store::count_of(std::slice::from_ref(row))) {
        (Some(total), _) => number_of(predicate, total),
        (None, values) if values > 0 => Err(Error::internal(format!(
            "the sum of {} over {values} values has no value in the store (past the integer range?)",
            predicate.field
        ))),
        _ => number_of(predicate, &Term::Literal(oxrdf::Literal::from(0))),
    }
}

/// A stored value of `predicate` as a Rust value.
fn value_of<V: DeserializeOwned>(predicate: &PredicateInfo, term: &Term) -> Result<V> {
    let json: Value = super::mapping::json_of(predicate, term).ok_or_else(|| {
        Error::internal(format!("a stored {} does not read as its datatype: {term}", predicate.field))
    })?;
    serde_json::from_value(json).map_err(|e| Error::internal(format!("a stored {}: {e}", predicate.field)))
}

/// An aggregate over numbers as the field's type (a sum of integers is an integer, of doubles a
/// double; a sum too large for the type is an error, not a wrapped value).
fn number_of<V: DeserializeOwned>(predicate: &PredicateInfo, term: &Term) -> Result<V> {
    let text = store::term_text(term);
    let json: Value = match predicate.datatype {
        crate::declare::Datatype::Integer => text
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| text.parse::<u64>().map(Value::from))
            .map_err(|_| Error::internal(format!("the sum of {} ({text}) does not fit 64 bits", predicate.field)))?,
        _ => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| Error::internal(format!("the sum of {} ({text}) is not a number", predicate.field)))?,
    };
    serde_json::from_value(json)
        .map_err(|e| Error::internal(format!("the sum of {} ({text}) does not fit its type: {e}", predicate.field)))
}
