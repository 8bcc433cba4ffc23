//! DESIGN §4.2 in one place: how each failure looks on the wire. Every transport (MCP over stdio
//! and HTTP, the HTTP layer's own refusals, later `POST /invoke`) builds its errors here, so the
//! codes, messages and `data` can only be spelled once.

use std::borrow::Cow;

use rmcp::model::ErrorCode;
use rmcp::ErrorData;
use serde_json::{json, Value};

use crate::auth::{Caller, Scope};
use crate::config::ValidationErrors;
use crate::error::Error;
use crate::validate::{echo_name, FieldError};

/// A missing or bad credential.
pub(crate) const AUTHENTICATION_FAILED: i32 = -32001;
/// A policy refused the call.
pub(crate) const POLICY_DENIED: i32 = -32002;
/// A budget ran out.
pub(crate) const BUDGET_EXCEEDED: i32 = -32003;
/// The caller lacks the tool's scope.
pub(crate) const SCOPE_DENIED: i32 = -32004;

fn error(code: i32, message: impl Into<Cow<'static, str>>, data: Option<Value>) -> ErrorData {
    ErrorData::new(ErrorCode(code), message, data)
}

/// The list and the call both say "unknown" for tools a caller may not know about, in the same
/// bytes, so a masked denial cannot be told apart from a missing tool.
/// The name is echoed cut (`echo_name`), like every name a client sends.
pub(crate) fn unknown_tool(name: &str) -> ErrorData {
    let name = echo_name(name);
    let message = Error::UnknownTool(name.clone().into_owned()).to_string();
    error(ErrorCode::INVALID_PARAMS.0, message, Some(json!({ "tool": name })))
}

/// A resource URI that names nothing this server has (DESIGN §4.2: `-32602` with `{"uri"}`).
pub(crate) fn unknown_resource(uri: &str) -> ErrorData {
    let uri = echo_name(uri);
    error(ErrorCode::INVALID_PARAMS.0, format!("unknown resource: {uri}"), Some(json!({ "uri": uri })))
}

/// `{"fields":[…]}`, plus `omitted` when the list was cut at its bound.
pub(crate) fn validation_data(errors: &[FieldError], total: usize) -> Value {
    let mut data = json!({ "fields": errors });
    if total > errors.len() {
        data["omitted"] = json!(total - errors.len());
    }
    data
}

pub(crate) fn authentication_required(tool: &str, scope: Scope) -> ErrorData {
    error(
        AUTHENTICATION_FAILED,
        format!("authentication required: {tool} requires {scope}; present a token"),
        Some(json!({ "tool": tool, "required_scope": scope.as_str() })),
    )
}

pub(crate) fn authentication_failed() -> ErrorData {
    error(AUTHENTICATION_FAILED, "authentication failed", None)
}

pub(crate) fn scope_denied(tool: &str, scope: Scope, caller: &Caller) -> ErrorData {
    error(
        SCOPE_DENIED,
        format!("scope denied: {tool} requires {scope}"),
        Some(json!({ "tool": tool, "required_scope": scope.as_str(), "caller_scopes": caller.scopes.names() })),
    )
}

/// Never carries the cause: that goes to the log under the same trace id.
pub(crate) fn internal(trace_id: &str) -> ErrorData {
    error(ErrorCode::INTERNAL_ERROR.0, "internal error", Some(json!({ "trace_id": trace_id })))
}

/// A handler's (or the validator's) [`Error`] on the wire. Internal details are logged here,
/// under `trace_id`, and never sent.
pub(crate) fn from_error(error: Error, trace_id: &str) -> ErrorData {
    let message = error.to_string();
    match error {
        Error::Validation { errors, total } => {
            error_with(ErrorCode::INVALID_PARAMS.0, message, validation_data(&errors, total))
        }
        Error::UnknownTool(name) => unknown_tool(&name),
        Error::PolicyDenied(_) => self::error(POLICY_DENIED, message, None),
        Error::BudgetExceeded { retry_after_secs, .. } => {
            let data = retry_after_secs.map(|secs| json!({ "retry_after_secs": secs }));
            self::error(BUDGET_EXCEEDED, message, data)
        }
        Error::Internal(detail) => {
            tracing::error!(%detail, trace_id, "handler failed");
            internal(trace_id)
        }
    }
}

/// The same validation failure as an `isError: true` tool result (`validation_errors =
/// "tool_result"`, SEP-1303 style): `{"error", "fields", "omitted"?}` in `structuredContent`.
pub(crate) fn validation_result(errors: &[FieldError], total: usize) -> rmcp::model::CallToolResult {
    let mut body = validation_data(errors, total);
    body["error"] = Value::String(crate::validate::failed_message(total));
    rmcp::model::CallToolResult::structured_error(body)
}

/// What `initialize` tells clients about errors, for the configured validation mode.
pub(crate) fn instructions(mode: ValidationErrors) -> &'static str {
    match mode {
        ValidationErrors::Jsonrpc => {
            "Tools carry `_meta.trails` (kind, scope, manifest_uri). Validation failures are JSON-RPC -32602 \
             errors whose data.fields lists every rejected field."
        }
        ValidationErrors::ToolResult => {
            "Tools carry `_meta.trails` (kind, scope, manifest_uri). Validation failures are tool results with \
             isError: true whose structuredContent.fields lists every rejected field."
        }
    }
}

fn error_with(code: i32, message: String, data: Value) -> ErrorData {
    error(code, message, Some(data))
}

/// A whole JSON-RPC error response with `id: null`, for refusals made before a request is read
/// (the HTTP layer's 401).
pub(crate) fn response_body(error: &ErrorData) -> String {
    json!({ "jsonrpc": "2.0", "id": null, "error": error }).to_string()
}
