//! What handlers return, and how it goes on the wire.

use serde::Serialize;
use serde_json::Value;

use super::content::Content;
use super::traits::Shape;
use crate::error::Error;

/// What a handler may return. `OUTPUT_SCHEMA_MEMBER` is `,"outputSchema":{…}` when the result is
/// structured (a shape, or a list of shapes), and empty otherwise.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a capability",
    note = "return a `#[shape]` type, `Vec<Shape>`, a number, `bool`, `String`, `serde_json::Value`, `()`, or `Content` / `Vec<Content>` (images, audio, embedded resources)"
)]
pub trait ToolOutput {
    /// `,"outputSchema":{…}` or empty.
    const OUTPUT_SCHEMA_MEMBER: &'static str;
    /// The IRI of the output shape as a JSON value: `"…"`, or `null` when unstructured.
    const OUTPUT_SHAPE: &'static str = "null";
    /// The IRI of the output shape, unquoted: what the runtime looks the shape up by.
    const OUTPUT_IRI: Option<&'static str> = None;
    /// Whether the value goes on the wire as a list, `{"items": […]}`.
    const OUTPUT_LIST: bool = false;
    /// The output node type's display roles as JSON members (see `Shape::DISPLAY_ROLES`).
    #[doc(hidden)]
    const OUTPUT_ROLES: &'static str = "";
    /// The shapes the output is made of (see `Schema::SHAPES_USED`).
    #[doc(hidden)]
    const OUTPUT_SHAPES: &'static str = "";
    /// The value as it goes on the wire.
    fn into_output(self) -> Result<Output, Error>;
}

/// A handler's result as it goes on the wire: structured content (when the tool has an
/// `outputSchema`) and its text mirror for hosts that only show `content[]`, or content blocks
/// of other kinds ([`Output::content`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// `structuredContent`, for tools with an `outputSchema`.
    pub structured: Option<Value>,
    /// The text block of `content[]` (empty when the blocks are [`Output::blocks`]).
    pub text: String,
    /// `structured` is `{"items": [...]}` of a `Vec<Shape>` result: a result over the window
    /// keeps the items that fit (or their evidence cards) instead of failing.
    list: bool,
    /// The list items' display roles (`Shape::DISPLAY_ROLES`): a cut list shows their cards.
    roles: &'static str,
    /// `content[]` as the handler gave it (images, audio, embedded resources, mixed), in place
    /// of the text block.
    blocks: Option<Vec<Content>>,
}

impl Output {
    /// Structured content with its JSON text as the mirror.
    pub fn structured(value: Value) -> Self {
        Output { text: value.to_string(), structured: Some(value), list: false, roles: "", blocks: None }
    }
    /// These blocks as `content[]`, without structured content.
    pub fn content(blocks: Vec<Content>) -> Self {
        Output { text: String::new(), structured: None, list: false, roles: "", blocks: Some(blocks) }
    }
    /// The blocks given with [`Output::content`], if any.
    pub fn blocks(&self) -> Option<&[Content]> {
        self.blocks.as_deref()
    }
    pub(crate) fn take_blocks(&mut self) -> Option<Vec<Content>> {
        self.blocks.take()
    }
    /// `{"items": items}` of a list result, with its JSON text as the mirror; `roles` are the
    /// items' display roles (`Shape::DISPLAY_ROLES`, empty for none).
    pub(crate) fn list(items: Value, roles: &'static str) -> Self {
        Output { list: true, roles, ..Output::structured(serde_json::json!({ "items": items })) }
    }
    /// Text only.
    pub fn text(text: impl Into<String>) -> Self {
        Output { structured: None, text: text.into(), list: false, roles: "", blocks: None }
    }
    /// Whether this is a list result (see [`Output::list`]).
    pub(crate) fn is_list(&self) -> bool {
        self.list
    }
    /// The list items' display roles, as `Shape::DISPLAY_ROLES` writes them.
    pub(crate) fn roles(&self) -> &'static str {
        self.roles
    }
}

/// The members a list result's `outputSchema` adds beside `items` for when the list is cut to the
/// window (`pipeline::bound`): the items' evidence cards, how many there are in all, what was cut
/// and the call that reads on. Without braces: the macro writes them into each list's schema.
#[doc(hidden)]
pub const LIST_CUT_MEMBERS: &str = r#""cards":{"type":"array","description":"When the list is cut: evidence cards of its items, each naming its item","items":{"type":"object","properties":{"item":{"type":"integer","minimum":0},"label":{"type":"string"},"excerpt":{"type":"string"},"timestamp":{"type":"string"},"status":{"type":"string"},"identifier":{"type":["string","integer"]},"url":{"type":"string"}},"required":["item"]}},"total":{"type":"integer","minimum":0,"description":"When the list is cut: its items in all"},"cut":{"type":"string","description":"When the list is cut: what is shown of it"},"next_call":{"type":["object","null"],"description":"When the list is cut: the call that reads on"}"#;

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
    const OUTPUT_IRI: Option<&'static str> = Some(T::IRI);
    const OUTPUT_LIST: bool = true;
    const OUTPUT_ROLES: &'static str = T::DISPLAY_ROLES;
    const OUTPUT_SHAPES: &'static str = T::SHAPES_USED;
    fn into_output(self) -> Result<Output, Error> {
        Ok(Output::list(structured::<T>(&self)?, T::DISPLAY_ROLES))
    }
}

