//! MCP: the rmcp `ServerHandler` (initialize, tools, resources), the one `tools/call` dispatch
//! every transport shares, and resource subscriptions.

mod dispatch;
mod handler;
pub(crate) mod stdio;
mod subscribe;

pub(crate) use dispatch::{call, call_tool, Via};
pub(crate) use handler::{TrailsServer, Transport, PROTOCOL_VERSIONS};
