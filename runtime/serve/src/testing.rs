//! The in-process test client (`trails::testing`, the `testing` feature, documents it): a call
//! through the same dispatch as `tools/call`, with the caller a token gives.
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::method::Via;
use crate::server::Server;
use crate::state::Shared;
use trails_core::auth::Caller;

/// A caller of one [`Server`]: anonymous, or the holder of one of its bearer tokens.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
    caller: Caller,
    /// The answers it gives the questions a call asks (`ctx.elicit`, `ctx.sample`, `ctx.roots`,
    /// a declared `confirm`), by key.
    answers: Map<String, Value>,
}

/// What MCP would answer with a JSON-RPC error instead of a result: the code, the message and
/// the structured `data` (the validation failures' `fields`, the `required_scope`, …).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
#[error("{code}: {message}")]
pub struct CallError {
    /// The JSON-RPC code: `-32602` invalid arguments or unknown tool, `-32001` a scope the
    /// caller lacks, `-32002` a policy or budget denial, `-32603` an internal error, ….
    pub code: i32,
    /// The message a model would read.
    pub message: String,
    /// The error's structured data, when its code has any.
    pub data: Option<Value>,
}

impl From<rmcp::ErrorData> for CallError {
    fn from(error: rmcp::ErrorData) -> CallError {
        CallError { code: error.code.0, message: error.message.into_owned(), data: error.data }
    }
}

impl Client {
    /// A caller without a token: the `runtime` tools the process serves, as over HTTP without
    /// `Authorization`.
    pub fn anonymous(server: &Server) -> Client {
        let shared = server.shared().clone();
        let caller = Caller::anonymous(shared.mcp.process_scopes);
        Client { shared, caller, answers: Map::new() }
    }

    /// The caller `token` authenticates (one of `[[http.tokens]]`), with its scopes as the
    /// process allows them; a token that does not verify is refused with `-32001`, as HTTP
    /// refuses it with 401.
    pub fn with_token(server: &Server, token: &str) -> Result<Client, CallError> {
        let shared = server.shared().clone();
        let tokens = &shared.http.tokens;
        let caller = tokens.caller(token, shared.mcp.process_scopes).ok_or_else(|| {
            CallError::from(if tokens.is_empty() {
                crate::wire::errors::no_tokens_configured("[[http.tokens]], or `HttpConfig::tokens` in these settings")
            } else {
                crate::wire::errors::authentication_failed()
            })
        })?;
        Ok(Client { shared, caller, answers: Map::new() })
    }

    /// The `tools/list` entries this caller sees, as the wire carries them.
    pub fn tools(&self) -> Vec<Value> {
        let tools = self.shared.tools(self.shared.view(&self.caller));
        serde_json::to_value(tools.as_ref()).ok().and_then(|tools| tools.as_array().cloned()).unwrap_or_default()
    }

    /// The `prompts/list` entries this caller sees, as the wire carries them.
    pub fn prompts(&self) -> Vec<Value> {
        let listed = crate::method::list_prompts(&self.shared, &self.request());
        serde_json::to_value(listed.prompts).ok().and_then(|p| p.as_array().cloned()).unwrap_or_default()
    }

    /// Get prompt `name` with `arguments` (a JSON object of strings, or `null` for none): `Ok`
    /// with the `GetPromptResult` as JSON (`messages`) as a 2025-11-25 peer receives it, or the
    /// JSON-RPC error MCP would send (every argument error at once, an unknown prompt).
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<Value, CallError> {
        let arguments = match arguments {
            Value::Object(arguments) => Some(arguments),
            Value::Null => None,
            _ => {
                let message = "a prompt's arguments are a JSON object".into();
                return Err(CallError { code: -32602, message, data: None });
            }
        };
        let mut params = rmcp::model::GetPromptRequestParams::new(name);
        params.arguments = arguments;
        let result = crate::method::get_prompt(&self.shared, self.request(), params).await?;
        let mut result = rmcp::model::ServerResult::from(result);
        crate::wire::shape_result(&mut result, false);
        let text = serde_json::to_vec(&result).expect("a result serialises");
        Ok(serde_json::from_slice(&text).expect("a result reads back"))
    }

