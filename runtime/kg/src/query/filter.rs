//! Conditions on a node type's fields: `T::FIELDS.<field>.<operator>(value)`, combined with
//! `and`, `or` and `not` (or `&`, `|`, `!`). Which operators a field has follows from its type,
//! so a condition that cannot hold (`gt` on a bool, `contains` on an integer) fails the build
//! with a message that names the ones that fit.

use std::marker::PhantomData;

use oxrdf::Term;
use serde::Serialize;

use crate::declare::{DateTime, NodeType, NodeTypeInfo, PredicateInfo, Ref};
use crate::error::{Error, Result};
use crate::mapping;

/// How many values a field holds: the third parameter of [`Field`], generated from the field's
/// Rust type. It decides which operators apply (`is_none` on an optional field, `contains` an
/// item on a list).
pub mod kind {
    /// A required value (`T`).
    #[derive(Debug)]
    pub enum One {}
    /// An optional value (`Option<T>`).
    #[derive(Debug)]
    pub enum Optional {}
    /// A list (`Vec<T>` or `Option<Vec<T>>`): one triple per item.
    #[derive(Debug)]
    pub enum List {}
}
use kind::{List, One, Optional};

/// A typed handle on field `V` of node type `T`, holding `K` ([`field`](crate::field)) values (generated:
/// `T::FIELDS.<name>`).
pub struct Field<T, V, K = One> {
    predicate: &'static PredicateInfo,
    types: PhantomData<Types<T, V, K>>,
}

/// `fn() -> …`: the handle is `Send`, `Sync` and `Copy` whatever the types.
type Types<T, V, K> = fn() -> (T, V, K);

impl<T, V, K> Clone for Field<T, V, K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, V, K> Copy for Field<T, V, K> {}

impl<T, V, K> std::fmt::Debug for Field<T, V, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Field({})", self.predicate.field)
    }
}

impl<T, V, K> Field<T, V, K> {
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

/// Values with an order that `lt`, `le`, `gt`, `ge`, `between`, `min` and `max` follow:
/// numbers and date-times.
#[diagnostic::on_unimplemented(
    message = "`{Self}` values have no order to compare",
    label = "`lt`, `le`, `gt`, `ge`, `between`, `min` and `max` need a number or a date-time field",
    note = "match text with `eq`, `contains`, `starts_with`, `ends_with` (or their `_ignore_case` forms); booleans and enums with `eq` or `is_in`"
)]
pub trait Ordered {}

/// Numbers: what `sum` and `avg` add up.
#[diagnostic::on_unimplemented(
    message = "`{Self}` values cannot be added up",
    label = "`sum` and `avg` need a number field",
    note = "count instances per value with `count_by`"
)]
pub trait Numeric: Ordered + serde::de::DeserializeOwned {}

macro_rules! numbers {
    ($($t:ty),*) => { $(impl Ordered for $t {} impl Numeric for $t {})* };
}
numbers!(i8, i16, i32, i64, u8, u16, u32, u64, isize, usize, f32, f64);
impl Ordered for DateTime {}

/// Text: what `starts_with`, `ends_with` and the case-insensitive matches apply to.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not text",
    label = "`starts_with`, `ends_with` and the `_ignore_case` matches need a `String` field",
    note = "compare numbers and date-times with `eq`, `lt`, `gt` or `between`; booleans and enums with `eq` or `is_in`"
)]
pub trait Text {}
impl Text for String {}

/// What `contains` means for a field: a substring of a text value, or an item of a list.
#[diagnostic::on_unimplemented(
    message = "`contains` does not apply to this field: it holds `{V}`, and the argument is `{Q}`",
    label = "`contains` takes a substring of a `String` field, or an item of a list field",
    note = "compare numbers and date-times with `eq`, `lt`, `gt` or `between`; booleans and enums with `eq` or `is_in`"
)]
pub trait Contains<V, Q> {
    #[doc(hidden)]
    fn test(predicate: &'static PredicateInfo, value: Q) -> Result<Test>;
}

impl<Q: Into<String>> Contains<String, Q> for One {
    fn test(_: &'static PredicateInfo, value: Q) -> Result<Test> {
        Ok(Test::Text { op: TextOp::Contains, needle: value.into(), fold: false })
    }
}
impl<Q: Into<String>> Contains<String, Q> for Optional {
    fn test(_: &'static PredicateInfo, value: Q) -> Result<Test> {
        Ok(Test::Text { op: TextOp::Contains, needle: value.into(), fold: false })
    }
}
impl<V: Serialize, Q: Into<V>> Contains<V, Q> for List {
    fn test(predicate: &'static PredicateInfo, value: Q) -> Result<Test> {
        Ok(Test::Eq(term_of(predicate, value.into())?))
    }
}

/// Fields that may have no value: `is_none` and `is_some` apply.
#[diagnostic::on_unimplemented(
    message = "this field is required: every instance has a value for it",
    label = "`is_none` and `is_some` apply to `Option<…>` and list fields",
    note = "a required field always has a value; filter on the value itself instead"
)]
pub trait MayBeAbsent {}
impl MayBeAbsent for Optional {}
impl MayBeAbsent for List {}

