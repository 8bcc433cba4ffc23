//! Trails for Rust — serve build-time projections of annotated capabilities to agents.
//!
//! Annotate types with [`shape`] / [`node_type`] and async handlers with [`capability`] /
//! [`meta_capability`]; the macros emit every projection (JSON Schema, MCP tool descriptor,
//! canonical JSON-LD descriptor, RDF mapping, validator) as static data collected into the
//! [`Registry`]. This crate assembles and serves those tables; it never derives a schema itself.
//!
//! ```
//! use trails::{capability, meta_capability, node_type, shape, Ctx, Ref, Registry, Result};
//!
//! /// Someone who owns requirements.
//! #[node_type(label = "Person", iri = "https://example.org/req#Person", unique = ["email"])]
//! pub struct Person {
//!     #[predicate(min_length = 1, max_length = 120)]
//!     pub name: String,
//!     #[predicate(pattern = r"^[^@\s]+@[^@\s]+$", max_length = 254)]
//!     pub email: String,
//! }
//!
//! /// What `requirements.find` takes.
//! #[shape(iri = "https://example.org/req#FindInput")]
//! pub struct FindInput {
//!     /// Text to look for.
//!     #[predicate(min_length = 1, max_length = 200)]
//!     pub query: String,
//!     /// Only requirements owned by this person.
//!     pub owner: Option<Ref<Person>>,
//! }
//!
//! /// A match.
//! #[shape(iri = "https://example.org/req#Hit")]
//! pub struct Hit {
//!     pub title: String,
//! }
//!
//! /// Find requirements by text.
//! #[capability(id = "requirements.find", version = "1.0.0", side_effects(none), idempotent)]
//! async fn find(input: FindInput) -> Result<Vec<Hit>> {
//!     Ok(vec![Hit { title: format!("about {}", input.query) }])
//! }
//!
//! /// How many requirements there are (builder scope).
//! #[meta_capability(namespace = "requirements", op = "count", scope = "builder", side_effects(none))]
//! async fn count(_ctx: &Ctx) -> Result<String> {
//!     Ok("0".to_owned())
//! }
//!
//! // Every annotated item is in the registry, validated before it is dispatched.
//! let registry = Registry::collect().unwrap();
//! let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let hits = runtime
//!     .block_on(registry.call("requirements.find", Ctx::local(), serde_json::json!({"query": "login"})))
//!     .unwrap();
//! assert_eq!(hits.structured.unwrap()["items"][0]["title"], "about login");
//! let refused = runtime.block_on(registry.call("requirements.find", Ctx::local(), serde_json::json!({"query": ""})));
//! assert!(matches!(refused, Err(trails::Error::Validation { total: 1, .. })));
//! assert!(registry.tool("trails_meta_requirements_count").is_some());
//! // A binary serves them all: `fn main() -> std::process::ExitCode { trails::App::new().run() }`.
//! ```
#![warn(missing_docs)]

// Lets the macros' `::trails::…` paths resolve inside this crate too (for the built-ins).
extern crate self as trails;

mod budget;
mod builtin;
mod cli;
pub mod config;
mod http;
mod idempotency;
#[cfg(feature = "ledger")]
mod ledger;
mod mcp;
mod memory;
#[cfg(feature = "cedar")]
mod policy;
mod projection;
mod resources;
mod server;
mod wire;

// The core layer, under the paths the rest of this crate names it by.
pub use trails_core::pipeline;
use trails_core::{auth, ctx, declare, error, registry, validate};
/// The knowledge graph: typed instances of node types, the stores, provenance.
pub use trails_kg as kg;

pub use cli::{App, BuildError};
#[cfg(feature = "cedar")]
pub use policy::PolicyError;
#[cfg(feature = "dev")]
#[doc(hidden)]
pub use projection::snapshot;
pub use trails_core::NoSuchTool;
pub use trails_core::{sha256_hex, BadTokenHash, Scope, ScopeSet, UnknownScope};
pub use trails_core::{AppState, Ctx};
pub use trails_core::{
    Blob, BlobError, Datatype, DateTime, HandlerResult, NodeType, NodeTypeInfo, ObjectShape, Output, PredicateInfo,
    Ref, Schema, Shape, ToolOutput,
};
pub use trails_core::{Cost, DuplicateError, Registry, RegistryError, ShapeEntry, ToolEntry, ToolKind};
pub use trails_core::{Error, Result};
pub use trails_core::{Errors, FieldCode, FieldError, Path, PatternError, MAX_FIELD_ERRORS};
pub use trails_macros::{capability, meta_capability, node_type, shape};

