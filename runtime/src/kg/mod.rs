//! The knowledge graph: node types *are* the graph. Every instance a capability writes goes
//! through [`Kg`] — validated by the same generated validator as tool input, then checked for
//! its key, `unique` groups and `Ref` targets by the store, atomically with the write — and is
//! stored as RDF (`mapping`). The [`Store`] trait has an embedded implementation
//! ([`EmbeddedStore`]: oxigraph in memory for reads, SQLite as the durable source of truth).
//! Authors read with `T::objects(ctx)` ([`Query`]) and read-only SPARQL ([`Kg::sparql`]). Every
//! call leaves a PROV-O activity (`provenance`), written by the dispatcher, never by hand.

mod bind;
pub(crate) mod changes;
mod ctx;
mod embedded;
mod handle;
pub(crate) mod mapping;
pub(crate) mod provenance;
mod query;
mod remote;
pub(crate) mod store;

pub use ctx::KgCtx;
pub use embedded::{EmbeddedStore, Synchronous};
pub(crate) use handle::store_failed;
pub use handle::{Kg, Stored, DEFAULT_BASE, DEFAULT_MAX_INSTANCE_BYTES, UPDATE_ATTEMPTS};
pub use oxigraph::model::{Literal, NamedNode, Term};
pub use query::{Field, Page, Query, DEFAULT_LIMIT, MAX_LIMIT};
pub use remote::{RemoteStore, RemoteStoreBuilder};
pub use store::{Check, Find, Found, Row, Store, StoreError, StoreFuture, Triples, Write, WriteError};
