//! Errors that are not a call's: a resource that names nothing, a credential refused, a failure
//! reading a resource. A call's errors are `pipeline::Refusal`'s (see
//! `wire::call`); these use the same codes and shapes.

use rmcp::model::ErrorCode;
use rmcp::ErrorData;
use serde_json::json;

use crate::config::ValidationErrors;
use trails_core::error::Error;
use trails_core::pipeline::{Refusal, AUTHENTICATION_FAILED};
use trails_core::validate::echo_name;

/// A resource URI that names nothing this server has: `-32602` with `{"uri"}`.
pub(crate) fn unknown_resource(uri: &str) -> ErrorData {
    let uri = echo_name(uri);
    ErrorData::new(ErrorCode::INVALID_PARAMS, format!("unknown resource: {uri}"), Some(json!({ "uri": uri })))
}

pub(crate) fn authentication_failed() -> ErrorData {
    ErrorData::new(ErrorCode(AUTHENTICATION_FAILED), "authentication failed", None)
}

/// A token sent to a server that has none configured: the operator's set-up to fix, said so (a
/// client learns only that no token can pass here, which every token it tries would show).
#[cfg(any(feature = "http", feature = "testing"))]
pub(crate) fn no_tokens_configured(setting: &str) -> ErrorData {
    let message = format!(
        "authentication failed: this server has no tokens configured ({setting}); send no token to call as anonymous"
    );
    ErrorData::new(ErrorCode(AUTHENTICATION_FAILED), message, None)
}

/// A failure reading a resource, encoded as a call's would be. Internal details are logged
/// here, under `trace_id`, and never sent.
pub(crate) fn from_error(error: Error, trace_id: &str) -> ErrorData {
    if let Error::Internal(detail) = &error {
        tracing::error!(%detail, trace_id, "resource read failed");
    }
    super::call::refusal(&Refusal::Failed { error, trace_id: trace_id.to_owned() })
}

/// What `initialize` tells clients about errors, for the configured validation mode.
pub(crate) fn instructions(mode: ValidationErrors) -> &'static str {
    match mode {
        ValidationErrors::Jsonrpc => {
            "Tools carry `_meta.trails` (kind, id, scope). Validation failures are JSON-RPC -32602 errors whose \
             data.fields lists every rejected field. A failure to act on (not found, conflict, precondition failed, \
             unavailable) is a tool result with isError: true whose text is the JSON {kind, message, retryable, \
             retry_after_secs?}."
        }
        ValidationErrors::ToolResult => {
            "Tools carry `_meta.trails` (kind, id, scope). Validation failures are tool results with isError: true \
             whose text is the JSON {error, fields} listing every rejected field. A failure to act on (not found, \
             conflict, precondition failed, unavailable) is such a result too, its text the JSON {kind, message, \
             retryable, retry_after_secs?}."
        }
    }
}
