//! The example app's tests, in one binary: through the registry (`flow`), and driven by the
//! official Python and TypeScript MCP SDKs over stdio and Streamable HTTP.

mod flow;
mod python_interop;
mod support;
mod typescript_interop;
