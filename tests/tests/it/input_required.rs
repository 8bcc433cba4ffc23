//! A handler asks its client while it runs (`ctx.elicit`, `ctx.sample`; a declared `confirm`):
//! from 2026-07-28 on as input-required results whose sealed `requestState` carries the answers
//! from round to round, in a 2025 session as requests to the client.

// rmcp marks sampling deprecated (SEP-2577); 2025-11-25 and 2026-07-28 still have it.
#![allow(deprecated)]

use std::sync::atomic::Ordering;

use rmcp::model::{ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult};
use rmcp::service::RequestContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{json, Value};

/// A 2026-07-28 request's `_meta`, from a client declaring `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "input-test", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

fn both() -> Value {
    json!({ "elicitation": {}, "sampling": {} })
}

/// The fixture app, served in this process (its handlers' counts are this process's), with its
/// store's directory.
async fn serve() -> (trails_tests::in_process::InProcess, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let settings = trails_tests::in_process::settings(&format!("[kg]\npath = {:?}\n", dir.path().join("kg")));
    (trails_tests::in_process::serve(trails::App::new(), settings).await, dir)
}

/// `tools/call` of `tool` as a stateless 2026-07-28 request: the HTTP status and the message.
async fn call(server: &trails_tests::in_process::InProcess, tool: &str, mut params: Value) -> (u16, Value) {
    params["name"] = json!(tool);
    let response = reqwest::Client::new()
        .post(format!("http://{}/mcp", server.addr))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body =
        text.lines().filter_map(|line| line.strip_prefix("data:")).next_back().unwrap_or(&text).trim().to_owned();
    (status, serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {text}")))
}

fn accept(content: Value) -> Value {
    json!({ "action": "accept", "content": content })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_2026_call_asks_round_by_round_and_its_state_carries_the_answers() {
    let (server, _dir) = serve().await;
    let (_, first) = call(&server, "fixtures_ask", json!({ "arguments": {}, "_meta": meta(both()) })).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let asked = &result["inputRequests"]["name"];
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(asked["params"]["message"], "What is your name?");
    assert_eq!(asked["params"]["requestedSchema"]["properties"]["name"]["maxLength"], 40, "the shape's schema");
    assert!(result["inputRequests"].get("greeting").is_none(), "asked one after the other: {result}");
    let state = result["requestState"].as_str().expect("a state").to_owned();
    assert!(!state.contains("Ada"));

    // The name, answered: the handler runs again, finds it, and asks the next question.
    let answered = json!({
        "arguments": {}, "_meta": meta(both()), "requestState": state,
        "inputResponses": { "name": accept(json!({ "name": "Ada" })) },
    });
    let (_, second) = call(&server, "fixtures_ask", answered).await;
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required", "{second}");
    assert_eq!(result["inputRequests"]["greeting"]["method"], "sampling/createMessage");
    let later = result["requestState"].as_str().unwrap().to_owned();
    assert!(!later.contains("Ada"), "the answers travel sealed, not in clear");

    // The last answer alone: the name comes back from the state.
    let sampled = json!({ "role": "assistant", "content": { "type": "text", "text": "Hello" }, "model": "m" });
    let last = json!({
        "arguments": {}, "_meta": meta(both()), "requestState": later,
        "inputResponses": { "greeting": sampled },
    });
    let (_, done) = call(&server, "fixtures_ask", last).await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!", "{done}");
    assert_eq!(done["result"]["resultType"], "complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_changed_or_made_for_another_call_is_refused_and_nothing_runs() {
    let (server, _dir) = serve().await;
    let first = json!({ "arguments": { "greeting": "probe" }, "_meta": meta(both()) });
    let (_, first) = call(&server, "fixtures_ask", first).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let name = json!({ "name": accept(json!({ "name": "Ada" })) });
    let probes = || {
        let asked = trails_tests::ASKED.lock().unwrap();
        asked.iter().filter(|greeting| greeting.as_deref().is_some_and(|g| g.starts_with("probe"))).count()
    };
    let before = probes();
    for (what, arguments, state) in [
        ("tampered", json!({ "greeting": "probe" }), format!("{state}-TAMPERED")),
        ("other arguments", json!({ "greeting": "probe 2" }), state.clone()),
        ("not one of ours", json!({ "greeting": "probe" }), "a-state-of-my-own".to_owned()),
    ] {
        let params =
            json!({ "arguments": arguments, "_meta": meta(both()), "requestState": state, "inputResponses": name });
        let (_, refused) = call(&server, "fixtures_ask", params).await;
        assert_eq!(refused["error"]["code"], -32602, "{what}: {refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains("requestState"), "{what}: {refused}");
    }
    // Another tool does not open it either.
    let params = json!({ "arguments": {}, "_meta": meta(both()), "requestState": state, "inputResponses": name });
    let (_, refused) = call(&server, "fixtures_purge", params).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(probes(), before, "no handler ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_are_validated_like_arguments_and_a_client_that_cannot_be_asked_gets_32021() {
    let (server, _dir) = serve().await;
    let params = json!({
        "arguments": { "greeting": "Hi" }, "_meta": meta(both()),
        "inputResponses": { "name": accept(json!({ "name": "" })) },
    });
    let (_, refused) = call(&server, "fixtures_ask", params).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(refused["error"]["data"]["fields"][0]["field"], "inputResponses.name.content.name", "{refused}");
    let params =
        json!({ "arguments": { "greeting": "Hi" }, "_meta": meta(both()), "inputResponses": { "name": 12345 } });
    let (_, refused) = call(&server, "fixtures_ask", params).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    let params = json!({ "arguments": { "greeting": "Hi" }, "_meta": meta(json!({ "sampling": {} })) });
    let (status, refused) = call(&server, "fixtures_ask", params).await;
    assert_eq!((status, &refused["error"]["code"]), (400, &json!(-32021)), "{refused}");
    assert_eq!(refused["error"]["data"]["requiredCapabilities"], json!({ "elicitation": {} }));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declared_confirmation_is_asked_before_the_handler_runs() {
    let (server, _dir) = serve().await;
    let listed = trails::testing::Client::anonymous(&server.server).tools();
    let purge = listed.iter().find(|tool| tool["name"] == "fixtures_purge").unwrap();
    assert_eq!(purge["_meta"]["trails"]["confirm"], "Forget every count?", "published with the tool");
    let before = trails_tests::PURGED.load(Ordering::SeqCst);
    let (_, first) = call(&server, "fixtures_purge", json!({ "_meta": meta(both()) })).await;
    let asked = &first["result"]["inputRequests"]["trails_confirm"];
    assert_eq!(asked["params"]["message"], "Forget every count?", "{first}");
    assert_eq!(asked["params"]["requestedSchema"]["properties"]["confirm"]["type"], "boolean");
    let state = first["result"]["requestState"].clone();
    for no in [json!({ "action": "decline" }), accept(json!({ "confirm": false })), json!({ "action": "cancel" })] {
        let params =
            json!({ "_meta": meta(both()), "requestState": state, "inputResponses": { "trails_confirm": no } });
        let (_, declined) = call(&server, "fixtures_purge", params).await;
        assert_eq!(declined["result"]["isError"], true, "{declined}");
        assert_eq!(declined["result"]["structuredContent"]["kind"], "precondition_failed", "{declined}");
    }
    assert_eq!(trails_tests::PURGED.load(Ordering::SeqCst), before, "not confirmed, not run");
    let yes = json!({ "trails_confirm": accept(json!({ "confirm": true })) });
    let params = json!({ "_meta": meta(both()), "requestState": state, "inputResponses": yes });
    let (_, done) = call(&server, "fixtures_purge", params).await;
    assert_eq!(done["result"]["content"][0]["text"], "purged", "{done}");
    assert_eq!(trails_tests::PURGED.load(Ordering::SeqCst), before + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn only_answers_to_questions_the_state_says_were_asked_count() {
    let (server, _dir) = serve().await;
    // A confirmation answered before it was asked (no state) is not one: the user is asked.
    let yes = json!({ "trails_confirm": accept(json!({ "confirm": true })) });
    let (_, first) = call(&server, "fixtures_purge", json!({ "_meta": meta(both()), "inputResponses": yes })).await;
    assert_eq!(first["result"]["resultType"], "input_required", "not run on an answer it never asked for: {first}");
    // An answer to another question than the state's is ignored, and the question stands.
    let state = first["result"]["requestState"].clone();
    let other = json!({ "name": accept(json!({ "name": "Ada" })) });
    let params = json!({ "_meta": meta(both()), "requestState": state, "inputResponses": other });
    let (_, again) = call(&server, "fixtures_purge", params).await;
    assert!(again["result"]["inputRequests"].get("trails_confirm").is_some(), "{again}");
}

/// A 2025 client that answers what the server asks: the user says "Ada", the model "Hi".
#[derive(Clone)]
struct Answers;

impl ClientHandler for Answers {
    fn get_info(&self) -> ClientConfig {
        serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": { "elicitation": {}, "sampling": {} },
            "clientInfo": { "name": "answers", "version": "1" },
        }))
        .unwrap()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let asked = serde_json::to_value(&request).unwrap();
        let answer = match asked["message"].as_str() {
            Some("Forget every count?") => json!({ "confirm": false }),
            _ => json!({ "name": "Ada" }),
        };
        Ok(serde_json::from_value(accept(answer)).unwrap())
    }

    async fn create_message(
        &self,
        _: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let said = json!({ "role": "assistant", "content": { "type": "text", "text": "Hi" }, "model": "m" });
        Ok(serde_json::from_value(said).unwrap())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_2025_session_is_asked_with_requests_to_its_client() {
    let (served, _dir) = serve().await;
    let client =
        Answers.serve(StreamableHttpClientTransport::from_uri(format!("http://{}/mcp", served.addr))).await.unwrap();
    let asked = client.call_tool(rmcp::model::CallToolRequestParams::new("fixtures_ask")).await.unwrap();
    assert_eq!(asked.content[0].as_text().unwrap().text, "Hi, Ada!");
    let before = trails_tests::PURGED.load(Ordering::SeqCst);
    let declined = client.call_tool(rmcp::model::CallToolRequestParams::new("fixtures_purge")).await.unwrap();
    assert_eq!(declined.is_error, Some(true), "{declined:?}");
    assert_eq!(trails_tests::PURGED.load(Ordering::SeqCst), before);
    client.cancel().await.unwrap();
}

/// The in-process test client answers questions as a 2026-07-28 client does.
#[tokio::test(flavor = "multi_thread")]
async fn the_test_client_answers_the_questions_it_is_given_and_shows_the_rest() {
    let (server, _dir) = serve().await;
    let client = trails::testing::Client::anonymous(&server.server);
    let asked = client.call("fixtures_ask", json!({ "greeting": "Hi" })).await.unwrap();
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert_eq!(asked["inputRequests"]["name"]["method"], "elicitation/create");
    let answered = client.clone().answering("name", accept(json!({ "name": "Ada" })));
    let done = answered.call("fixtures_ask", json!({ "greeting": "Hi" })).await.unwrap();
    assert_eq!(done["content"][0]["text"], "Hi, Ada!", "{done}");
    let declined = client.answering("trails_confirm", json!({ "action": "decline" }));
    let refused = declined.call("fixtures_purge", json!({})).await.unwrap();
    assert_eq!(refused["structuredContent"]["kind"], "precondition_failed", "{refused}");
}
