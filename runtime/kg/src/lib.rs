//! The knowledge graph: node types *are* the graph. Every instance a capability writes goes
//! through [`Kg`] — validated by the same generated validator as tool input, then checked for
//! its key, `unique` groups and `Ref` targets by the store, atomically with the write — and is
//! stored as RDF (`mapping`). The [`Store`] trait has an embedded implementation
//! ([`EmbeddedStore`]: oxigraph in memory for reads, SQLite as the durable source of truth).
//! Authors read with `T::objects(ctx)` ([`Query`]) and read-only SPARQL ([`Kg::sparql`]). Every
//! call leaves a PROV-O activity (`provenance`), written by the dispatcher, never by hand.
//!
//! Applications reach this crate as `trails::kg`.
#![warn(missing_docs)]

// The core layer, under the paths this crate names it by.
use trails_core::{declare, error, pipeline, registry, validate};

#[cfg(any(feature = "embedded", feature = "remote"))]
mod bind;
#[doc(hidden)]
pub mod changes;
mod ctx;
#[cfg(feature = "embedded")]
mod embedded;
mod handle;
#[doc(hidden)]
pub mod mapping;
#[doc(hidden)]
pub mod precondition;
#[doc(hidden)]
pub mod provenance;
mod query;
#[cfg(feature = "remote")]
mod remote;
#[doc(hidden)]
pub mod store;

pub use ctx::KgCtx;
#[cfg(feature = "embedded")]
pub use embedded::EmbeddedStore;
#[doc(hidden)]
pub use handle::store_failed;
pub use handle::{Kg, Stored, DEFAULT_BASE, DEFAULT_MAX_INSTANCE_BYTES, UPDATE_ATTEMPTS};
pub use oxrdf::{Literal, NamedNode, Term};
pub use query::{Field, Filter, Page, Query, DEFAULT_LIMIT, MAX_LIMIT};
pub use trails_core::Reasoning;

/// What a field's type lets a query do with it: how many values it holds (the third parameter
/// of [`Field`]) and the traits behind the operators (`lt` needs [`Ordered`](field::Ordered)
/// values, `contains` a text or list field, …), whose compile errors name the operators that fit.
pub mod field {
    pub use crate::query::kind::{List, One, Optional};
    pub use crate::query::{Contains, MayBeAbsent, Numeric, Ordered, Single, Text};
}
#[cfg(feature = "remote")]
pub use remote::{RemoteStore, RemoteStoreBuilder};
pub use store::{Check, Find, Found, Row, Store, StoreError, StoreFuture, Synchronous, Triples, Write, WriteError};
