//! The static tables the macros fill, and the one-time assembly the runtime does over them.
//!
//! Every `#[capability]`, `#[meta_capability]`, `#[shape]` and `#[node_type]` adds one entry
//! to a linker-collected slice ([`linkme`]): no code runs per item at start-up.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use linkme::distributed_slice;
use serde_json::Value;

use crate::ctx::Ctx;
use crate::error::Error;
use crate::rdf::NodeTypeInfo;
use crate::schema::Output;
use crate::scope::Scope;
use crate::validate::{run, NestedValidator};

pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Deserialise the (already validated) arguments and run the handler.
pub type CallFn = fn(Ctx, Value) -> BoxFuture<Result<Output, Error>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Runtime,
    Meta,
}

impl ToolKind {
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
    pub kind: ToolKind,
    pub scope: Scope,
    /// The tool description (also inside `descriptor`), for borrowing without a parse.
    pub description: &'static str,
    /// The `tools/list` entry, JSON, exactly as served.
    pub descriptor: &'static str,
    /// The ADR-0005 canonical JSON-LD descriptor, fields in canonical order.
    pub canonical: &'static str,
    pub validate: NestedValidator,
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
    pub name: &'static str,
    pub iri: &'static str,
    /// The complete JSON Schema.
    pub schema: &'static str,
    pub node_type: Option<&'static NodeTypeInfo>,
    pub source: &'static str,
}

#[distributed_slice]
pub static TOOLS: [ToolEntry];

#[distributed_slice]
pub static SHAPES: [ShapeEntry];

/// Two items that claim the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateError {
    pub what: &'static str,
    pub name: &'static str,
    pub first: &'static str,
    pub second: &'static str,
}

impl fmt::Display for DuplicateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fix = if self.what == "tool" { "change its `id`, or its `namespace`/`op`" } else { "give one a different `label`" };
        write!(f, "two {}s are both named `{}`: `{}` and `{}`; rename one ({fix})", self.what, self.name, self.first, self.second)
    }
}

impl std::error::Error for DuplicateError {}

/// The assembled view of the static tables: sorted, de-duplicated, looked up by name.
#[derive(Debug)]
pub struct Registry {
    tools: BTreeMap<&'static str, &'static ToolEntry>,
    shapes: BTreeMap<&'static str, &'static ShapeEntry>,
}

impl Registry {
    /// Everything linked into this binary. Fails, naming both items, if two tools (or two
    /// node types) share a name — the macros catch this within one module, this catches the rest.
    pub fn collect() -> Result<Registry, DuplicateError> {
        Registry::from_entries(TOOLS.iter(), SHAPES.iter())
    }

    pub fn from_entries(
        tools: impl IntoIterator<Item = &'static ToolEntry>,
        shapes: impl IntoIterator<Item = &'static ShapeEntry>,
    ) -> Result<Registry, DuplicateError> {
        let mut by_name = BTreeMap::new();
        for tool in tools {
            if let Some(first) = by_name.insert(tool.name, tool) {
                return Err(DuplicateError { what: "tool", name: tool.name, first: first.source, second: tool.source });
            }
        }
        let mut shapes_by_name = BTreeMap::new();
        let mut labels: BTreeMap<&'static str, &'static ShapeEntry> = BTreeMap::new();
        for shape in shapes {
            if let Some(info) = shape.node_type {
                if let Some(first) = labels.insert(info.label, shape) {
                    return Err(DuplicateError { what: "node type", name: info.label, first: first.source, second: shape.source });
                }
            }
            // Two plain shapes may share a Rust name in different modules; key by source then.
            shapes_by_name.insert(shape.source, shape);
        }
        Ok(Registry { tools: by_name, shapes: shapes_by_name })
    }

    /// Tools in name order.
    pub fn tools(&self) -> impl Iterator<Item = &'static ToolEntry> + '_ {
        self.tools.values().copied()
    }

    pub fn tool(&self, name: &str) -> Option<&'static ToolEntry> {
        self.tools.get(name).copied()
    }

    /// Shapes and node types, ordered by their Rust path.
    pub fn shapes(&self) -> impl Iterator<Item = &'static ShapeEntry> + '_ {
        self.shapes.values().copied()
    }

    pub fn node_types(&self) -> impl Iterator<Item = &'static NodeTypeInfo> + '_ {
        self.shapes.values().filter_map(|s| s.node_type)
    }

    /// Validate then run a tool: the generated validator sees the raw arguments first, so a
    /// handler never receives input that breaks a declared constraint. Scope checks belong to the
    /// transport, which knows the caller.
    pub async fn call(&self, name: &str, ctx: Ctx, arguments: Value) -> Result<Output, Error> {
        let tool = self.tool(name).ok_or_else(|| Error::UnknownTool(name.to_owned()))?;
        call_tool(tool, ctx, arguments).await
    }
}

/// Validate `arguments` against `tool`'s input and dispatch. Missing arguments mean `{}`.
pub async fn call_tool(tool: &'static ToolEntry, ctx: Ctx, arguments: Value) -> Result<Output, Error> {
    let arguments = if arguments.is_null() { Value::Object(Default::default()) } else { arguments };
    let errors = run(tool.validate, &arguments);
    if !errors.is_empty() {
        let total = errors.total();
        return Err(Error::Validation { errors: errors.into_vec(), total });
    }
    (tool.call)(ctx, arguments).await
}
