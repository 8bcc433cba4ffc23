//! What a handler (or a guard) can fail with. Each variant maps to one JSON-RPC code (the table
//! is `pipeline::Refusal`'s); handlers only pick the variant, and the `Display` text here is the
//! message every transport sends.

use serde_json::Value;

use crate::validate::{failed_message, Errors, FieldCode, FieldError};

/// `Result` with Trails' [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Arguments (or a KG write) broke declared constraints: `-32602` with every field.
    #[error("{}", failed_message(*total))]
    Validation {
        /// The failures kept (at most [`MAX_FIELD_ERRORS`](crate::MAX_FIELD_ERRORS)).
        errors: Vec<FieldError>,
        /// How many failures were found in all.
        total: usize,
    },
    /// No tool of that name is visible to the caller: `-32602` with `{"tool"}`.
    #[error("unknown tool: {0}")]
    UnknownTool(String),
    /// A policy refused the call: `-32002`.
    #[error("policy denied: {0}")]
    PolicyDenied(String),
    /// A declared budget ran out: `-32003` (HTTP 429), with `{"retry_after_secs"}` when known.
    #[error("budget exceeded: {reason}")]
    BudgetExceeded {
        /// Sent to the client.
        reason: String,
        /// When the budget renews, if it does.
        retry_after_secs: Option<u64>,
    },
    /// Anything else: `-32603`. The detail is for logs only and never sent to the client.
    #[error("internal error")]
    Internal(String),
}

impl Error {
    /// A validation failure with these field errors.
    pub fn validation(mut errors: Vec<FieldError>) -> Self {
        let total = errors.len();
        // Bounded like the validator's own report: an error never echoes a huge list back.
        errors.truncate(crate::validate::MAX_FIELD_ERRORS);
        Error::Validation { errors, total }
    }
    /// An internal failure; `detail` is logged under the call's trace id, never sent.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        Error::Internal(detail.to_string())
    }
    /// A policy refusal; `reason` is sent to the client.
    pub fn policy_denied(reason: impl Into<String>) -> Self {
        Error::PolicyDenied(reason.into())
    }
    /// An exhausted budget; `reason` is sent to the client.
    pub fn budget_exceeded(reason: impl Into<String>) -> Self {
        Error::BudgetExceeded { reason: reason.into(), retry_after_secs: None }
    }
}

impl From<Errors> for Error {
    fn from(errors: Errors) -> Self {
        let total = errors.total();
        Error::Validation { errors: errors.into_vec(), total }
    }
}

// Here rather than beside `FieldError`: validation sits below the error type.
impl FieldError {
    /// [`FieldError::rejecting`] as the whole failure of a call.
    #[doc(hidden)]
    pub fn refuse(field: &str, code: FieldCode, message: impl Into<String>, value: &Value, constraint: Value) -> Error {
        Error::validation(vec![FieldError::rejecting(field, code, message, value, constraint)])
    }
}