/// Fields that hold one value at most: what `order_by` and cursors sort on.
#[diagnostic::on_unimplemented(
    message = "a list field has no single value to order by",
    label = "`order_by` needs a field that holds one value (`T` or `Option<T>`)",
    note = "filter on a list with `contains` or `is_in`, and order by another field"
)]
pub trait Single {}
impl Single for One {}
impl Single for Optional {}

/// What one field value is tested for.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub enum Test {
    /// The value is this term.
    Eq(Term),
    /// The value is one of these terms.
    In(Vec<Term>),
    /// The value compares so with this term.
    Cmp(Cmp, Term),
    /// The value lies between these (inclusive).
    Between(Term, Term),
    /// Text matching.
    Text {
        /// How.
        op: TextOp,
        /// What to find.
        needle: String,
        /// Ignoring case.
        fold: bool,
    },
    /// Some value is there.
    Present,
}

/// A comparison.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// A text match.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub enum TextOp {
    /// A substring.
    Contains,
    /// A prefix.
    StartsWith,
    /// A suffix.
    EndsWith,
}

/// A condition as the store is asked it.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    /// Some value of the field passes the test.
    Value(&'static PredicateInfo, Test),
    /// Some instance the reference field points at (of `target`) passes `inner`.
    Ref { via: &'static PredicateInfo, target: &'static NodeTypeInfo, inner: Box<Expr> },
    /// Every one holds (none: true).
    All(Vec<Expr>),
    /// One holds at least (none: false).
    Any(Vec<Expr>),
    /// It does not hold.
    Not(Box<Expr>),
}

/// A condition on `T`'s instances, for [`Query::filter`](super::Query::filter). On a list
/// field, a condition holds when some item passes it.
pub struct Filter<T> {
    pub(crate) expr: Result<Expr>,
    node: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Filter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Filter").field(&self.expr).finish()
    }
}

impl<T> Filter<T> {
    fn new(expr: Result<Expr>) -> Self {
        Filter { expr, node: PhantomData }
    }

    fn value(predicate: &'static PredicateInfo, test: Result<Test>) -> Self {
        Filter::new(test.map(|test| Expr::Value(predicate, test)))
    }

    /// Holds for every instance (what `and` starts from).
    pub fn always() -> Self {
        Filter::new(Ok(Expr::All(Vec::new())))
    }

    /// Holds for no instance (what `or` starts from).
    pub fn never() -> Self {
        Filter::new(Ok(Expr::Any(Vec::new())))
    }

    /// Both hold.
    pub fn and(self, other: Filter<T>) -> Self {
        Filter::new(match (self.expr, other.expr) {
            (Ok(Expr::All(mut all)), Ok(b)) => {
                all.push(b);
                Ok(Expr::All(all))
            }
            (Ok(a), Ok(b)) => Ok(Expr::All(vec![a, b])),
            (Err(e), _) | (_, Err(e)) => Err(e),
        })
    }

    /// One holds at least.
    pub fn or(self, other: Filter<T>) -> Self {
        Filter::new(match (self.expr, other.expr) {
            (Ok(Expr::Any(mut any)), Ok(b)) => {
                any.push(b);
                Ok(Expr::Any(any))
            }
            (Ok(a), Ok(b)) => Ok(Expr::Any(vec![a, b])),
            (Err(e), _) | (_, Err(e)) => Err(e),
        })
    }

    /// It does not hold (on an optional or list field, `!x.eq(v)` also keeps the instances
    /// without a value).
    #[allow(clippy::should_implement_trait)] // `Not` is implemented too; this reads without an import.
    pub fn not(self) -> Self {
        Filter::new(self.expr.map(|e| Expr::Not(Box::new(e))))
    }
}

impl<T> std::ops::BitAnd for Filter<T> {
    type Output = Filter<T>;
    fn bitand(self, other: Filter<T>) -> Filter<T> {
        self.and(other)
    }
}

impl<T> std::ops::BitOr for Filter<T> {
    type Output = Filter<T>;
    fn bitor(self, other: Filter<T>) -> Filter<T> {
        self.or(other)
    }
}

impl<T> std::ops::Not for Filter<T> {
    type Output = Filter<T>;
    fn not(self) -> Filter<T> {
        Filter::not(self)
    }
}

/// `value` as the term the store holds for `predicate` (the mapping every write uses, so an
/// equal value is the same term).
fn term_of<V: Serialize>(predicate: &'static PredicateInfo, value: V) -> Result<Term> {
    let json = serde_json::to_value(value).map_err(Error::internal)?;
    mapping::term(predicate, predicate.field, &json).map_err(|e| Error::validation(vec![e]))
}

