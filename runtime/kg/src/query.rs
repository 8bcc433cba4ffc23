//! The typed query API: `Requirement::objects(ctx).where_eq(Requirement::FIELDS.status, "proposed")
//! .order_by(Requirement::FIELDS.priority).limit(20).page().await`. Fields are generated typed
//! handles, so a misspelt field or a value of the wrong type fails the build.

use std::marker::PhantomData;

use oxrdf::NamedNode;
use serde::Serialize;

use super::handle::{store_failed, Kg, Stored};
use super::mapping;
use super::store::Find;
use crate::declare::{NodeType, PredicateInfo};
use crate::error::{Error, Result};
use trails_core::Ctx;

/// Page size when none is asked for.
pub const DEFAULT_LIMIT: usize = 100;
/// Largest page: [`Query::page`] refuses a larger limit (never clamps it silently), and
/// [`Query::all`] reads this many at a time.
pub const MAX_LIMIT: usize = 1000;

/// A typed handle on field `V` of node type `T` (generated: `T::FIELDS.<name>`).
pub struct Field<T, V> {
    predicate: &'static PredicateInfo,
    types: PhantomData<fn() -> (T, V)>,
}

impl<T, V> Clone for Field<T, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, V> Copy for Field<T, V> {}

impl<T, V> Field<T, V> {
    /// Used by `#[node_type]`; not a public API.
    #[doc(hidden)]
    pub const fn __new(predicate: &'static PredicateInfo) -> Self {
        Field { predicate, types: PhantomData }
    }

    /// The field's name.
    pub fn name(&self) -> &'static str {
        self.predicate.field
    }

    /// The field's RDF predicate.
    pub fn predicate(&self) -> &'static PredicateInfo {
        self.predicate
    }
}

impl<T, V> std::fmt::Debug for Field<T, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Field({})", self.predicate.field)
    }
}

/// One page of instances and how many match in all.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The instances, in order.
    pub items: Vec<Stored<T>>,
    /// How many instances match the filters, over all pages.
    pub total: usize,
}

/// A query over `T`'s instances (see the module docs).
pub struct Query<T> {
    kg: Result<Kg>,
    filters: Vec<(&'static PredicateInfo, serde_json::Value)>,
    order: Option<(&'static PredicateInfo, bool)>,
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
        Query { kg, filters: Vec::new(), order: None, limit: None, offset: 0, error: None, node: PhantomData }
    }

    /// Keep instances whose `field` equals `value` (for a list field: contains it).
    pub fn where_eq<V: Serialize>(mut self, field: Field<T, V>, value: impl Into<V>) -> Self {
        match serde_json::to_value(value.into()) {
            Ok(json) => self.filters.push((field.predicate, json)),
            Err(error) => self.error = Some(Error::internal(error)),
        }
        self
    }

    /// Order by `field`, smallest first (numbers by value, text lexically; absent values last).
    pub fn order_by<V>(mut self, field: Field<T, V>) -> Self {
        self.order = Some((field.predicate, false));
        self
    }

    /// Order by `field`, largest first.
    pub fn order_by_desc<V>(mut self, field: Field<T, V>) -> Self {
        self.order = Some((field.predicate, true));
        self
    }

    /// At most `limit` instances: a [`page`](Query::page) holds 100 by default and at most 1000
    /// (a larger one is an error: bound a limit a client sends with `.min(MAX_LIMIT)`);
    /// [`all`](Query::all) reads up to `limit` whatever its size.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Skip the first `offset` instances.
    pub fn offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }

    /// One page (`limit`, default 100, at most 1000, from `offset`) and how many match in all.
    pub async fn page(mut self) -> Result<Page<T>> {
        let kg = self.take_kg()?;
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        if limit > MAX_LIMIT {
            return Err(Error::internal(format!(
                "a page holds at most {MAX_LIMIT} {}s, and the query asks for {limit}: read them with `all()`, \
                 or page with `offset`",
                T::LABEL
            )));
        }
        let found = kg.store().find(self.find(&kg, limit, self.offset, None)?).await.map_err(store_failed)?;
        let items = kg.get_many::<T>(found.subjects).await?;
        Ok(Page { items, total: found.total })
    }

    /// Every instance that matches, in order — from `offset`, and no more than `limit` when one
    /// is set — read a page of 1000 at a time. Unordered, each page starts after the last IRI
    /// read, so an instance written meanwhile is neither repeated nor skipped; ordered, pages
    /// follow by offset (writes between pages can shift them, and Virtuoso refuses to sort past
    /// its `ResultSetMaxRows`, 10,000 by default).
    pub async fn all(mut self) -> Result<Vec<Stored<T>>> {
        let kg = self.take_kg()?;
        let wanted = self.limit.unwrap_or(usize::MAX);
        // Built once: a filter value of the wrong datatype fails here, whatever the limit.
        let mut find = self.find(&kg, 0, self.offset, None)?;
        let mut items = Vec::new();
        while items.len() < wanted {
            let size = MAX_LIMIT.min(wanted - items.len());
            find.limit = size;
            let found = kg.store().find(find.clone()).await.map_err(store_failed)?;
            let read = found.subjects.len();
            if self.order.is_none() {
                // Cursor paging: the next page starts after this one's last IRI.
                find.after = found.subjects.last().cloned();
                find.offset = 0;
            } else {
                find.offset += read;
            }
            items.extend(kg.get_many::<T>(found.subjects).await?);
            if read < size {
                break;
            }
        }
        Ok(items)
    }

    /// How many instances match (ignores limit and offset).
    pub async fn count(self) -> Result<usize> {
        Ok(self.limit(0).offset(0).page().await?.total)
    }

    /// The knowledge graph, or the error the query met while it was built.
    fn take_kg(&mut self) -> Result<Kg> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        std::mem::replace(&mut self.kg, Err(Error::internal("a query runs once")))
    }

    /// What the store is asked for: the filters as terms of their fields' datatypes.
    fn find(&self, kg: &Kg, limit: usize, offset: usize, after: Option<NamedNode>) -> Result<Find> {
        let info = T::INFO;
        let mut filters = Vec::with_capacity(self.filters.len());
        for (predicate, value) in &self.filters {
            let term = mapping::term(predicate, predicate.field, value).map_err(|e| Error::validation(vec![e]))?;
            filters.push((NamedNode::new_unchecked(predicate.iri), term));
        }
        Ok(Find {
            graph: NamedNode::new_unchecked(mapping::graph_iri(kg.base(), info.label)),
            class: NamedNode::new_unchecked(info.iri),
            filters,
            order: self.order.map(|(p, descending)| (NamedNode::new_unchecked(p.iri), descending)),
            limit,
            offset,
            after,
        })
    }
}
