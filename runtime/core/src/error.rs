//! What a handler (or a guard) can fail with. Each variant maps to one JSON-RPC code (the table
//! is `pipeline::Refusal`'s); handlers only pick the variant, and the `Display` text here is the
//! message every transport sends.

use std::time::Duration;

use serde_json::{json, Value};

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
    /// A failure the caller can act on — not found, conflict, precondition failed, unavailable —
    /// reported by the handler: an `isError` tool result the model reads (`/invoke`: 404, 409,
    /// 412 or 503). Built with [`Error::not_found`], [`Error::conflict`],
    /// [`Error::precondition_failed`] and [`Error::unavailable`].
    #[error("{0}")]
    Domain(DomainError),
    /// The call needs a capability its client did not declare (`elicitation`, `sampling`,
    /// `roots`: [`crate::Ctx::elicit`] and the like): MCP's `-32021`, with
    /// `{"requiredCapabilities": {"<name>": {}}}`.
    #[error("this call needs the client's `{0}` capability, which the client did not declare")]
    MissingClientCapability(&'static str),
    /// Anything else: `-32603`. The detail is for logs only and never sent to the client.
    #[error("internal error")]
    Internal(String),
}

/// What kind of failure a [`DomainError`] is: what the caller can do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// What the call names does not exist (`/invoke`: 404).
    NotFound,
    /// The call conflicts with the current state: it exists already, or changed meanwhile (409).
    Conflict,
    /// A condition the call depends on does not hold, or the capability refuses the call for a
    /// reason it states (412).
    PreconditionFailed,
    /// Something the capability depends on is unavailable now: retry later (503).
    Unavailable,
}

impl ErrorKind {
    /// `not_found`, `conflict`, `precondition_failed` or `unavailable`: the wire's `kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::Conflict => "conflict",
            ErrorKind::PreconditionFailed => "precondition_failed",
            ErrorKind::Unavailable => "unavailable",
        }
    }

    /// The HTTP status `/invoke` answers with.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::NotFound => 404,
            ErrorKind::Conflict => 409,
            ErrorKind::PreconditionFailed => 412,
            ErrorKind::Unavailable => 503,
        }
    }
}

/// A failure the caller can act on: its kind, the handler's message, and whether (and when) the
/// same call may succeed if retried. The model sees all of it; nothing here is a server's secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", kind.as_str().replace('_', " "))]
pub struct DomainError {
    kind: ErrorKind,
    message: String,
    retryable: bool,
    retry_after_secs: Option<u64>,
}

impl DomainError {
    /// What kind of failure it is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// The handler's message.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// Whether the same call may succeed if retried.
    pub fn retryable(&self) -> bool {
        self.retryable
    }
    /// When a retry may succeed, if the handler said.
    pub fn retry_after_secs(&self) -> Option<u64> {
        self.retry_after_secs
    }
    /// `{"kind", "message", "retryable", "retry_after_secs"?}`: what the model reads.
    pub fn to_json(&self) -> Value {
        let mut body = json!({ "kind": self.kind.as_str(), "message": self.message, "retryable": self.retryable });
        if let Some(secs) = self.retry_after_secs {
            body["retry_after_secs"] = json!(secs);
        }
        body
    }
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

    fn domain(kind: ErrorKind, message: impl Into<String>, retryable: bool) -> Self {
        Error::Domain(DomainError { kind, message: message.into(), retryable, retry_after_secs: None })
    }
    /// What the call names does not exist: `Err(Error::not_found(format!("no order {id}")))`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Error::domain(ErrorKind::NotFound, message, false)
    }
    /// The call conflicts with the current state (an order already shipped). Not retryable
    /// unless [`Error::retryable`] says so (the state changed under the call).
    pub fn conflict(message: impl Into<String>) -> Self {
        Error::domain(ErrorKind::Conflict, message, false)
    }
    /// A condition the call depends on does not hold, or the capability refuses the call:
    /// `reason` says which, so the model can fix the call.
    pub fn precondition_failed(reason: impl Into<String>) -> Self {
        Error::domain(ErrorKind::PreconditionFailed, reason, false)
    }
    /// Something the capability depends on is unavailable now; retryable. Say when with
    /// [`Error::retry_after`]: `Err(Error::unavailable("the mail relay refused").retry_after(Duration::from_secs(30)))`.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Error::domain(ErrorKind::Unavailable, message, true)
    }
    /// This domain error may go away if the same call is retried (a conflict with a concurrent
    /// change). Other errors are returned unchanged.
    pub fn retryable(self) -> Self {
        match self {
            Error::Domain(domain) => Error::Domain(DomainError { retryable: true, ..domain }),
            other => other,
        }
    }
    /// When a retry may succeed (rounded up to whole seconds): a domain error becomes retryable
    /// and carries `retry_after_secs` (`/invoke` sends `Retry-After`), as does a spent budget.
    /// Other errors are returned unchanged.
    pub fn retry_after(self, after: Duration) -> Self {
        let secs = Some(after.as_secs() + u64::from(after.subsec_nanos() > 0));
        match self {
            Error::Domain(domain) => Error::Domain(DomainError { retryable: true, retry_after_secs: secs, ..domain }),
            Error::BudgetExceeded { reason, .. } => Error::BudgetExceeded { reason, retry_after_secs: secs },
            other => other,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_domain_error_says_what_the_caller_can_do_in_one_line() {
        let Error::Domain(missing) = Error::not_found("no order 7") else { panic!() };
        assert_eq!(missing.to_json(), json!({ "kind": "not_found", "message": "no order 7", "retryable": false }));
        assert_eq!(missing.to_string(), "not found: no order 7");
        let Error::Domain(busy) = Error::unavailable("relay down").retry_after(Duration::from_millis(1500)) else {
            panic!()
        };
        assert_eq!(busy.retry_after_secs(), Some(2), "rounded up: waiting what it says is never early");
        assert_eq!(busy.kind().http_status(), 503);
        let Error::Domain(raced) = Error::conflict("changed meanwhile").retryable() else { panic!() };
        assert!(raced.retryable() && raced.retry_after_secs().is_none());
        let Error::Domain(refused) = Error::precondition_failed("review it first") else { panic!() };
        assert_eq!((refused.kind().as_str(), refused.retryable()), ("precondition_failed", false));
        let Error::BudgetExceeded { retry_after_secs, .. } =
            Error::budget_exceeded("spent").retry_after(Duration::from_secs(60))
        else {
            panic!()
        };
        assert_eq!(retry_after_secs, Some(60));
        assert!(matches!(Error::internal("x").retryable(), Error::Internal(_)), "others are unchanged");
    }
}
