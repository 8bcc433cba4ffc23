//! What a call ends with, before any transport encodes it: a [`ToolResult`] (MCP sends it as a
//! `CallToolResult`, `POST /invoke` as its body) or a [`Refusal`] (a JSON-RPC error over MCP, an
//! HTTP status and the same error over `/invoke`). The error table — which failure gets which
//! JSON-RPC code and `data` — is [`Refusal::code`] and [`Refusal::data`], and nowhere else.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::auth::{Scope, ScopeSet};
pub use crate::declare::Content;
use crate::error::{Error, ErrorKind};
use crate::validate::{echo_name, failed_message, FieldCode, FieldError};

/// A missing or bad credential.
pub const AUTHENTICATION_FAILED: i32 = -32001;
/// A policy refused the call.
pub const POLICY_DENIED: i32 = -32002;
/// A budget ran out.
pub const BUDGET_EXCEEDED: i32 = -32003;
/// The caller lacks the tool's scope.
pub const SCOPE_DENIED: i32 = -32004;
/// The call needs a capability the client did not declare (MCP's code).
pub const MISSING_CLIENT_CAPABILITY: i32 = -32021;
/// Bad arguments, or an unknown tool (JSON-RPC's own code).
pub const INVALID_PARAMS: i32 = -32602;
/// Anything else (JSON-RPC's own code).
pub const INTERNAL_ERROR: i32 = -32603;

