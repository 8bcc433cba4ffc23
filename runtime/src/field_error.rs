//! The structured validation error of ADR-0056, as it travels on the wire.

use serde::Serialize;
use serde_json::Value;

/// Why a field was rejected. Serialised as the snake_case `code` of DESIGN §4.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldCode {
    Required,
    Type,
    UnknownField,
    MinLength,
    MaxLength,
    Pattern,
    OneOf,
    MinValue,
    MaxValue,
    MinCount,
    MaxCount,
    TypeMismatch,
}

/// One rejected field: where, why, what was sent and which constraint it broke.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldError {
    /// Path from the root of the arguments, segments joined by `/` (`tags/3`, `owner/email`).
    pub field: String,
    pub code: FieldCode,
    pub message: String,
    /// The offending value, shortened so an error never echoes megabytes back to the model.
    pub value: Value,
    pub constraint: Value,
}

/// Longest string echoed back in `value`; the rest is replaced by an ellipsis.
const ECHO_LIMIT: usize = 200;

/// A copy of `value` that is safe to put in an error: long strings are cut and
/// containers are summarised, so the error stays bounded whatever the client sent.
pub(crate) fn echo(value: &Value) -> Value {
    match value {
        Value::String(s) if s.chars().count() > ECHO_LIMIT => {
            let mut cut: String = s.chars().take(ECHO_LIMIT).collect();
            cut.push('…');
            Value::String(cut)
        }
        Value::Array(items) if items.len() > 20 => {
            Value::String(format!("[array of {} items]", items.len()))
        }
        Value::Object(map) if map.len() > 20 => {
            Value::String(format!("{{object with {} keys}}", map.len()))
        }
        Value::Array(_) | Value::Object(_) if value.to_string().len() > 4 * ECHO_LIMIT => {
            Value::String("[value too large to echo]".to_owned())
        }
        other => other.clone(),
    }
}
