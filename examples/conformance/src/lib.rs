//! The fixture of the official MCP conformance suite (`@modelcontextprotocol/conformance`),
//! declared as any Trails app declares its capabilities: each tool, resource and prompt the
//! suite's scenarios name, with the answers they expect (the suite's reference server,
//! `everything-server.ts`, gives the same). `cargo xtask conformance` serves it and runs the
//! suite at each requirement set; `expected-failures-*.yaml` names what still fails, and why.

use trails::prelude::*;

/// Answers with a fixed text block (the suite calls it without `arguments`).
#[capability(id = "test_simple_text", version = "1.0.0", side_effects(none), idempotent)]
async fn simple_text() -> Result<String> {
    Ok("This is a simple text response for testing.".to_owned())
}

/// Fails as a tool fails: an `isError` result the model reads, not a protocol error.
#[capability(id = "test_error_handling", version = "1.0.0", side_effects(none), idempotent)]
async fn error_handling() -> Result<String> {
    Err(Error::precondition_failed("This tool intentionally returns an error for testing"))
}

/// Answers without logging: no `notifications/message` unless the request asks for a level.
#[capability(id = "test_logging_tool", version = "1.0.0", side_effects(none), idempotent)]
async fn logging_tool() -> Result<String> {
    Ok("Logged nothing: the request named no log level.".to_owned())
}

/// Name this from `main` (`App::include`) so the linker keeps the declarations above.
pub fn link() {}
