//! The typed IR every declaration is parsed into. Projections read only this.

use proc_macro2::Span;

use crate::args::Literal;

/// An integer Rust type and the range it can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntKind {
    /// The Rust type name.
    pub name: &'static str,
    /// Smallest value the type holds.
    pub min: i128,
    /// Largest value the type holds.
    pub max: i128,
}

/// Every integer type a field may have.
pub const INT_KINDS: &[IntKind] = &[
    IntKind { name: "u8", min: 0, max: u8::MAX as i128 },
    IntKind { name: "u16", min: 0, max: u16::MAX as i128 },
    IntKind { name: "u32", min: 0, max: u32::MAX as i128 },
    IntKind { name: "u64", min: 0, max: u64::MAX as i128 },
    IntKind { name: "usize", min: 0, max: u64::MAX as i128 },
    IntKind { name: "i8", min: i8::MIN as i128, max: i8::MAX as i128 },
    IntKind { name: "i16", min: i16::MIN as i128, max: i16::MAX as i128 },
    IntKind { name: "i32", min: i32::MIN as i128, max: i32::MAX as i128 },
    IntKind { name: "i64", min: i64::MIN as i128, max: i64::MAX as i128 },
    IntKind { name: "isize", min: i64::MIN as i128, max: i64::MAX as i128 },
];

/// What one value (a field, or one item of a `Vec` field) is.
#[derive(Clone)]
pub enum Scalar {
    /// `String`
    String,
    /// `bool`
    Bool,
    /// An integer type.
    Int(IntKind),
    /// `f32` / `f64`
    Float,
    /// `trails::DateTime`
    DateTime,
    /// `Ref<T>`: an IRI pointing at an instance of node type `T`.
    Ref(syn::Type),
    /// Another `#[shape]` (or a type implementing `trails::declare::Schema`), inlined.
    Nested(syn::Type),
}

impl Scalar {
    /// "a string", "an integer (`u8`)", … for messages.
    pub fn describe(&self) -> String {
        match self {
            Scalar::String => "a string".into(),
            Scalar::Bool => "a boolean".into(),
            Scalar::Int(kind) => format!("an integer (`{}`)", kind.name),
            Scalar::Float => "a number".into(),
            Scalar::DateTime => "a date-time".into(),
            Scalar::Ref(_) => "a node reference (`Ref<…>`)".into(),
            Scalar::Nested(_) => "a nested shape".into(),
        }
    }
}

#[derive(Clone)]
/// A field's type: `Option` and `Vec` around a scalar.
pub struct FieldType {
    /// `Option<…>`: never required.
    pub optional: bool,
    /// `Vec<…>`: a JSON array.
    pub array: bool,
    /// The value (or item) type.
    pub scalar: Scalar,
}

#[derive(Debug, Clone, Copy, PartialEq)]
/// A numeric bound, kept as written.
pub enum Num {
    /// An integer bound.
    Int(i128),
    /// A float bound.
    Float(f64),
}