impl<T, V: Serialize, K> Field<T, V, K> {
    /// Its value is `value` (on a list: an item is).
    pub fn eq(self, value: impl Into<V>) -> Filter<T> {
        Filter::value(self.predicate, term_of(self.predicate, value.into()).map(Test::Eq))
    }

    /// Its value is not `value`: `eq(value).not()`, so an instance without a value passes.
    pub fn ne(self, value: impl Into<V>) -> Filter<T> {
        self.eq(value).not()
    }

    /// Its value is one of `values` (on a list: an item is; none given: no instance passes).
    pub fn is_in<I>(self, values: I) -> Filter<T>
    where
        I: IntoIterator,
        I::Item: Into<V>,
    {
        let terms: Result<Vec<Term>> = values.into_iter().map(|v| term_of(self.predicate, v.into())).collect();
        // Each once: `VALUES` is a multiset, and a repeat would join an instance twice.
        let terms = terms.map(|mut terms| {
            let mut seen = std::collections::HashSet::new();
            terms.retain(|term| seen.insert(term.clone()));
            terms
        });
        Filter::value(self.predicate, terms.map(Test::In))
    }

    fn compare(self, cmp: Cmp, value: V) -> Filter<T> {
        Filter::value(self.predicate, term_of(self.predicate, value).map(|term| Test::Cmp(cmp, term)))
    }

    /// Its value is less than `value`.
    pub fn lt(self, value: impl Into<V>) -> Filter<T>
    where
        V: Ordered,
    {
        self.compare(Cmp::Lt, value.into())
    }

    /// Its value is at most `value`.
    pub fn le(self, value: impl Into<V>) -> Filter<T>
    where
        V: Ordered,
    {
        self.compare(Cmp::Le, value.into())
    }

    /// Its value is greater than `value`.
    pub fn gt(self, value: impl Into<V>) -> Filter<T>
    where
        V: Ordered,
    {
        self.compare(Cmp::Gt, value.into())
    }

    /// Its value is at least `value`.
    pub fn ge(self, value: impl Into<V>) -> Filter<T>
    where
        V: Ordered,
    {
        self.compare(Cmp::Ge, value.into())
    }

    /// Its value lies between `low` and `high`, both included.
    pub fn between(self, low: impl Into<V>, high: impl Into<V>) -> Filter<T>
    where
        V: Ordered,
    {
        let terms = term_of(self.predicate, low.into()).and_then(|l| Ok((l, term_of(self.predicate, high.into())?)));
        Filter::value(self.predicate, terms.map(|(low, high)| Test::Between(low, high)))
    }

    /// Text: it contains `value`. List: `value` is an item.
    pub fn contains<Q>(self, value: Q) -> Filter<T>
    where
        K: Contains<V, Q>,
    {
        Filter::value(self.predicate, K::test(self.predicate, value))
    }

    fn text(self, op: TextOp, needle: String, fold: bool) -> Filter<T> {
        let needle = if fold { needle.to_lowercase() } else { needle };
        Filter::value(self.predicate, Ok(Test::Text { op, needle, fold }))
    }

    /// It contains `value`, ignoring case.
    pub fn contains_ignore_case(self, value: impl Into<String>) -> Filter<T>
    where
        V: Text,
    {
        self.text(TextOp::Contains, value.into(), true)
    }

    /// It starts with `prefix`.
    pub fn starts_with(self, prefix: impl Into<String>) -> Filter<T>
    where
        V: Text,
    {
        self.text(TextOp::StartsWith, prefix.into(), false)
    }

    /// It starts with `prefix`, ignoring case.
    pub fn starts_with_ignore_case(self, prefix: impl Into<String>) -> Filter<T>
    where
        V: Text,
    {
        self.text(TextOp::StartsWith, prefix.into(), true)
    }

    /// It ends with `suffix`.
    pub fn ends_with(self, suffix: impl Into<String>) -> Filter<T>
    where
        V: Text,
    {
        self.text(TextOp::EndsWith, suffix.into(), false)
    }

    /// It has no value (an empty list counts as none).
    pub fn is_none(self) -> Filter<T>
    where
        K: MayBeAbsent,
    {
        self.is_some().not()
    }

    /// It has a value (a list: at least one item).
    pub fn is_some(self) -> Filter<T>
    where
        K: MayBeAbsent,
    {
        Filter::value(self.predicate, Ok(Test::Present))
    }
}

impl<T, U: NodeType, K> Field<T, Ref<U>, K> {
    /// The instance it points at passes `filter` (on a list: one of them does), e.g.
    /// `Task::FIELDS.owner.has(Person::FIELDS.email.ends_with("@example.org"))`.
    pub fn has(self, filter: Filter<U>) -> Filter<T> {
        let via = self.predicate;
        Filter::new(filter.expr.map(|inner| Expr::Ref { via, target: U::INFO, inner: Box::new(inner) }))
    }
}