    /// A request of this caller's, as a framing hands one to the method table.
    fn request(&self) -> crate::method::Request {
        crate::method::Request {
            id: rmcp::model::NumberOrString::Number(0),
            caller: self.caller.clone(),
            meta: Map::new(),
            header_trace: None,
            session: None,
            version: Some("2025-11-25".into()),
            transport: crate::method::Transport::Http,
            client: None,
            peer: None,
            cancel: None,
            log_level: None,
        }
    }

    /// Call tool `name` — its MCP name as `tools/list` gives it (`notes_echo`), or the capability
    /// id it projects (`notes.echo`) — with `arguments` (a JSON object, or `null` for none): `Ok`
    /// with the `CallToolResult` as JSON (`content`, `structuredContent`, `isError`) as a
    /// 2025-11-25 peer receives it, or the JSON-RPC error MCP would send.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<Value, CallError> {
        self.call_with(name, arguments, self.asking()).await
    }

    /// A dry run of that call (`_meta.trails.dry_run`): every check but the handler, nothing
    /// recorded or charged. `Ok` with the verdict, `{"would_run": bool, "reasons": […]}`, or the
    /// JSON-RPC error a tool the caller cannot call gets.
    pub async fn dry_run(&self, name: &str, arguments: Value) -> Result<Value, CallError> {
        let info = crate::method::CallInfo { dry_run: true, ..self.asking() };
        let result = self.call_with(name, arguments, info).await?;
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        Ok(serde_json::from_str(text).unwrap_or(Value::Null))
    }

    async fn call_with(&self, name: &str, arguments: Value, info: crate::method::CallInfo) -> Result<Value, CallError> {
        let name = self.shared.pipeline.catalog.name_of(name).unwrap_or(name);
        let arguments: Option<Map<String, Value>> = match arguments {
            Value::Object(arguments) => Some(arguments),
            Value::Null => None,
            _ => {
                return Err(CallError {
                    code: -32602,
                    message: "a tool's arguments are a JSON object".into(),
                    data: None,
                })
            }
        };
        let called =
            crate::method::call(&self.shared, name, arguments, self.caller.clone(), Via::Mcp { links: true }, info);
        match called.await {
            Ok(answer) => {
                // As a peer of 2025-11-25 or before sees it (what hosts speak today): no `resultType`.
                let mut result = rmcp::model::ServerResult::CallToolResult(crate::wire::call::answer(answer));
                crate::wire::shape_result(&mut result, false);
                // Through its JSON text, as the wire carries it (rmcp keeps a priority as an
                // `f32`, whose value as an `f64` is not the number written).
                let text = serde_json::to_vec(&result).expect("a result serialises");
                Ok(serde_json::from_slice(&text).expect("a result reads back"))
            }
            // A question without an answer: what a 2026-07-28 client is sent.
            Err(trails_core::pipeline::Refusal::InputRequired(asked)) => {
                Ok(serde_json::json!({ "resultType": "input_required", "inputRequests": asked.requests }))
            }
            Err(refusal) => Err(crate::wire::call::refusal(&refusal).into()),
        }
    }

    /// The same caller, answering the question a call asks under `key` with `answer` — an
    /// elicitation result (`{"action": "accept", "content": {…}}`, `{"action": "decline"}`), a
    /// sampling result (`{"role": "assistant", "content": {…}, "model": …}`) or a roots result
    /// (`{"roots": [{"uri": …}]}`); a declared `confirm` asks under `trails_confirm`. The client
    /// declares elicitation, sampling and roots; a question it has no answer for ends the call
    /// with the input-required result a 2026-07-28 client gets (`resultType:
    /// "input_required"`, its `inputRequests` by key), the handler stopped where it asked.
    pub fn answering(mut self, key: &str, answer: Value) -> Client {
        self.answers.insert(key.to_owned(), answer);
        self
    }

    /// What a call's handler gets to ask with: a round holding this client's answers.
    fn asking(&self) -> crate::method::CallInfo {
        let capabilities = serde_json::json!({ "elicitation": {}, "sampling": {}, "roots": {} });
        let round = trails_core::ctx::input::Round::new(self.answers.clone());
        crate::method::CallInfo {
            request: Some(trails_core::RequestInfo::new(Map::new(), None, None, None, Some(capabilities))),
            input: Some(trails_core::ctx::input::Input::Round(Arc::new(round))),
            ..Default::default()
        }
    }
}
