//! The traits the macros implement. Every associated constant is a piece of JSON produced at
//! build time; the runtime only ever concatenates or parses them, never derives them.

use std::fmt;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::error::Error;
use crate::field_error::FieldError;
use crate::validate::{run, Errors, Path};

/// A type with a JSON Schema and a validator. `#[shape]` and `#[node_type]` implement it; implement
/// it by hand for a foreign type you want to accept as a field.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no Trails schema",
    label = "this type cannot be projected to JSON Schema",
    note = "annotate `{Self}` with `#[trails::shape]` (or `#[trails::node_type]`), or implement `trails::Schema` for it"
)]
pub trait Schema {
    /// The schema's members without braces and without `description`, e.g. `"type":"string"`.
    const SCHEMA_MEMBERS: &'static str;
    /// `"description":"…",` from the type's doc comment, or empty.
    const DESCRIPTION_MEMBER: &'static str = "";
    /// Check `value` against every constraint, appending failures at `path`.
    fn validate_at(value: &Value, path: &mut Path, errors: &mut Errors);
}

/// A `#[shape]` (or `#[node_type]`): a named, IRI-identified schema that can be a tool's input
/// or output.
pub trait Shape: Schema + Serialize + DeserializeOwned {
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

    /// Every failure of `value` against this shape, not only the first.
    fn validate(value: &Value) -> Vec<FieldError> {
        run(Self::validate_at, value).into_vec()
    }
}

/// A `#[node_type]`: a shape whose instances live in the knowledge graph.
pub trait NodeType: Shape {
    const LABEL: &'static str;
    const INFO: &'static crate::rdf::NodeTypeInfo;
}

/// What a handler may return. `OUTPUT_SCHEMA_MEMBER` is `,"outputSchema":{…}` when the result is
/// structured (a shape, or a list of shapes), and empty otherwise.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a capability",
    note = "return a `#[shape]` type, `Vec<Shape>`, `String`, `serde_json::Value` or `()`"
)]
pub trait ToolOutput {
    const OUTPUT_SCHEMA_MEMBER: &'static str;
    /// The IRI of the output shape as a JSON value: `"…"`, or `null` when unstructured.
    const OUTPUT_SHAPE: &'static str = "null";
    fn into_output(self) -> Result<Output, Error>;
}

/// A handler's result as it goes on the wire: structured content (when the tool has an
/// `outputSchema`) and its text mirror for hosts that only show `content[]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub structured: Option<Value>,
    pub text: String,
}

impl Output {
    pub fn structured(value: Value) -> Self {
        Output { text: value.to_string(), structured: Some(value) }
    }
    pub fn text(text: impl Into<String>) -> Self {
        Output { structured: None, text: text.into() }
    }
}

/// Serialise a shape as structured output. Used by the code `#[shape]` generates.
pub fn shape_output<T: Serialize>(value: &T) -> Result<Output, Error> {
    serde_json::to_value(value).map(Output::structured).map_err(Error::internal)
}

impl<T: Shape> ToolOutput for Vec<T> {
    const OUTPUT_SCHEMA_MEMBER: &'static str = T::LIST_OUTPUT_SCHEMA_MEMBER;
    const OUTPUT_SHAPE: &'static str = T::IRI_JSON;
    fn into_output(self) -> Result<Output, Error> {
        let items = serde_json::to_value(&self).map_err(Error::internal)?;
        Ok(Output::structured(serde_json::json!({ "items": items })))
    }
}

impl ToolOutput for String {
    const OUTPUT_SCHEMA_MEMBER: &'static str = "";
    fn into_output(self) -> Result<Output, Error> {
        Ok(Output::text(self))
    }
}

impl ToolOutput for () {
    const OUTPUT_SCHEMA_MEMBER: &'static str = "";
    fn into_output(self) -> Result<Output, Error> {
        Ok(Output::text("ok"))
    }
}

impl ToolOutput for Value {
    const OUTPUT_SCHEMA_MEMBER: &'static str = "";
    fn into_output(self) -> Result<Output, Error> {
        Ok(Output::text(self.to_string()))
    }
}

/// The declared return type of a handler: `trails::Result<T>` with `T: ToolOutput`.
#[diagnostic::on_unimplemented(
    message = "a capability must return `trails::Result<T>`, found `{Self}`",
    note = "change the return type to `trails::Result<T>` where `T` is a shape, `Vec<Shape>`, `String`, `serde_json::Value` or `()`"
)]
pub trait HandlerResult {
    type Output: ToolOutput;
    fn into_result(self) -> Result<Self::Output, Error>;
}

impl<T: ToolOutput> HandlerResult for Result<T, Error> {
    type Output = T;
    fn into_result(self) -> Result<T, Error> {
        self
    }
}

/// A reference to an instance of node type `T`, carried as its IRI.
/// Projects to `{"type":"string","format":"iri","trails:node_type":"<label>"}`.
pub struct Ref<T> {
    iri: String,
    target: PhantomData<fn() -> T>,
}

impl<T> Ref<T> {
    pub fn new(iri: impl Into<String>) -> Self {
        Ref { iri: iri.into(), target: PhantomData }
    }
    pub fn iri(&self) -> &str {
        &self.iri
    }
}

impl<T> Clone for Ref<T> {
    fn clone(&self) -> Self {
        Ref::new(self.iri.clone())
    }
}
impl<T> PartialEq for Ref<T> {
    fn eq(&self, other: &Self) -> bool {
        self.iri == other.iri
    }
}
impl<T> Eq for Ref<T> {}
impl<T> fmt::Debug for Ref<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Ref<{}>({})", std::any::type_name::<T>(), self.iri)
    }
}
impl<T> Serialize for Ref<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.iri)
    }
}
impl<'de, T> Deserialize<'de> for Ref<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Ref::new)
    }
}

/// The documented date-time field type: an RFC 3339 timestamp in UTC.
/// Projects to `{"type":"string","format":"date-time"}`.
pub type DateTime = chrono::DateTime<chrono::Utc>;
