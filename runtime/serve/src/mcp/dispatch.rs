//! `tools/call` as the server runs it: the call pipeline (`pipeline::Pipeline`: admission, the
//! guards, the handler) with what this server gives every handler — its `Control`, the
//! idempotency key the request carried. Every transport — MCP over stdio and HTTP, and `POST
//! /invoke/{id}` — calls this one function and only encodes what it returns.

use std::sync::Arc;

use rmcp::model::CallToolResult;
use rmcp::ErrorData;
use serde_json::{Map, Value};

use crate::config::ValidationErrors;
use crate::idempotency::SentKey;
use crate::pipeline::{Answer, Refusal, READ_TOOL};
use crate::state::{Control, Shared};
use crate::wire;
use trails_core::auth::Caller;
use trails_core::ctx::Ctx;

/// Which encoding the call's answer takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// A `tools/call`: validation failures as `[mcp] validation_errors` says. `links`: the peer
    /// speaks 2025-06-18 or later, whose results may carry `resource_link` blocks.
    Mcp { links: bool },
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
    let as_result = matches!(via, Via::Mcp { .. }) && shared.settings.validation_errors == ValidationErrors::ToolResult;
    let arguments = arguments.map(Value::Object).unwrap_or(Value::Null);
    let control = Control(shared.clone());
    let prepare = |ctx: Ctx| {
        let ctx = ctx.with_extension(control);
        match key {
            Some(key) => ctx.with_extension(key),
            None => ctx,
        }
    };
    let mut answer = shared.pipeline.call(name, arguments, caller, as_result, prepare).await?;
    // `/invoke` answers JSON to HTTP clients, which read the links as data whatever MCP version.
    if matches!(via, Via::Mcp { links: true } | Via::Invoke) {
        // A page of a cut result links as the tool whose result it is.
        let paged = answer.result().structured_content.as_ref().filter(|_| name == READ_TOOL);
        let whose = paged.and_then(|page| page["tool"].as_str()).unwrap_or(name);
        if let Some(tool) = shared.pipeline.catalog.entry(whose) {
            crate::resources::links::attach(&shared.resources, tool, answer.result_mut());
        }
    }
    Ok(answer)
}

/// Whether a peer that speaks `version` reads `resource_link` blocks (MCP 2025-06-18 and later).
pub(crate) fn reads_links(version: Option<&str>) -> bool {
    version.is_some_and(|version| version >= "2025-06-18")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::Settings;
    use crate::idempotency::Source;
    use trails_core::auth::{Scope, ScopeSet};

    /// A key promises a replay only from a server that keeps keys: built without the ledger, a
    /// call that carries one is refused and runs nothing (run without it by `cargo xtask features`).
    #[tokio::test]
    async fn a_key_is_kept_for_a_replay_or_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings { kg_path: dir.path().join("kg"), ..Settings::default() };
        let server = crate::App::new().build(settings).unwrap();
        let key = SentKey { value: json!("k-1"), source: Source::Meta };
        let caller = Caller::anonymous(ScopeSet::up_to(Scope::Runtime));
        let ping = || {
            call(server.shared(), "trails_meta_ping", None, caller.clone(), Via::Mcp { links: true }, Some(key.clone()))
        };
        let first = ping().await;
        if cfg!(feature = "ledger") {
            assert!(first.is_ok(), "{first:?}");
            let replayed = ping().await.unwrap();
            assert!(wire::call::answer(replayed).meta.is_some_and(|meta| meta.0["trails"]["replayed"] == true));
        } else {
            let Err(Refusal::Failed { error, .. }) = first else { panic!("a key must be refused: {first:?}") };
            assert!(format!("{error:?}").contains("built without trails-mcp's `ledger` feature"), "{error:?}");
        }
    }
}
