//! What every transport says the same way, below all of them: the JSON-RPC framing checks and
//! the table of errors.

pub(crate) mod call;
pub(crate) mod errors;
pub(crate) mod jsonrpc;