impl Num {
    /// The bound as a float, for comparisons.
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

#[derive(Default, Clone)]
/// Every predicate constraint of one field.
pub struct Constraints {
    /// `min_length`
    pub min_length: Option<u64>,
    /// `max_length`
    pub max_length: Option<u64>,
    /// `pattern`
    pub pattern: Option<String>,
    /// `one_of`
    pub one_of: Vec<Literal>,
    /// `min_value`
    pub min_value: Option<Num>,
    /// `max_value`
    pub max_value: Option<Num>,
    /// `min_count`
    pub min_items: Option<u64>,
    /// `max_count`
    pub max_items: Option<u64>,
    /// A node type's list: a set in the graph, so repeating an item is refused (`uniqueItems`).
    pub unique_items: bool,
    /// `default`: the value a form starts with (the schema's `default`; an annotation, as in
    /// JSON Schema: an absent value stays absent).
    pub default: Option<Literal>,
}

impl Constraints {
    /// The range an integer field of `kind` accepts: its declared `min_value`/`max_value`, else
    /// the type's own bounds. Every projection states both (JSON Schema's integers are unbounded,
    /// and a client must not be told 2^64 fits an `i64`), and the validator enforces the same.
    pub fn int_range(&self, kind: &IntKind) -> (i128, i128) {
        let min = match self.min_value {
            Some(Num::Int(v)) => v,
            _ => kind.min,
        };
        let max = match self.max_value {
            Some(Num::Int(v)) => v,
            _ => kind.max,
        };
        (min, max)
    }
}

/// How a node type's instances are shown where they are listed: the runtime's own type.
pub use trails_pattern::DisplayRole as Role;

#[derive(Clone)]
/// One field (or named parameter).
pub struct Field {
    /// The name on the wire (the Rust name without `r#`).
    pub name: String,
    /// The Rust name.
    pub ident: syn::Ident,
    /// The Rust type as written.
    pub rust_type: syn::Type,
    /// The classified type.
    pub ty: FieldType,
    /// From `///` or `description = …`.
    pub description: Option<String>,
    /// In the schema's `required`.
    pub required: bool,
    /// The predicates.
    pub constraints: Constraints,
    /// Explicit predicate IRI, if declared.
    pub iri: Option<String>,
    /// Its display role, with where `role` was written.
    pub role: Option<(Role, Span)>,
    /// SEP-2243: the `Mcp-Param-<name>` HTTP header that must carry this (string) argument's
    /// value too (`#[predicate(header = "Region")]`), published as `x-mcp-header`.
    pub header: Option<String>,
    /// Where the field is, for messages.
    pub span: Span,
}

/// A JSON object: the fields of a `#[shape]` struct or a capability's named parameters.
#[derive(Clone, Default)]
pub struct ObjectDecl {
    /// In declaration order.
    pub fields: Vec<Field>,
}

/// What a shape's body is.
pub enum ShapeBody {
    /// A struct with named fields: a JSON object.
    Object(ObjectDecl),
    /// Unit enum projected to a string `enum`: the wire names of its variants.
    Enum(Vec<(syn::Ident, String)>),
}

/// `extends = Parent`: the parent type and the field that holds its values (flattened, so the
/// parent's properties sit at the top level of the child's JSON).
#[derive(Clone)]
pub struct Extends {
    /// The parent shape (or node type) as written.
    pub parent: syn::Type,
    /// The field of type `parent`.
    pub field: syn::Ident,
}

/// The node-type part of a `#[node_type]`.
pub struct NodeTypeDecl {
    /// The `trails://kg/<label>` segment.
    pub label: String,
    /// Where the label was written (the type name when it was not).
    pub label_span: Span,
    /// Field names that are unique together, each with where it was written.
    pub unique: Vec<(String, Span)>,
    /// The field whose value names an instance (`<base>/<label>/<key>`), if any.
    pub key: Option<(String, Span)>,
}

/// A `#[shape]` or `#[node_type]` declaration.
pub struct ShapeDecl {
    /// The Rust type.
    pub ident: syn::Ident,
    /// The shape IRI (the RDF class for node types).
    pub iri: String,
    /// The parent, if any.
    pub extends: Option<Extends>,
    /// From `///`.
    pub description: Option<String>,
    /// Fields or variants.
    pub body: ShapeBody,
    /// serde's `rename_all` rule for enum variants.
    pub rename_all: Option<(crate::names::RenameRule, Span)>,
    /// Present for `#[node_type]`.
    pub node_type: Option<NodeTypeDecl>,
    /// The user derived `Serialize`/`Deserialize` themselves.
    pub user_derives_serde: bool,
}

/// The scope a tool needs: the runtime's own type.
pub use trails_pattern::Scope as ScopeDecl;
pub use trails_pattern::{Reasoning, TaskSupport};

/// Runtime capability or meta capability, with the meta naming parts.
pub enum ToolKindDecl {
    /// `#[capability]`
    Runtime,
    /// `#[meta_capability]`
    Meta {
        /// Dotted namespace, if any.
        namespace: Option<String>,
        /// The op name.
        op: String,
    },
}

/// A capability's input.
pub enum Input {
    /// One `#[shape]` parameter: its properties are the tool's properties.
    Shape {
        /// The shape type.
        ty: Box<syn::Type>,
    },
    /// Named parameters, each a property.
    Params(ObjectDecl),
}

/// `side_effects(…)`: what the runtime holds a call to (the knowledge-graph writes) and what it
/// publishes besides (external calls).
#[derive(Default)]
pub struct SideEffects {
    /// The node types whose instances it writes (`writes = [Requirement]`).
    pub writes: Vec<syn::Path>,
    /// Deletes instances of those types.
    pub deletes: bool,
    /// Changes stored instances of those types.
    pub overwrites: bool,
    /// External hosts called.
    pub external: Vec<String>,
}

/// `cost(…)`
#[derive(Default)]
pub struct Cost {
    /// Tokens per call.
    pub tokens: Option<u64>,
    /// USD per call.
    pub usd: Option<f64>,
    /// Median latency.
    pub latency_p50_ms: Option<u64>,
    /// 95th percentile latency.
    pub latency_p95_ms: Option<u64>,
}

/// One parameter of the handler, in declaration order.
pub enum Param {
    /// `&Ctx`
    Ctx,
    /// The single shape input.
    ShapeInput,
    /// A named parameter (a property).
    Named(syn::Ident),
}

/// A `#[capability]` or `#[meta_capability]` declaration.
pub struct CapabilityDecl {
    /// Runtime or meta.
    pub kind: ToolKindDecl,
    /// The canonical id (`requirements.search`, `trails.meta.gen.shape`).
    pub id: String,
    /// The MCP tool name.
    pub name: String,
    /// SemVer.
    pub version: String,
    /// What agents read to choose the tool.
    pub description: String,
    /// The scope a caller needs.
    pub scope: ScopeDecl,
    /// The input.
    pub input: Input,
    /// The handler's return type.
    pub return_type: syn::Type,
    /// Declared input shape IRI.
    pub input_shape: Option<String>,
    /// Declared output shape IRI.
    pub output_shape: Option<String>,
    /// Declared preconditions.
    pub preconditions: Vec<Precondition>,
    /// Declared side effects (`None`: undeclared).
    pub side_effects: Option<SideEffects>,
    /// Declared cost.
    pub cost: Option<Cost>,
    /// Policies a caller must satisfy.
    pub policy_required: Vec<String>,
    /// Safe to retry.
    pub idempotent: bool,
    /// The capability id this one replaces.
    pub deprecates: Option<String>,
    /// `experimental`, `stable` or `deprecated`.
    pub version_status: String,
    /// What its reads infer.
    pub reasoning: Reasoning,
    /// ADR-0013's assurance level (`L1`: the only one accepted).
    pub assurance: Option<String>,
    /// `confirm`: the question the user is asked (MCP elicitation) before a call runs.
    pub confirm: Option<String>,
    /// `task`: whether a call may run as an MCP task.
    pub task: TaskSupport,
    /// The handler function.
    pub handler: syn::Ident,
    /// Its parameters in order.
    pub params: Vec<Param>,
}

/// A declared precondition (ADR-0005: structured, a kind and its parameters): published in the
/// manifest for planners, and evaluated before the handler runs.
pub struct Precondition {
    /// What must hold.
    pub kind: PreconditionKind,
    /// Where it was written.
    pub span: Span,
}

/// The kinds of precondition the runtime evaluates.
pub enum PreconditionKind {
    /// `instance_exists(node_type = "Requirement", key = "req_id")`: the instance whose key is
    /// the argument `key` is stored.
    InstanceExists(InstanceArg),
    /// `instance_absent(…)`: it is not.
    InstanceAbsent(InstanceArg),
    /// `field_equals(…, field = "status", value = "draft")` or `field_in(…, values = […])`: it is
    /// stored, and its `field` holds one of `values`.
    FieldIn {
        /// The instance.
        instance: InstanceArg,
        /// The field of the node type, with where it was written.
        field: (String, Span),
        /// The values it may hold.
        values: Vec<Literal>,
        /// Written as `field_equals` (one `value`).
        equals: bool,
    },
    /// `check = path::to::fn`: an `async fn(&Ctx, &serde_json::Value) -> Result<(), String>` of
    /// the app's own.
    Check(syn::Path),
}

/// The instance a precondition is about: a node type, and the argument that holds its key.
pub struct InstanceArg {
    /// The node type.
    pub node_type: syn::Path,
    /// The argument holding the key, with where it was written.
    pub key: (String, Span),
}

impl PreconditionKind {
    /// The kind as published.
    pub fn name(&self) -> &'static str {
        match self {
            PreconditionKind::InstanceExists(_) => "instance_exists",
            PreconditionKind::InstanceAbsent(_) => "instance_absent",
            PreconditionKind::FieldIn { equals: true, .. } => "field_equals",
            PreconditionKind::FieldIn { equals: false, .. } => "field_in",
            PreconditionKind::Check(_) => "check",
        }
    }
}

