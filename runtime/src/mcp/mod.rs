//! MCP: the rmcp `ServerHandler` (initialize, tools, resources), the one `tools/call` dispatch
//! every transport shares, resource subscriptions, and the error table of DESIGN §4.2.

mod bound;
mod dispatch;
pub(crate) mod errors;
mod handler;
pub(crate) mod stdio;
mod subscribe;

pub(crate) use dispatch::{admit, call as call_tool, Via};
pub(crate) use handler::{TrailsServer, Transport, PROTOCOL_VERSIONS};
