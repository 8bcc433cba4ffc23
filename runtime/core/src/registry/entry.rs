//! The entries the macros emit, one per annotated item, and the linker-collected slices that
//! hold them.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use linkme::distributed_slice;
use serde_json::Value;

use crate::auth::Scope;
use crate::ctx::Ctx;
use crate::declare::{Effects, NodeTypeInfo, Output, Unmet};
use crate::error::Error;
use crate::validate::NestedValidator;
pub use trails_pattern::{Reasoning, TaskSupport};

/// The future a type-erased handler returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Deserialise the (already validated) arguments and run the handler.
pub type CallFn = fn(Ctx, Value) -> BoxFuture<Result<Output, Error>>;

/// Evaluate a capability's declared preconditions against a call's (validated) arguments: the
/// ones that do not hold, or the failure that kept them from being evaluated (a store down).
pub type PreconditionFn = fn(Ctx, Value) -> BoxFuture<Result<Vec<Unmet>, Error>>;

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

/// One tool as the macros emitted it: its names, scope and every projection, as static data.
pub struct ToolEntry {
    pub(crate) name: &'static str,
    pub(crate) id: &'static str,
    pub(crate) version: &'static str,
    pub(crate) kind: ToolKind,
    pub(crate) scope: Scope,
    pub(crate) description: &'static str,
    pub(crate) descriptor: &'static str,
    pub(crate) canonical: &'static str,
    pub(crate) shacl: &'static str,
    pub(crate) declared: Declared,
    pub(crate) validate: NestedValidator,
    pub(crate) call: CallFn,
    pub(crate) source: &'static str,
}

impl ToolEntry {
    /// Used by `#[capability]` / `#[meta_capability]`; not a public API.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub const fn __new(
        name: &'static str,
        id: &'static str,
        version: &'static str,
        kind: ToolKind,
        scope: Scope,
        description: &'static str,
        descriptor: &'static str,
        canonical: &'static str,
        shacl: &'static str,
        declared: Declared,
        validate: NestedValidator,
        call: CallFn,
        source: &'static str,
    ) -> ToolEntry {
        ToolEntry {
            name,
            id,
            version,
            kind,
            scope,
            description,
            descriptor,
            canonical,
            shacl,
            declared,
            validate,
            call,
            source,
        }
    }

    /// The MCP tool name (`research_search`, `trails_meta_gen_shape`): the id with `.` → `_`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The canonical capability id (`research.search`, `trails.meta.gen.shape`).
    pub fn id(&self) -> &'static str {
        self.id
    }

    /// The capability's SemVer version.
    pub fn version(&self) -> &'static str {
        self.version
    }

    /// Which attribute declared it.
    pub fn kind(&self) -> ToolKind {
        self.kind
    }

    /// The scope a caller needs.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// The tool description.
    pub fn description(&self) -> &'static str {
        self.description
    }

    /// The `tools/list` entry, JSON, exactly as served.
    pub fn descriptor(&self) -> &'static str {
        self.descriptor
    }

    /// The canonical JSON-LD descriptor, fields in canonical order.
    pub fn canonical(&self) -> &'static str {
        self.canonical
    }

    /// The SHACL shape of the named parameters (`urn:trails:capability:<id>#input`), a Turtle
    /// document; empty when the input is a `#[shape]` or `input_shape` names one.
    pub fn shacl(&self) -> &'static str {
        self.shacl
    }

    /// The question the user is asked before a call runs (`confirm`), if any.
    pub fn confirm(&self) -> Option<&'static str> {
        self.declared.confirm
    }

    /// Whether a call may run as an MCP task (`task`).
    pub fn task(&self) -> TaskSupport {
        self.declared.task
    }

    /// What a call may write (`side_effects(…)`), which the knowledge graph holds it to.
    pub fn effects(&self) -> Effects {
        self.declared.effects
    }

    /// What its reads of the knowledge graph infer (`reasoning`).
    pub fn reasoning(&self) -> Reasoning {
        self.declared.reasoning
    }

    /// The declared preconditions' evaluation, when it declares any.
    pub fn preconditions(&self) -> Option<PreconditionFn> {
        self.declared.preconditions
    }

    /// The Cedar policies (by `@id`) that must allow a call (`policy_required`).
    pub fn policy_required(&self) -> &'static [&'static str] {
        self.declared.policy_required
    }

    /// The declared cost of one call (zero when undeclared).
    pub fn cost(&self) -> Cost {
        self.declared.cost
    }

    /// Declared `idempotent`: a retry with the same arguments has the same effect.
    pub fn idempotent(&self) -> bool {
        self.declared.idempotent
    }

    /// Whether its descriptor has an `outputSchema` (the handler returns a shape).
    pub fn has_output_schema(&self) -> bool {
        self.declared.output_schema
    }

    /// The IRI of the shape (or node type) the handler returns, itself or as a list.
    pub fn output_shape(&self) -> Option<&'static str> {
        self.declared.output_shape
    }

    /// Whether the handler returns a list (`Vec<Shape>`, sent as `{"items": […]}`).
    pub fn returns_list(&self) -> bool {
        self.declared.output_list
    }

    /// Declared `version_status = "deprecated"`.
    pub fn deprecated(&self) -> bool {
        self.declared.deprecated
    }

    /// The capability id this one replaces (`deprecates = "…"`).
    pub fn deprecates(&self) -> Option<&'static str> {
        self.declared.deprecates
    }

    /// The IRIs of the `#[shape]`s its input and output are made of (nested ones included).
    pub fn shapes(&self) -> impl Iterator<Item = &'static str> {
        self.declared.shapes.split(' ').filter(|iri| !iri.is_empty())
    }

    /// `module::path::handler`, for messages that must name the item.
    pub fn source(&self) -> &'static str {
        self.source
    }
}

