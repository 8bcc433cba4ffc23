//! What handlers return, and how it goes on the wire.

use serde::Serialize;
use serde_json::Value;

use super::traits::Shape;
use crate::error::Error;

/// What a handler may return. `OUTPUT_SCHEMA_MEMBER` is `,"outputSchema":{…}` when the result is
/// structured (a shape, or a list of shapes), and empty otherwise.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a capability",
    note = "return a `#[shape]` type, `Vec<Shape>`, `String`, `serde_json::Value` or `()`"
)]
pub trait ToolOutput {
    /// `,"outputSchema":{…}` or empty.
    const OUTPUT_SCHEMA_MEMBER: &'static str;
    /// The IRI of the output shape as a JSON value: `"…"`, or `null` when unstructured.
    const OUTPUT_SHAPE: &'static str = "null";
    /// The value as it goes on the wire.
    fn into_output(self) -> Result<Output, Error>;
}

/// A handler's result as it goes on the wire: structured content (when the tool has an
/// `outputSchema`) and its text mirror for hosts that only show `content[]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// `structuredContent`, for tools with an `outputSchema`.
    pub structured: Option<Value>,
    /// The text block of `content[]`.
    pub text: String,
    /// `structured` is `{"items": [...]}` of a `Vec<Shape>` result: a result over
    /// `[mcp] max_result_bytes` keeps the items that fit instead of failing.
    list: bool,
}

impl Output {
    /// Structured content with its JSON text as the mirror.
    pub fn structured(value: Value) -> Self {
        Output { text: value.to_string(), structured: Some(value), list: false }
    }
    /// `{"items": items}` of a list result, with its JSON text as the mirror.
    pub(crate) fn list(items: Value) -> Self {
        Output { list: true, ..Output::structured(serde_json::json!({ "items": items })) }
    }
    /// Text only.
    pub fn text(text: impl Into<String>) -> Self {
        Output { structured: None, text: text.into(), list: false }
    }
    /// Whether this is a list result (see [`Output::list`]).
    pub(crate) fn is_list(&self) -> bool {
        self.list
    }
}

/// Serialise a shape as structured output. Used by the code `#[shape]` generates.
#[doc(hidden)]
pub fn shape_output<T: Shape>(value: &T) -> Result<Output, Error> {
    structured::<T>(value).map(Output::structured)
}

/// `value` as JSON, with the bytes of every blob stripped (models see blobs' metadata only).
fn structured<T: Shape>(value: &impl Serialize) -> Result<Value, Error> {
    let mut json = serde_json::to_value(value).map_err(Error::internal)?;
    if T::CONTAINS_BLOB {
        super::blob::strip_bytes(&mut json);
    }
    Ok(json)
}

impl<T: Shape> ToolOutput for Vec<T> {
    const OUTPUT_SCHEMA_MEMBER: &'static str = T::LIST_OUTPUT_SCHEMA_MEMBER;
    const OUTPUT_SHAPE: &'static str = T::IRI_JSON;
    fn into_output(self) -> Result<Output, Error> {
        Ok(Output::list(structured::<T>(&self)?))
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
    /// The success type.
    type Output: ToolOutput;
    /// The result itself.
    fn into_result(self) -> Result<Self::Output, Error>;
}

impl<T: ToolOutput> HandlerResult for Result<T, Error> {
    type Output = T;
    fn into_result(self) -> Result<T, Error> {
        self
    }
}
