//! MCP: the rmcp `ServerHandler` (initialize, tools, resources), the one `tools/call` dispatch
//! every transport shares, and resource subscriptions.

// Built with neither transport (for in-process tests and the CLI's `tools` and `meta`), the
// handler has no one to serve.
#![cfg_attr(not(any(feature = "http", feature = "stdio")), allow(dead_code, unused_imports))]

mod dispatch;
mod handler;
#[cfg(feature = "stdio")]
pub(crate) mod stdio;
mod subscribe;

#[cfg(any(feature = "http", feature = "testing"))]
pub(crate) use dispatch::call_tool;
pub(crate) use dispatch::{call, Via};
#[cfg(feature = "http")]
pub(crate) use dispatch::{reads_links, request_done, request_span, CallInfo};
#[cfg(feature = "http")]
pub(crate) use handler::SessionLink;
#[cfg(feature = "http")]
pub(crate) use handler::PROTOCOL_VERSIONS;
pub(crate) use handler::{TrailsServer, Transport};