/// A tool's answer: the members of MCP's `CallToolResult`, serialised under the same names (the
/// idempotency ledger keeps results in this form).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolResult {
    /// What a host shows the model.
    #[serde(default)]
    pub content: Vec<Content>,
    /// The result as the tool's `outputSchema` describes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool ran and failed (or its result could not be sent whole).
    #[serde(default)]
    pub is_error: bool,
    /// `_meta`: `{"trails": {"cut": …}}` on a cut result, `{"trails": {"replayed": true}}` on a
    /// replay.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ToolResult {
    /// A successful result: `text` as its one content block, `structured` as its structured
    /// content.
    pub fn success(text: String, structured: Option<Value>) -> ToolResult {
        ToolResult { content: vec![Content::text(text)], structured_content: structured, is_error: false, meta: None }
    }

    /// A failed result whose structured content is `body` (and its text, its JSON).
    pub fn error(body: Value) -> ToolResult {
        ToolResult { is_error: true, ..ToolResult::success(body.to_string(), Some(body)) }
    }

    /// The first text block (what a host that shows text only shows first).
    pub fn text(&self) -> Option<&str> {
        self.content.iter().find_map(|content| match content {
            Content::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
    }

    /// `value` under `_meta.trails.<key>`.
    #[doc(hidden)]
    pub fn set_trails_meta(&mut self, key: &str, value: Value) {
        let meta = self.meta.get_or_insert_with(Map::new);
        let trails = meta.entry("trails").or_insert_with(|| json!({}));
        if !trails.is_object() {
            *trails = json!({});
        }
        trails[key] = value;
    }

    /// A validation failure as an `isError` result (`validation_errors = "tool_result"`):
    /// `{"error", "fields", "omitted"?}` in its structured content.
    pub(crate) fn validation(errors: &[FieldError], total: usize) -> ToolResult {
        let mut body = validation_data(errors, total);
        body["error"] = Value::String(failed_message(total));
        ToolResult::error(body)
    }
}

/// Why a call was answered with an error and not a result.
#[derive(Debug)]
#[non_exhaustive]
pub enum Refusal {
    /// No tool of that name is served to this caller: missing, disabled, `dev` in production, or
    /// denied under `mask_denied` (the same bytes, so a masked denial cannot be told apart).
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// The tool needs a scope, and the caller presented no token.
    AuthenticationRequired {
        /// The tool.
        tool: String,
        /// The scope it needs.
        scope: Scope,
    },
    /// The caller's token lacks the tool's scope.
    ScopeDenied {
        /// The tool.
        tool: String,
        /// The scope it needs.
        scope: Scope,
        /// What the caller holds.
        caller_scopes: ScopeSet,
    },
    /// The handler waits for answers from the client (a round of an input-required result,
    /// MCP 2026-07-28): nothing completed, and the client calls again with the answers. An MCP
    /// transport answers it as `InputRequiredResult`; the guards see the call end unfinished.
    InputRequired(Box<crate::ctx::input::Asked>),
    /// The call was admitted and failed: bad arguments, a policy, a budget, the handler.
    Failed {
        /// Why.
        error: Error,
        /// The call's trace id (an internal error carries it to the client; its detail is in
        /// the log under it).
        trace_id: String,
    },
}

impl Refusal {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i32 {
        match self {
            Refusal::UnknownTool { .. } => INVALID_PARAMS,
            Refusal::AuthenticationRequired { .. } => AUTHENTICATION_FAILED,
            Refusal::ScopeDenied { .. } => SCOPE_DENIED,
            Refusal::InputRequired(_) => INVALID_PARAMS,
            Refusal::Failed { error, .. } => match error {
                Error::Validation { .. } | Error::UnknownTool(_) => INVALID_PARAMS,
                Error::PolicyDenied(_) => POLICY_DENIED,
                Error::MissingClientCapability(_) => MISSING_CLIENT_CAPABILITY,
                Error::BudgetExceeded { .. } => BUDGET_EXCEEDED,
                // A tool call answers these as results; a refusal carries one only where no
                // result can (a guard's own refusal): the caller's request, or the server's state.
                Error::Domain(domain) if domain.kind() == ErrorKind::Unavailable => INTERNAL_ERROR,
                Error::Domain(_) => INVALID_PARAMS,
                Error::Internal(_) => INTERNAL_ERROR,
            },
        }
    }

    /// The error's message (an internal error's detail is never in it).
    pub fn message(&self) -> String {
        match self {
            Refusal::UnknownTool { name } | Refusal::Failed { error: Error::UnknownTool(name), .. } => {
                Error::UnknownTool(echo_name(name).into_owned()).to_string()
            }
            Refusal::AuthenticationRequired { tool, scope } => {
                format!("authentication required: {tool} requires {scope}; present a token")
            }
            Refusal::ScopeDenied { tool, scope, caller_scopes } => format!(
                "scope denied: {tool} requires {scope}; this caller holds {} (a token's scopes, narrowed to the \
                 server's [mcp] scopes / TRAILS_MCP_SCOPES)",
                caller_scopes.names().join(", ")
            ),
            Refusal::InputRequired(_) => {
                "the call needs answers from its client (an input-required result), which this transport cannot carry"
                    .to_owned()
            }
            Refusal::Failed { error, .. } => error.to_string(),
        }
    }

    /// The error's `data`.
    pub fn data(&self) -> Option<Value> {
        match self {
            Refusal::UnknownTool { name } | Refusal::Failed { error: Error::UnknownTool(name), .. } => {
                Some(json!({ "tool": echo_name(name) }))
            }
            Refusal::AuthenticationRequired { tool, scope } => {
                Some(json!({ "tool": tool, "required_scope": scope.as_str() }))
            }
            Refusal::ScopeDenied { tool, scope, caller_scopes } => {
                Some(json!({ "tool": tool, "required_scope": scope.as_str(), "caller_scopes": caller_scopes.names() }))
            }
            Refusal::InputRequired(asked) => Some(json!({ "inputRequests": asked.requests })),
            Refusal::Failed { error, trace_id } => match error {
                Error::Validation { errors, total } => Some(validation_data(errors, *total)),
                Error::BudgetExceeded { retry_after_secs, .. } => {
                    retry_after_secs.map(|secs| json!({ "retry_after_secs": secs }))
                }
                Error::Internal(_) => Some(json!({ "trace_id": trace_id })),
                Error::Domain(domain) => Some(domain.to_json()),
                Error::MissingClientCapability(name) => Some(json!({ "requiredCapabilities": { *name: {} } })),
                Error::PolicyDenied(_) | Error::UnknownTool(_) => None,
            },
        }
    }

    /// Every rejected field is one only the stored data explains (a taken unique value, a
    /// reference to nothing): the request is well-formed and may succeed later (`/invoke`
    /// answers `409`, not `422`).
    pub fn conflicts_only(&self) -> bool {
        match self {
            Refusal::Failed { error: Error::Validation { errors, .. }, .. } => {
                !errors.is_empty()
                    && errors.iter().all(|field| matches!(field.code, FieldCode::Unique | FieldCode::Reference))
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Refusal {}

/// `{"fields":[…]}`, plus `omitted` when the list was cut at its bound.
pub(crate) fn validation_data(errors: &[FieldError], total: usize) -> Value {
    let mut data = json!({ "fields": errors });
    if total > errors.len() {
        data["omitted"] = json!(total - errors.len());
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_reads_back_what_the_ledger_kept_as_an_mcp_call_tool_result() {
        // A row an earlier version wrote: rmcp's serialisation of a `CallToolResult`.
        let stored = r#"{"resultType":"complete","content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1},"isError":false}"#;
        let result: ToolResult = serde_json::from_str(stored).unwrap();
        assert_eq!(result, ToolResult::success(r#"{"a":1}"#.into(), Some(json!({ "a": 1 }))));
        let mut replayed = result.clone();
        replayed.set_trails_meta("replayed", json!(true));
        let again: ToolResult = serde_json::from_str(&serde_json::to_string(&replayed).unwrap()).unwrap();
        assert_eq!(again, replayed);
        assert_eq!(again.meta.unwrap()["trails"], json!({ "replayed": true }));
    }

    #[test]
    fn each_refusal_has_the_code_and_data_of_the_error_table() {
        let failed = |error| Refusal::Failed { error, trace_id: "t1".into() };
        let denied = Refusal::ScopeDenied {
            tool: "x".into(),
            scope: Scope::Builder,
            caller_scopes: ScopeSet::up_to(Scope::Runtime),
        };
        assert_eq!(denied.code(), -32004);
        assert!(denied.message().starts_with("scope denied: x requires builder; this caller holds runtime"));
        assert!(denied.message().contains("[mcp] scopes"), "names the setting that narrows a token");
        assert_eq!(denied.data().unwrap()["caller_scopes"], json!(["runtime"]));
        let internal = failed(Error::internal("the password is hunter2"));
        assert_eq!((internal.code(), internal.message().as_str()), (-32603, "internal error"));
        assert_eq!(internal.data(), Some(json!({ "trace_id": "t1" })), "the detail is never sent");
        let long = "n".repeat(10_000);
        let unknown = Refusal::UnknownTool { name: long.clone() };
        assert_eq!(unknown.code(), -32602);
        assert!(unknown.message().len() < 200 && unknown.data().unwrap()["tool"].as_str().unwrap().len() < 200);
        assert_eq!(failed(Error::UnknownTool(long)).data(), unknown.data());
        let budget = failed(Error::BudgetExceeded { reason: "spent".into(), retry_after_secs: Some(5) });
        assert_eq!((budget.code(), budget.data()), (-32003, Some(json!({ "retry_after_secs": 5 }))));
        assert_eq!(failed(Error::policy_denied("no")).code(), -32002);
        // A domain error is a result on a call; a guard that refuses with one gets a code that
        // says whose it is, and the body the model would have read.
        let missing = failed(Error::not_found("no order 7"));
        assert_eq!((missing.code(), missing.message().as_str()), (-32602, "not found: no order 7"));
        assert_eq!(missing.data().unwrap()["kind"], "not_found");
        assert_eq!(failed(Error::unavailable("down")).code(), -32603);
    }

    #[test]
    fn only_stored_data_conflicts_make_a_conflict() {
        let field =
            |code| FieldError { field: "f".into(), code, message: "m".into(), value: json!(1), constraint: json!(1) };
        let with = |codes: Vec<FieldCode>| Refusal::Failed {
            error: Error::validation(codes.into_iter().map(field).collect()),
            trace_id: String::new(),
        };
        assert!(with(vec![FieldCode::Unique, FieldCode::Reference]).conflicts_only());
        assert!(!with(vec![FieldCode::Unique, FieldCode::Pattern]).conflicts_only());
        assert!(!with(vec![]).conflicts_only());
    }
}
