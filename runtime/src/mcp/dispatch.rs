//! `tools/call` as the server runs it: the call pipeline (`pipeline::Pipeline`: admission, the
//! guards, the handler) with what this server gives every handler — its `Control`, the
//! idempotency key the request carried. Every transport — MCP over stdio and HTTP, and `POST
//! /invoke/{id}` — calls this one function and only encodes what it returns.

use std::sync::Arc;

use rmcp::model::CallToolResult;
use rmcp::ErrorData;
use serde_json::{Map, Value};

use crate::auth::Caller;
use crate::config::ValidationErrors;
use crate::ctx::Ctx;
use crate::idempotency::SentKey;
use crate::pipeline::{Answer, Refusal};
use crate::server::{Control, Shared};
use crate::wire;

/// Which encoding the call's answer takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// A `tools/call`: validation failures as `[mcp] validation_errors` says.
    Mcp,
    /// `POST /invoke/{id}`: validation failures are always errors (the HTTP layer answers 422).
    Invoke,
}

/// [`call`] in MCP's types.
pub(crate) async fn call_tool(
    shared: &Arc<Shared>,
    name: &str,
    arguments: Option<Map<String, Value>>,
    caller: Caller,
    via: Via,
    key: Option<SentKey>,
) -> Result<CallToolResult, ErrorData> {
    match call(shared, name, arguments, caller, via, key).await {
        Ok(answer) => Ok(wire::call::answer(answer)),
        Err(refusal) => Err(wire::call::refusal(&refusal)),
    }
}

/// Call tool `name` with `arguments` as `caller`, with the idempotency key the request carried.
pub(crate) async fn call(
    shared: &Arc<Shared>,
    name: &str,
    arguments: Option<Map<String, Value>>,
    caller: Caller,
    via: Via,
    key: Option<SentKey>,
) -> Result<Answer, Refusal> {
    let as_result = via == Via::Mcp && shared.settings.validation_errors == ValidationErrors::ToolResult;
    let arguments = arguments.map(Value::Object).unwrap_or(Value::Null);
    let control = Control(shared.clone());
    let prepare = |ctx: Ctx| {
        let ctx = ctx.with_extension(control);
        match key {
            Some(key) => ctx.with_extension(key),
            None => ctx,
        }
    };
    shared.pipeline.call(name, arguments, caller, as_result, prepare).await
}
