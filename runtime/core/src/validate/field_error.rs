//! The structured validation error, as it travels on the wire.

use serde::Serialize;
use serde_json::Value;

/// Why a field was rejected. Serialised as the snake_case `code` of `runtime/guide/07-wire-contract.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldCode {
    /// A required field is absent or `null`.
    Required,
    /// The value has the wrong JSON type.
    Type,
    /// A property the schema does not declare (`additionalProperties: false`).
    UnknownField,
    /// A string shorter than `min_length`.
    MinLength,
    /// A string longer than `max_length`.
    MaxLength,
    /// A string that does not match `pattern`.
    Pattern,
    /// A value outside `one_of`.
    OneOf,
    /// A number below `min_value`.
    MinValue,
    /// A number above `max_value`.
    MaxValue,
    /// A list with fewer items than `min_count`.
    MinCount,
    /// A list with more items than `max_count`.
    MaxCount,
    /// A list that repeats an item where items are a set (a node type's list: `uniqueItems`).
    UniqueItems,
    /// An instance heavier than the store accepts (`[kg] max_instance_bytes`); `field` names its
    /// heaviest field.
    MaxSize,
    /// A value that does not parse under the field's RDF datatype (`?where=` filters).
    TypeMismatch,
    /// A value (or a combination, `unique = [...]`) another instance already has, or a key that is taken.
    Unique,
    /// A `Ref` to nothing of the declared node type, an instance to change that does not exist, or
    /// one still referenced by others.
    Reference,
}

/// One rejected field: where, why, what was sent and which constraint it broke.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldError {
    /// Path from the root of the arguments, segments joined by `/` (`tags/3`, `owner/email`).
    pub field: String,
    /// Which constraint class failed.
    pub code: FieldCode,
    /// A sentence for humans and models: what is wrong and what is allowed.
    pub message: String,
    /// The offending value, shortened so an error never echoes megabytes back to the model.
    pub value: Value,
    /// The declared constraint that failed (the bound, pattern, allowed values, …).
    pub constraint: Value,
}

impl FieldError {
    /// A rejection of `field` whose `value` is echoed shortened (see [`echo`]).
    #[doc(hidden)]
    pub fn rejecting(
        field: &str,
        code: FieldCode,
        message: impl Into<String>,
        value: &Value,
        constraint: Value,
    ) -> FieldError {
        FieldError { field: field.to_owned(), code, message: message.into(), value: echo(value), constraint }
    }
}

/// Longest name (a field name, a tool name, a resource URI) echoed back in an error or a log.
pub const NAME_ECHO_LIMIT: usize = 128;

/// `name` as it may be echoed: at most [`NAME_ECHO_LIMIT`] characters, then an ellipsis and
/// how long it was — a 4 MB tool name must not become a 4 MB error (or log line).
pub fn echo_name(name: &str) -> std::borrow::Cow<'_, str> {
    cut_text(name, NAME_ECHO_LIMIT)
}

/// `text` cut after `limit` characters, saying how long it was.
pub fn cut_text(text: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(limit) {
        None => std::borrow::Cow::Borrowed(text),
        Some((at, _)) => std::borrow::Cow::Owned(format!("{}… ({} bytes)", &text[..at], text.len())),
    }
}

/// Longest string echoed back in `value`; the rest is replaced by an ellipsis.
const ECHO_LIMIT: usize = 200;

/// A copy of `value` that is safe to put in an error: long strings are cut and
/// containers are summarised, so the error stays bounded whatever the client sent.
pub fn echo(value: &Value) -> Value {
    match value {
        Value::String(s) if s.chars().count() > ECHO_LIMIT => {
            let mut cut: String = s.chars().take(ECHO_LIMIT).collect();
            cut.push('…');
            Value::String(cut)
        }
        Value::Array(items) if items.len() > 20 => Value::String(format!("[array of {} items]", items.len())),
        Value::Object(map) if map.len() > 20 => Value::String(format!("{{object with {} keys}}", map.len())),
        Value::Array(_) | Value::Object(_) if value.to_string().len() > 4 * ECHO_LIMIT => {
            Value::String("[value too large to echo]".to_owned())
        }
        other => other.clone(),
    }
}
