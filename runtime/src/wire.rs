//! DESIGN §4.2: how each failure looks on the wire. One function per row of the table, so
//! every transport (MCP over stdio and HTTP, `POST /invoke`) answers identically.

use std::borrow::Cow;

use rmcp::model::ErrorCode;
use rmcp::ErrorData;
use serde_json::{json, Value};

use crate::auth::Caller;
use crate::field_error::FieldError;
use crate::scope::Scope;

pub const AUTHENTICATION_FAILED: i32 = -32001;
pub const POLICY_DENIED: i32 = -32002;
pub const BUDGET_EXCEEDED: i32 = -32003;
pub const SCOPE_DENIED: i32 = -32004;

fn error(code: i32, message: impl Into<Cow<'static, str>>, data: Option<Value>) -> ErrorData {
    ErrorData::new(ErrorCode(code), message, data)
}

/// The list and the call both say "unknown" for tools a caller may not know about, in the same
/// bytes, so a masked denial cannot be told apart from a missing tool.
pub fn unknown_tool(name: &str) -> ErrorData {
    error(ErrorCode::INVALID_PARAMS.0, format!("unknown tool: {name}"), Some(json!({ "tool": name })))
}

pub fn validation_failed(errors: &[FieldError], total: usize) -> ErrorData {
    error(ErrorCode::INVALID_PARAMS.0, format!("validation failed on {total} field(s)"), Some(validation_data(errors, total)))
}

/// `{"fields":[…]}`, plus `omitted` when the list was cut at its bound.
pub fn validation_data(errors: &[FieldError], total: usize) -> Value {
    let mut data = json!({ "fields": errors });
    if total > errors.len() {
        data["omitted"] = json!(total - errors.len());
    }
    data
}

pub fn authentication_required(tool: &str, scope: Scope) -> ErrorData {
    error(
        AUTHENTICATION_FAILED,
        format!("authentication required: {tool} requires {scope}; present a token"),
        Some(json!({ "tool": tool, "required_scope": scope.as_str() })),
    )
}

pub fn authentication_failed() -> ErrorData {
    error(AUTHENTICATION_FAILED, "authentication failed", None)
}

pub fn scope_denied(tool: &str, scope: Scope, caller: &Caller) -> ErrorData {
    error(
        SCOPE_DENIED,
        format!("scope denied: {tool} requires {scope}"),
        Some(json!({ "tool": tool, "required_scope": scope.as_str(), "caller_scopes": caller.scopes.names() })),
    )
}

pub fn policy_denied(reason: &str) -> ErrorData {
    error(POLICY_DENIED, format!("policy denied: {reason}"), None)
}

pub fn budget_exceeded(reason: &str) -> ErrorData {
    error(BUDGET_EXCEEDED, format!("budget exceeded: {reason}"), None)
}

/// Never carries the cause: that goes to the log under the same trace id.
pub fn internal(trace_id: &str) -> ErrorData {
    error(ErrorCode::INTERNAL_ERROR.0, "internal error", Some(json!({ "trace_id": trace_id })))
}