/// Numbers and booleans are structured as `{"result": value}`: structured content is an object
/// (MCP's rule; FastMCP wraps a scalar the same way), and the `outputSchema` says so.
macro_rules! scalar_output {
    ($schema:literal => $($ty:ty),+) => {$(
        impl ToolOutput for $ty {
            const OUTPUT_SCHEMA_MEMBER: &'static str = concat!(
                r#","outputSchema":{"type":"object","properties":{"result":"#, $schema, r#"},"required":["result"]}"#
            );
            fn into_output(self) -> Result<Output, Error> {
                Ok(Output::structured(serde_json::json!({ "result": self })))
            }
        }
    )+};
}

scalar_output!(r#"{"type":"integer","minimum":0}"# => u8, u16, u32, u64, usize);
scalar_output!(r#"{"type":"integer"}"# => i8, i16, i32, i64, isize);
scalar_output!(r#"{"type":"boolean"}"# => bool);

/// JSON has no NaN or infinity: a handler that computed one gets an internal error, not a
/// `null` the `outputSchema` forbids.
impl ToolOutput for f64 {
    const OUTPUT_SCHEMA_MEMBER: &'static str =
        r#","outputSchema":{"type":"object","properties":{"result":{"type":"number"}},"required":["result"]}"#;
    fn into_output(self) -> Result<Output, Error> {
        if !self.is_finite() {
            return Err(Error::internal(format!("the capability returned {self}, which JSON cannot carry")));
        }
        Ok(Output::structured(serde_json::json!({ "result": self })))
    }
}

impl ToolOutput for f32 {
    const OUTPUT_SCHEMA_MEMBER: &'static str = f64::OUTPUT_SCHEMA_MEMBER;
    fn into_output(self) -> Result<Output, Error> {
        // Through its shortest decimal form: `0.1_f32` is `0.1`, not `0.10000000149011612`.
        match self.to_string().parse::<f64>() {
            Ok(value) if self.is_finite() => value.into_output(),
            _ => f64::from(self).into_output(),
        }
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

/// One block as the result's `content[]`: an image, audio, an embedded resource, a link.
impl ToolOutput for Content {
    const OUTPUT_SCHEMA_MEMBER: &'static str = "";
    fn into_output(self) -> Result<Output, Error> {
        Ok(Output::content(vec![self]))
    }
}

/// Mixed content: the blocks in order.
impl ToolOutput for Vec<Content> {
    const OUTPUT_SCHEMA_MEMBER: &'static str = "";
    fn into_output(self) -> Result<Output, Error> {
        Ok(Output::content(self))
    }
}

/// The declared return type of a handler: `trails::Result<T>` with `T: ToolOutput`.
#[diagnostic::on_unimplemented(
    message = "a capability must return `trails::Result<T>`, found `{Self}`",
    note = "change the return type to `trails::Result<T>` where `T` is a shape, `Vec<Shape>`, a number, `bool`, `String`, `serde_json::Value`, `()`, `Content` or `Vec<Content>`"
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

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::ToolOutput;

    /// The schema each scalar declares, and the structured content that must satisfy it.
    fn declared<T: ToolOutput>(value: T) -> (Value, Value) {
        let member = T::OUTPUT_SCHEMA_MEMBER.strip_prefix(",\"outputSchema\":").expect("a schema member");
        let schema: Value = serde_json::from_str(member).expect("the schema is JSON");
        let output = value.into_output().expect("a scalar is an output");
        assert_eq!(output.text, output.structured.as_ref().unwrap().to_string(), "the text mirrors it");
        (schema["properties"]["result"].clone(), output.structured.unwrap())
    }

    #[test]
    fn scalars_are_wrapped_as_result_with_a_matching_schema() {
        assert_eq!(declared(u64::MAX), (json!({"type": "integer", "minimum": 0}), json!({"result": u64::MAX})));
        assert_eq!(declared(-3_i32), (json!({"type": "integer"}), json!({"result": -3})));
        assert_eq!(declared(true), (json!({"type": "boolean"}), json!({"result": true})));
        assert_eq!(declared(0.5_f64), (json!({"type": "number"}), json!({"result": 0.5})));
        assert_eq!(declared(0.1_f32), (json!({"type": "number"}), json!({"result": 0.1})));
    }

    #[test]
    fn a_float_json_cannot_carry_is_an_internal_error() {
        for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let error = value.into_output().unwrap_err();
            assert!(
                matches!(&error, super::Error::Internal(detail) if detail.contains("JSON cannot carry")),
                "{error:?}"
            );
        }
    }
}