/// A `#[prompt]` declaration.
pub struct PromptDecl {
    /// Its name in `prompts/list` (the function's name unless `name = …`).
    pub name: String,
    /// A human-readable title.
    pub title: Option<String>,
    /// What it is for (the `///` doc or `description = …`).
    pub description: String,
    /// The scope a caller needs.
    pub scope: ScopeDecl,
    /// Its arguments: strings, each a named parameter with its docs and predicates.
    pub arguments: ObjectDecl,
    /// The function's parameters, in order.
    pub params: Vec<Param>,
    /// The declared return type.
    pub return_type: syn::Type,
    /// The function.
    pub handler: syn::Ident,
}

/// A `#[resource]` declaration: a fixed URI, or a template whose `{variables}` are the
/// function's `String` parameters.
pub struct ResourceDecl {
    /// The URI or URI template.
    pub uri: String,
    /// The template's variables, in order (empty: a fixed URI).
    pub variables: Vec<String>,
    /// Its name (the function's unless `name = …`).
    pub name: String,
    /// A human-readable title.
    pub title: Option<String>,
    /// What it holds (the `///` doc or `description = …`).
    pub description: String,
    /// Its MIME type.
    pub mime_type: Option<String>,
    /// The scope a caller needs.
    pub scope: ScopeDecl,
    /// The variables as parameters, with their docs and predicates.
    pub arguments: ObjectDecl,
    /// The function's parameters, in order.
    pub params: Vec<Param>,
    /// The declared return type.
    pub return_type: syn::Type,
    /// The function.
    pub handler: syn::Ident,
}
