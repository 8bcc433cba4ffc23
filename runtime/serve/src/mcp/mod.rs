//! MCP as rmcp frames it: the rmcp `ServerHandler` (initialize, the session, and each method
//! through the method table in `method/`), stdio, and resource subscriptions.

// Built with neither transport (for in-process tests and the CLI's `tools` and `meta`), the
// handler has no one to serve.
#![cfg_attr(not(any(feature = "http", feature = "stdio")), allow(dead_code, unused_imports))]

mod handler;
#[cfg(feature = "stdio")]
pub(crate) mod stdio;
mod subscribe;

#[cfg(feature = "http")]
pub(crate) use handler::SessionLink;
pub(crate) use handler::TrailsServer;
