//! The entries the macros emit, one per annotated item, and the linker-collected slices that
//! hold them.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use linkme::distributed_slice;
use serde_json::Value;

use crate::auth::Scope;
use crate::declare::{NodeTypeInfo, Output};
use crate::error::Error;
use crate::server::Ctx;
use crate::validate::NestedValidator;

/// The future a type-erased handler returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Deserialise the (already validated) arguments and run the handler.
pub type CallFn = fn(Ctx, Value) -> BoxFuture<Result<Output, Error>>;

/// Which attribute declared a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// `#[capability]`
    Runtime,
    /// `#[meta_capability]`
    Meta,
}

impl ToolKind {
    /// `runtime` or `meta`, as in `_meta.trails.kind`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolKind::Runtime => "runtime",
            ToolKind::Meta => "meta",
        }
    }
}

/// One tool as the macros emitted it.
pub struct ToolEntry {
    /// The MCP tool name (`research.search`, `trails_meta_gen_shape`).
    pub name: &'static str,
    /// The canonical capability id (`research.search`, `trails.meta.gen.shape`).
    pub id: &'static str,
    /// Which attribute declared it.
    pub kind: ToolKind,
    /// The scope a caller needs.
    pub scope: Scope,
    /// The tool description (also inside `descriptor`), for borrowing without a parse.
    pub description: &'static str,
    /// The `tools/list` entry, JSON, exactly as served.
    pub descriptor: &'static str,
    /// The ADR-0005 canonical JSON-LD descriptor, fields in canonical order.
    pub canonical: &'static str,
    /// The generated input validator.
    pub validate: NestedValidator,
    /// The type-erased handler.
    pub call: CallFn,
    /// `module::path::handler`, for messages that must name the item.
    pub source: &'static str,
}

impl fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolEntry").field("name", &self.name).field("source", &self.source).finish()
    }
}

/// One `#[shape]` or `#[node_type]`.
#[derive(Debug)]
pub struct ShapeEntry {
    /// The Rust type's name.
    pub name: &'static str,
    /// The shape IRI.
    pub iri: &'static str,
    /// The complete JSON Schema.
    pub schema: &'static str,
    /// The IRI of the shape this one `extends`.
    pub extends: Option<&'static str>,
    /// The RDF mapping, for node types.
    pub node_type: Option<&'static NodeTypeInfo>,
    /// `module::path::Type`.
    pub source: &'static str,
}

/// Every linked tool.
#[distributed_slice]
pub static TOOLS: [ToolEntry];

/// Every linked shape and node type.
#[distributed_slice]
pub static SHAPES: [ShapeEntry];
