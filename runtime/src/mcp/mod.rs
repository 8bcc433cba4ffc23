//! MCP: the rmcp `ServerHandler` (initialize, tools), the one `tools/call` dispatch every
//! transport shares, and the error table of DESIGN §4.2.

mod dispatch;
pub(crate) mod errors;
mod handler;

pub(crate) use handler::{TrailsServer, Transport};
