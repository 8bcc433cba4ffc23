//! What a handler (or the dispatcher) can fail with. Each variant maps to one JSON-RPC code of
//! DESIGN §4.2; transports do that mapping, handlers only pick the variant.

use std::fmt;

use crate::field_error::FieldError;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug)]
pub enum Error {
    /// Arguments (or a KG write) broke declared constraints: `-32602` with every field.
    Validation { errors: Vec<FieldError>, total: usize },
    /// No tool of that name is visible to the caller: `-32602` with `{"tool"}`.
    UnknownTool(String),
    /// A policy refused the call: `-32002`.
    PolicyDenied(String),
    /// A declared budget ran out: `-32003`.
    BudgetExceeded(String),
    /// Anything else: `-32603`. The detail is for logs only and never sent to the client.
    Internal(String),
}

impl Error {
    pub fn validation(errors: Vec<FieldError>) -> Self {
        let total = errors.len();
        Error::Validation { errors, total }
    }
    pub fn internal(detail: impl fmt::Display) -> Self {
        Error::Internal(detail.to_string())
    }
    pub fn policy_denied(reason: impl Into<String>) -> Self {
        Error::PolicyDenied(reason.into())
    }
    pub fn budget_exceeded(reason: impl Into<String>) -> Self {
        Error::BudgetExceeded(reason.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Validation { total, .. } => write!(f, "validation failed on {total} field(s)"),
            Error::UnknownTool(name) => write!(f, "unknown tool: {name}"),
            Error::PolicyDenied(reason) => write!(f, "policy denied: {reason}"),
            Error::BudgetExceeded(reason) => write!(f, "budget exceeded: {reason}"),
            Error::Internal(_) => f.write_str("internal error"),
        }
    }
}

impl std::error::Error for Error {}