/// Serving a built app: the [`Server`](serve::Server) that [`App::build`] returns (serve it, or
/// embed its router), the [`Control`](serve::Control) handlers use to switch tools at run time,
/// and why serving stops.
pub mod serve {
    pub use crate::server::{Control, ServeError, Server};
}

/// What a module of capabilities needs: `use trails::prelude::*;`.
pub mod prelude {
    pub use crate::kg::KgCtx;
    pub use crate::{
        capability, meta_capability, node_type, shape, Blob, Ctx, DateTime, Error, FieldCode, FieldError, Output, Ref,
        Result,
    };
}

/// Entry points for the fuzz targets in `fuzz/` and their corpus replay in the test suite; not
/// part of the API.
#[doc(hidden)]
pub mod __fuzz {
    use crate::declare::{Datatype, NodeTypeInfo, PredicateInfo};

    const fn field(field: &'static str, datatype: Datatype) -> PredicateInfo {
        PredicateInfo { field, iri: field, datatype, required: false, many: false, target: None }
    }

    static FIELDS: [PredicateInfo; 8] = [
        field("req_id", Datatype::String),
        field("priority", Datatype::Integer),
        field("score", Datatype::Double),
        field("done", Datatype::Boolean),
        field("due", Datatype::DateTime),
        field("owner", Datatype::Iri),
        field("details", Datatype::Json),
        field("attachment", Datatype::Blob),
    ];
    /// A node type with a field of every datatype (also the URI parser's unit-test fixture).
    pub(crate) static REQUIREMENT: NodeTypeInfo = NodeTypeInfo {
        label: "Requirement",
        iri: "urn:t#Requirement",
        parent: None,
        unique: &[],
        key: Some("req_id"),
        predicates: &FIELDS,
        validate: |_, _, _| {},
    };

    /// The resource-URI and `where` parser (what `resources/read` runs first) on `text` as a
    /// whole URI, as a list query and as a `where` value, against a node type with a field of
    /// every datatype. Must never panic, whatever `text` is.
    pub fn resource_uri(text: &str) {
        let types: &[&'static NodeTypeInfo] = &[&REQUIREMENT];
        crate::resources::parse_uri(text, types);
        crate::resources::parse_uri(&format!("trails://kg/Requirement?{text}"), types);
        crate::resources::parse_uri(&format!("trails://kg/Requirement?where={text}"), types);
    }

    /// `trails.kg.read_field`'s windowing on `data`: three little-endian `u16`s — the offset,
    /// `limit_chars` and the window (brought into 1–16384 and 1024–65536) — then the text (UTF-8,
    /// lossily). The text is read from the offset to its end by following `next_offset`; panics
    /// if an answer overflows the window, fails to advance, or the pieces are not the text.
    pub fn read_field_window(data: &[u8]) {
        let Some((numbers, text)) = data.split_at_checked(6) else { return };
        let number = |at: usize| usize::from(u16::from_le_bytes([numbers[at], numbers[at + 1]]));
        let text = String::from_utf8_lossy(text);
        let (limit, window) = (1 + number(2) % 16_384, 1024 + number(4) % (65_536 - 1024 + 1));
        crate::builtin::read_through(&text, number(0), limit, window);
    }

    /// The HTTP hot path's request parsing and decision on `data`: header lines, a blank line,
    /// the body. Never panics; what it takes is what it may answer (see `http/hot`).
    pub fn hot_path(data: &[u8]) {
        crate::http::fuzz_hot_path(data);
    }

    /// A blob as a client sends it, on `data` read as JSON (anything else is skipped): the
    /// validator (what answers the client) and the deserialiser (what the handler gets) must
    /// agree — a value one accepts and the other refuses would be an internal error or a blob
    /// that skipped its checks — and an accepted blob must serialise back to itself with its
    /// bytes stripped from what models see. Panics otherwise.
    pub fn blob_value(data: &[u8]) {
        use crate::declare::Schema as _;
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
        let errors = crate::validate::run(crate::Blob::validate_at, &value);
        let parsed = serde_json::from_value::<crate::Blob>(value.clone());
        match (errors.is_empty(), parsed) {
            (true, Ok(blob)) => {
                let mut shown = serde_json::to_value(&blob).expect("a blob serialises");
                let back: crate::Blob = serde_json::from_value(shown.clone()).expect("a blob reads back");
                assert_eq!(back, blob);
                crate::declare::blob::strip_bytes(&mut shown);
                assert_eq!(shown, blob.metadata(), "a result shows the metadata only");
            }
            (false, Err(_)) => {}
            (valid, parsed) => panic!("validator says {valid}, deserialiser says {parsed:?} for {value}"),
        }
    }
}

#[doc(hidden)]
pub mod __private {
    pub use crate::kg::{Field, Query};
    pub use trails_core::__private::*;
}
