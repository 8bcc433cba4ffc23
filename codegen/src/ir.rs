//! The typed IR every declaration is parsed into. Projections read only this.

use proc_macro2::Span;

use crate::args::Literal;

/// An integer Rust type and the range it can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntKind {
    pub name: &'static str,
    pub min: i128,
    pub max: i128,
    /// Whether the schema states the type's bounds (`u8`..`u32`, `i8`..`i32`, and `minimum: 0`
    /// for `u64`). `i64`'s bounds are implied by JSON numbers and left out.
    pub emit_min: bool,
    pub emit_max: bool,
}

pub const INT_KINDS: &[IntKind] = &[
    IntKind { name: "u8", min: 0, max: u8::MAX as i128, emit_min: true, emit_max: true },
    IntKind { name: "u16", min: 0, max: u16::MAX as i128, emit_min: true, emit_max: true },
    IntKind { name: "u32", min: 0, max: u32::MAX as i128, emit_min: true, emit_max: true },
    IntKind { name: "u64", min: 0, max: u64::MAX as i128, emit_min: true, emit_max: false },
    IntKind { name: "usize", min: 0, max: u64::MAX as i128, emit_min: true, emit_max: false },
    IntKind { name: "i8", min: i8::MIN as i128, max: i8::MAX as i128, emit_min: true, emit_max: true },
    IntKind { name: "i16", min: i16::MIN as i128, max: i16::MAX as i128, emit_min: true, emit_max: true },
    IntKind { name: "i32", min: i32::MIN as i128, max: i32::MAX as i128, emit_min: true, emit_max: true },
    IntKind { name: "i64", min: i64::MIN as i128, max: i64::MAX as i128, emit_min: false, emit_max: false },
    IntKind { name: "isize", min: i64::MIN as i128, max: i64::MAX as i128, emit_min: false, emit_max: false },
];

/// What one value (a field, or one item of a `Vec` field) is.
#[derive(Clone)]
pub enum Scalar {
    String,
    Bool,
    Int(IntKind),
    Float,
    DateTime,
    /// `Ref<T>`: an IRI pointing at an instance of node type `T`.
    Ref(syn::Type),
    /// Another `#[shape]` (or a type implementing `trails::Schema`), inlined.
    Nested(syn::Type),
}

impl Scalar {
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
pub struct FieldType {
    pub optional: bool,
    pub array: bool,
    pub scalar: Scalar,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

#[derive(Default, Clone)]
pub struct Constraints {
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<String>,
    pub one_of: Vec<Literal>,
    pub min_value: Option<Num>,
    pub max_value: Option<Num>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
}

#[derive(Clone)]
pub struct Field {
    /// The name on the wire (the Rust name without `r#`).
    pub name: String,
    pub ident: syn::Ident,
    pub rust_type: syn::Type,
    pub ty: FieldType,
    pub description: Option<String>,
    pub required: bool,
    pub constraints: Constraints,
    /// Explicit predicate IRI, if declared.
    pub iri: Option<String>,
    pub span: Span,
}

/// A JSON object: the fields of a `#[shape]` struct or a capability's named parameters.
#[derive(Clone, Default)]
pub struct ObjectDecl {
    pub fields: Vec<Field>,
}

pub enum ShapeBody {
    Object(ObjectDecl),
    /// Unit enum projected to a string `enum`: the wire names of its variants.
    Enum(Vec<(syn::Ident, String)>),
}

pub struct NodeTypeDecl {
    pub label: String,
    pub extends: Option<String>,
    pub unique: Vec<String>,
}

pub struct ShapeDecl {
    pub ident: syn::Ident,
    pub iri: String,
    pub extends: Option<String>,
    pub description: Option<String>,
    pub body: ShapeBody,
    pub rename_all: Option<String>,
    pub node_type: Option<NodeTypeDecl>,
    pub user_derives_serde: bool,
}
