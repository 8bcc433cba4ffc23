//! The traits the macros implement. Every associated constant is a piece of JSON produced at
//! build time; the runtime only ever concatenates or parses them, never derives them.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::rdf::Datatype;
use crate::validate::{run, Errors, FieldError, ObjectRules, Path};

/// A type with a JSON Schema and a validator. `#[shape]` and `#[node_type]` implement it; implement
/// it by hand for a foreign type you want to accept as a field:
///
/// ```
/// use serde_json::{json, Value};
/// use trails::declare::Schema;
/// use trails::error::{Errors, FieldCode, FieldError, Path};
///
/// /// A percentage, as a whole number.
/// #[derive(serde::Serialize, serde::Deserialize)]
/// pub struct Percent(u8);
///
/// impl Schema for Percent {
///     const SCHEMA_MEMBERS: &'static str = r#""type":"integer","minimum":0,"maximum":100"#;
///     fn validate_at(value: &Value, path: &mut Path, errors: &mut Errors) {
///         if !value.as_u64().is_some_and(|n| n <= 100) {
///             let field = path.current();
///             let message = format!("{field} must be an integer from 0 to 100");
///             errors.push(FieldError { field, code: FieldCode::MaxValue, message, value: value.clone(), constraint: json!(100) });
///         }
///     }
/// }
///
/// #[trails::shape]
/// pub struct Progress {
///     pub done: Percent,
/// }
/// # use trails::declare::Shape;
/// assert_eq!(Progress::validate(&json!({"done": 101}))[0].field, "done");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no Trails schema",
    label = "this type cannot be projected to JSON Schema",
    note = "annotate `{Self}` with `#[trails::shape]` (or `#[trails::node_type]`), or implement `trails::declare::Schema` for it"
)]
pub trait Schema {
    /// The schema's members without braces and without `description`, e.g. `"type":"string"`.
    const SCHEMA_MEMBERS: &'static str;
    /// `"description":"…",` from the type's doc comment, or empty.
    const DESCRIPTION_MEMBER: &'static str = "";
    /// How a node type stores a field of this type: a JSON literal, or — for [`crate::Blob`] —
    /// content-addressed bytes with their metadata in the graph.
    #[doc(hidden)]
    const RDF_DATATYPE: Datatype = Datatype::Json;
    /// Whether a value of this type holds a [`crate::Blob`] (itself or in a field): its bytes
    /// are stripped from results, and a node type may hold it only as its own field.
    #[doc(hidden)]
    const CONTAINS_BLOB: bool = false;
    /// Whether the type is a `#[shape]` unit enum (its values are names): a `status` role fits it.
    #[doc(hidden)]
    const IS_ENUM: bool = false;
    /// Whether a field of this type fits a form MCP elicitation shows (`Ctx::elicit`): a
    /// string, number, boolean or enum. A `#[shape]` enum does; a hand-written schema of one of
    /// those says so.
    const FORM_FIELD: bool = Self::IS_ENUM;
    /// The IRIs of the `#[shape]`s a value of this type is made of — itself, what it nests and
    /// what it extends — each followed by a space: a shape that only tools a caller cannot see
    /// are made of is not shown to that caller (`/shapes`, `trails://schema`).
    #[doc(hidden)]
    const SHAPES_USED: &'static str = "";
    /// Check `value` against every constraint, appending failures at `path`.
    fn validate_at(value: &Value, path: &mut Path, errors: &mut Errors);
}

/// A `#[shape]` (or `#[node_type]`): a named, IRI-identified schema that can be a tool's input
/// or output.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Trails shape",
    label = "expected a type annotated with `#[trails::shape]` or `#[trails::node_type]`",
    note = "annotate `{Self}` with `#[trails::shape]`; a shape is a struct with named fields or a unit enum"
)]
pub trait Shape: Schema + Serialize + DeserializeOwned {
    /// The Rust type's name.
    const NAME: &'static str;
    /// The IRI of the SHACL shape this type projects to.
    const IRI: &'static str;
    /// `IRI` as a JSON string literal (quotes included).
    const IRI_JSON: &'static str;
    /// The complete schema object, `{…}`, description included.
    const SCHEMA: &'static str;
    /// The `outputSchema` member of a tool returning `Vec<Self>` (results are wrapped as
    /// `{"items":[…]}` because MCP requires an object). Emitted by the macro because a generic
    /// `impl` cannot concatenate constants.
    const LIST_OUTPUT_SCHEMA_MEMBER: &'static str;
    /// A node type's display roles as JSON members, `"title":"name","status":"state"` (inherited
    /// first), or empty: the manifest's `display_roles` of a capability returning it.
    #[doc(hidden)]
    const DISPLAY_ROLES: &'static str = "";

    /// Every failure of `value` against this shape, not only the first.
    fn validate(value: &Value) -> Vec<FieldError> {
        run(Self::validate_at, value).into_vec()
    }
}

/// A struct shape: one that another shape can `extends`. Its properties, required names and
/// rules are kept apart so a child can merge them into its own at build time.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be extended",
    label = "`extends` needs a `#[shape]` or `#[node_type]` struct",
    note = "only structs with named fields annotated with `#[trails::shape]` or `#[trails::node_type]` can be extended; unit enums and foreign types cannot"
)]
pub trait ObjectShape: Shape {
    /// Whether it is a form MCP elicitation can show (`Ctx::elicit`): flat, each field a string,
    /// number, boolean or enum, or a list of enum values.
    #[doc(hidden)]
    const FORM: bool;
    /// The members of the schema's `properties`, without braces (inherited ones first).
    const PROPERTY_MEMBERS: &'static str;
    /// The items of the schema's `required`, without brackets (inherited ones first).
    const REQUIRED_MEMBERS: &'static str;
    /// Every property name, inherited ones first.
    const FIELD_NAMES: &'static [&'static str];
    /// The validator's rule table (linking the parent's).
    #[doc(hidden)]
    const RULES: &'static ObjectRules;
}

/// A `#[node_type]`: a shape whose instances live in the knowledge graph.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a node type",
    label = "expected a `#[trails::node_type]` here",
    note = "only node types live in the knowledge graph — what a `Ref<T>` points at, a node type `extends`, a capability's `side_effects(writes = …)` and its preconditions name: annotate `{Self}` with `#[trails::node_type(label = \"…\")]`, or use the shape inline"
)]
pub trait NodeType: Shape {
    /// The node type's label: the `trails://kg/<label>` URI segment.
    const LABEL: &'static str;
    /// The RDF mapping of every field.
    const INFO: &'static super::rdf::NodeTypeInfo;
    /// The display roles its fields have, inherited ones first (a child may not repeat one).
    #[doc(hidden)]
    const ROLES: &'static [&'static str] = &[];
}