/// A capability's declared cost per call (`cost(tokens = …, usd = …)`), what budgets charge.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    /// Model tokens.
    pub tokens: u64,
    /// US dollars.
    pub usd: f64,
}

/// What a capability declares that the runtime acts on, typed (the rest of the canonical
/// descriptor is published only): the policies that must allow a call, what a call costs,
/// whether a call may be replayed, whether it is deprecated or replaces another.
#[derive(Debug, Clone, Copy)]
pub struct Declared {
    pub(crate) policy_required: &'static [&'static str],
    pub(crate) cost: Cost,
    pub(crate) idempotent: bool,
    pub(crate) deprecated: bool,
    pub(crate) deprecates: Option<&'static str>,
    pub(crate) output_schema: bool,
    /// `ToolOutput::OUTPUT_IRI`.
    pub(crate) output_shape: Option<&'static str>,
    pub(crate) output_list: bool,
    /// `confirm`: the question the user is asked before a call runs.
    pub(crate) confirm: Option<&'static str>,
    /// `task`: whether a call may run as an MCP task.
    pub(crate) task: TaskSupport,
    /// `side_effects(…)`: what a call may write.
    pub(crate) effects: Effects,
    /// `preconditions(…)`, evaluated before the handler.
    pub(crate) preconditions: Option<PreconditionFn>,
    /// `reasoning`: what its reads infer.
    pub(crate) reasoning: Reasoning,
    /// The IRIs of the shapes its input and output are made of, each followed by a space.
    pub(crate) shapes: &'static str,
}

impl Declared {
    /// Used by `#[capability]` / `#[meta_capability]`; not a public API.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub const fn __new(
        policy_required: &'static [&'static str],
        tokens: u64,
        usd: f64,
        idempotent: bool,
        deprecated: bool,
        deprecates: Option<&'static str>,
        output_schema: bool,
        output_shape: Option<&'static str>,
        output_list: bool,
        confirm: Option<&'static str>,
        task: TaskSupport,
        effects: Effects,
        preconditions: Option<PreconditionFn>,
        reasoning: Reasoning,
        shapes: &'static str,
    ) -> Declared {
        Declared {
            policy_required,
            cost: Cost { tokens, usd },
            idempotent,
            deprecated,
            deprecates,
            output_schema,
            output_shape,
            output_list,
            confirm,
            task,
            effects,
            preconditions,
            reasoning,
            shapes,
        }
    }
}

impl fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolEntry").field("name", &self.name).field("source", &self.source).finish()
    }
}

/// One `#[shape]` or `#[node_type]`.
#[derive(Debug)]
pub struct ShapeEntry {
    pub(crate) name: &'static str,
    pub(crate) iri: &'static str,
    pub(crate) schema: &'static str,
    pub(crate) extends: Option<&'static str>,
    pub(crate) node_type: Option<&'static NodeTypeInfo>,
    pub(crate) shacl: &'static str,
    pub(crate) source: &'static str,
}

impl ShapeEntry {
    /// Used by `#[shape]` / `#[node_type]`; not a public API.
    #[doc(hidden)]
    pub const fn __new(
        name: &'static str,
        iri: &'static str,
        schema: &'static str,
        extends: Option<&'static str>,
        node_type: Option<&'static NodeTypeInfo>,
        shacl: &'static str,
        source: &'static str,
    ) -> ShapeEntry {
        ShapeEntry { name, iri, schema, extends, node_type, shacl, source }
    }

    /// The Rust type's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The shape IRI.
    pub fn iri(&self) -> &'static str {
        self.iri
    }

    /// The complete JSON Schema.
    pub fn schema(&self) -> &'static str {
        self.schema
    }

    /// The IRI of the shape this one `extends`.
    pub fn extends(&self) -> Option<&'static str> {
        self.extends
    }

    /// The RDF mapping, for node types.
    pub fn node_type(&self) -> Option<&'static NodeTypeInfo> {
        self.node_type
    }

    /// The SHACL `sh:NodeShape` of the type, a Turtle document of its own.
    pub fn shacl(&self) -> &'static str {
        self.shacl
    }

    /// `module::path::Type`.
    pub fn source(&self) -> &'static str {
        self.source
    }
}

/// Every linked tool.
#[distributed_slice]
pub static TOOLS: [ToolEntry];

/// Every linked shape and node type.
#[distributed_slice]
pub static SHAPES: [ShapeEntry];
