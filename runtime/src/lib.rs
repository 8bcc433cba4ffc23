//! Trails for Rust — serve build-time projections of annotated capabilities to agents.
//!
//! Annotate types with [`shape`] / [`node_type`] and async handlers with [`capability`] /
//! [`meta_capability`]; the macros emit every projection (JSON Schema, MCP tool descriptor,
//! canonical JSON-LD descriptor, RDF mapping, validator) as static data collected into the
//! [`registry`]. This crate assembles and serves those tables; it never derives a schema itself.

// Lets the macros' `::trails::…` paths resolve inside this crate too (for the built-ins).
extern crate self as trails;

mod app;
pub mod auth;
mod builtin;
mod catalog;
pub mod config;
mod ctx;
mod error;
mod field_error;
pub mod golden;
mod http;
pub mod json;
pub mod manifest;
pub mod mcp;
pub mod rdf;
pub mod registry;
mod schema;
mod scope;
mod sessions;
pub mod validate;
pub mod wire;

pub use app::{App, Server};
pub use ctx::{AppState, Ctx};
pub use error::{Error, Result};
pub use field_error::{FieldCode, FieldError};
pub use registry::{Registry, ToolEntry, ToolKind};
pub use schema::{DateTime, HandlerResult, NodeType, Output, Ref, Schema, Shape, ToolOutput};
pub use scope::Scope;
pub use trails_macros::{capability, meta_capability, node_type, shape};

pub use builtin::{Pong, ToolSwitch};

/// Support for generated code. Not a public API: names here change without notice.
#[doc(hidden)]
pub mod __private {
    pub use const_format::concatcp;
    pub use linkme;
    pub use serde;
    pub use serde_json;

    pub use crate::registry::{BoxFuture, ShapeEntry, ToolEntry, ToolKind, SHAPES, TOOLS};
    pub use crate::schema::shape_output;
    pub use crate::validate::{
        validate_item, validate_object, ArrayRule, Errors, FieldRule, IntegerRule, ItemRule, NumberRule,
        ObjectRules, Path, Pattern, StringRule,
    };

    /// Turn a deserialisation failure of already-validated arguments into an internal error:
    /// reaching it means a validator and its type disagree, which is a bug, not bad input.
    pub fn deserialize_failed(tool: &str, error: serde_json::Error) -> crate::Error {
        crate::Error::internal(format!("{tool}: validated arguments did not deserialise: {error}"))
    }
}
