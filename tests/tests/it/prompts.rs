//! `#[prompt]`: listed per scope, got with every argument error at once, its `one_of`
//! arguments completed, declared in the server's capabilities; the in-process test client gets
//! them as MCP does.

use serde_json::{json, Value};

use trails::testing::Client;

const BUILDER_TOKEN: &str = "prompts-builder-token";

async fn serve(sessions: bool) -> trails_tests::in_process::InProcess {
    let toml = format!(
        "[mcp]\nscopes = [\"builder\"]\n\n[http]\nsessions = {sessions}\n\n[[http.tokens]]\nname = \"builder\"\nsha256 = \"{}\"\nscopes = [\"builder\"]\n",
        trails::auth::sha256_hex(BUILDER_TOKEN)
    );
    let app =
        trails::App::new().kg(trails::kg::Kg::temporary().unwrap()).instructions("Start with the `review` prompt.");
    trails_tests::in_process::serve(app, trails_tests::in_process::settings(&toml)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_is_listed_by_scope_and_got_with_its_arguments_checked() {
    let served = serve(false).await;
    let anonymous = Client::anonymous(&served.server);
    let builder = Client::with_token(&served.server, BUILDER_TOKEN).unwrap();
    let names =
        |client: &Client| client.prompts().iter().map(|p| p["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
    // (The example app's `triage` is linked into this binary too.)
    assert_eq!(names(&anonymous), ["review", "triage"]);
    assert_eq!(names(&builder), ["review", "schema_review", "triage"]);
    assert_eq!(
        anonymous.prompts()[0],
        json!({ "name": "review", "title": "Review a requirement", "description": "Ask for a review of a requirement.",
                "arguments": [
                    { "name": "req_id", "description": "The requirement's id, `REQ-<n>`.", "required": true },
                    { "name": "tone", "description": "How the review should sound.", "required": false },
                ] })
    );

    let got = anonymous.get_prompt("review", json!({ "req_id": "REQ-7", "tone": "brief" })).await.unwrap();
    assert_eq!(
        got["messages"][0],
        json!({ "role": "user", "content": { "type": "text", "text": "Review REQ-7, in a brief tone." } })
    );
    assert_eq!(got["messages"][1]["role"], "assistant");
    assert_eq!(got["messages"][1]["content"]["resource"]["uri"], "trails://kg/Requirement/REQ-7");

    // Every argument error at once, as a tool's.
    let refused = anonymous.get_prompt("review", json!({ "req_id": "7", "tone": "rude" })).await.unwrap_err();
    assert_eq!(refused.code, -32602, "{refused:?}");
    let fields: Vec<&str> = refused.data.as_ref().unwrap()["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["req_id", "tone"], "{refused:?}");
    let missing = anonymous.get_prompt("review", Value::Null).await.unwrap_err();
    assert_eq!(missing.data.unwrap()["fields"][0]["code"], "required");

    // A prompt of a scope the caller lacks does not exist for it.
    let hidden = anonymous.get_prompt("schema_review", Value::Null).await.unwrap_err();
    assert_eq!((hidden.code, hidden.message.as_str()), (-32602, "unknown prompt: schema_review"));
    let got = builder.get_prompt("schema_review", Value::Null).await.unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "Review the schema as builder.");
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_prompts_are_declared_listed_got_and_completed() {
    let served = serve(true).await;
    let session = trails_tests::client::connect(served.addr, None).await;
    let instructions = session.peer_info().unwrap().instructions.clone().unwrap();
    assert!(instructions.starts_with("Start with the `review` prompt.\n\n"), "the app's own first: {instructions}");
    assert!(instructions.contains("Validation failures are"), "then how Trails' errors read: {instructions}");
    let capabilities = session.peer_info().unwrap().capabilities.clone();
    let declared = serde_json::to_value(&capabilities).unwrap();
    assert_eq!(declared["prompts"], json!({}), "{declared}: the list does not change while serving");
    assert!(declared["logging"].is_object(), "{declared}");
    assert!(declared["completions"].is_object(), "{declared}");
    let listed = session.list_prompts(None).await.unwrap();
    assert_eq!(listed.prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["review", "triage"]);
    let mut get = rmcp::model::GetPromptRequestParams::new("review");
    get.arguments = json!({ "req_id": "REQ-1" }).as_object().cloned();
    let got = session.get_prompt(get).await.unwrap();
    let got = serde_json::to_value(got).unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "Review REQ-1, in a kind tone.");

    let complete = |value: &str| {
        serde_json::from_value::<rmcp::model::CompleteRequestParams>(json!({
            "ref": { "type": "ref/prompt", "name": "review" }, "argument": { "name": "tone", "value": value } }))
        .unwrap()
    };
    let values = |result: rmcp::model::CompleteResult| result.completion.values;
    assert_eq!(values(session.complete(complete("b")).await.unwrap()), ["blunt", "brief"]);
    assert_eq!(values(session.complete(complete("")).await.unwrap()), ["kind", "blunt", "brief"]);
    let free = serde_json::from_value::<rmcp::model::CompleteRequestParams>(json!({
        "ref": { "type": "ref/prompt", "name": "review" }, "argument": { "name": "req_id", "value": "REQ" } }))
    .unwrap();
    assert!(values(session.complete(free).await.unwrap()).is_empty(), "an argument without one_of has none");
    let hidden = serde_json::from_value::<rmcp::model::CompleteRequestParams>(json!({
        "ref": { "type": "ref/prompt", "name": "schema_review" }, "argument": { "name": "x", "value": "" } }))
    .unwrap();
    assert!(session.complete(hidden).await.is_err(), "a prompt the caller cannot see completes nothing");
    session.cancel().await.unwrap();
}
