//! The example app's tests, in one binary: through the registry (`flow`), and driven by the
//! official Python and TypeScript MCP SDKs over stdio and Streamable HTTP.

mod flow;
mod python_interop;
mod typescript_interop;

/// The example app's binary, started as the workspace's tests start a binary.
fn example() -> trails_tests::Launch {
    trails_tests::Launch::new(env!("CARGO_BIN_EXE_requirements"))
}
