//! Idempotency keys on the real fixture server (`requirements.update` is `idempotent`): a retry
//! with the same key and arguments replays the first result without running the handler — even
//! after `kill -9` — the same key with other arguments is refused (`unique`; 409 on `/invoke`),
//! keys are per caller, and a key on a capability not declared idempotent, or a malformed one, is
//! refused.

use serde_json::{json, Value};
use trails_tests::Served;

const AGENT_TOKEN: &str = "idempotency-agent-token";

fn start() -> Served {
    start_with("")
}

/// The fixture server with an agent token, and `config` before it.
fn start_with(config: &str) -> Served {
    let toml = format!(
        "{config}[http]\nsessions = false\n\n[[http.tokens]]\nname = \"agent\"\nsha256 = \"{}\"\nscopes = [\"runtime\"]\n",
        trails::auth::sha256_hex(AGENT_TOKEN)
    );
    crate::fixture().config(toml).http()
}

async fn call(server: &Served, token: Option<&str>, tool: &str, arguments: Value, key: Option<Value>) -> Value {
    let mut params = json!({ "name": tool, "arguments": arguments });
    if let Some(key) = key {
        params["_meta"] = json!({ "trails": { "idempotency_key": key } });
    }
    trails_tests::client::post(
        server.addr,
        token,
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }),
    )
    .await
}

fn retitle(title: &str) -> Value {
    json!({ "req_id": "REQ-1", "title": title })
}

async fn stored_title(server: &Served) -> Value {
    let got = call(server, None, "trails_kg_get", json!({ "node_type": "Requirement", "id": "REQ-1" }), None).await;
    got["result"]["structuredContent"]["fields"]["title"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_with_the_same_key_replays_the_first_result_and_runs_nothing() {
    let mut server = start();
    let created = call(
        &server,
        Some(AGENT_TOKEN),
        "requirements_create",
        json!({ "req_id": "REQ-1", "title": "Single sign-on", "status": "proposed", "priority": 1, "tags": ["auth"] }),
        None,
    )
    .await;
    assert!(created["result"].is_object(), "{created}");

    let first = call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("Passkeys"), Some(json!("k-1"))).await;
    assert_eq!(first["result"]["structuredContent"]["title"], "Passkeys", "{first}");
    assert!(first["result"]["_meta"].is_null(), "a first call is no replay: {first}");
    // Someone changes the title again, without a key.
    call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("Hardware keys"), None).await;
    assert_eq!(stored_title(&server).await, "Hardware keys");

    // The retry gets the first result, marked, and the handler does not run: the title stays.
    let replay = call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("Passkeys"), Some(json!("k-1"))).await;
    assert_eq!(replay["result"]["_meta"]["trails"]["replayed"], true, "{replay}");
    assert_eq!(replay["result"]["structuredContent"], first["result"]["structuredContent"]);
    assert_eq!(stored_title(&server).await, "Hardware keys", "a replay writes nothing");
    // Argument order is no difference.
    let reordered = json!({ "title": "Passkeys", "req_id": "REQ-1" });
    let replay = call(&server, Some(AGENT_TOKEN), "requirements_update", reordered, Some(json!("k-1"))).await;
    assert_eq!(replay["result"]["_meta"]["trails"]["replayed"], true, "{replay}");

    // The same key with other arguments is refused, naming the key.
    let other =
        call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("Magic links"), Some(json!("k-1"))).await;
    assert_eq!(other["error"]["code"], -32602, "{other}");
    let field = &other["error"]["data"]["fields"][0];
    assert_eq!(
        (field["field"].clone(), field["code"].clone()),
        (json!("_meta/trails/idempotency_key"), json!("unique"))
    );
    assert_eq!(stored_title(&server).await, "Hardware keys");

    // Keys are per caller: the anonymous caller's `k-1` is its own, and runs.
    let anonymous = call(&server, None, "requirements_update", retitle("Magic links"), Some(json!("k-1"))).await;
    assert!(anonymous["result"]["_meta"].is_null(), "{anonymous}");
    assert_eq!(stored_title(&server).await, "Magic links");

    // Kept durably: after `kill -9` the retry still replays.
    server.kill_and_restart();
    let replay = call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("Passkeys"), Some(json!("k-1"))).await;
    assert_eq!(replay["result"]["_meta"]["trails"]["replayed"], true, "{replay}");
    assert_eq!(stored_title(&server).await, "Magic links");

    // A key on a capability that is not idempotent, and keys that are not keys, are refused.
    let create = json!({ "req_id": "REQ-2", "title": "Audit log", "status": "proposed", "priority": 2, "tags": [] });
    let refused = call(&server, Some(AGENT_TOKEN), "requirements_create", create, Some(json!("k-2"))).await;
    assert_eq!(refused["error"]["data"]["fields"][0]["code"], "one_of", "{refused}");
    for bad in [json!(7), json!(""), json!("with space"), json!("x".repeat(256))] {
        let refused =
            call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("Not stored"), Some(bad.clone())).await;
        assert_eq!(refused["error"]["data"]["fields"][0]["code"], "pattern", "{bad}: {refused}");
    }
    assert_eq!(stored_title(&server).await, "Magic links", "refused calls change nothing");
    // Arguments are validated before a key is looked up: with `k-3` kept for one call, other
    // arguments that are invalid are refused for what is wrong with them, not for the key.
    let valid = call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("Passkeys"), Some(json!("k-3"))).await;
    assert!(valid["result"]["_meta"].is_null(), "{valid}");
    let invalid = call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("X"), Some(json!("k-3"))).await;
    let field = &invalid["error"]["data"]["fields"][0];
    assert_eq!((field["field"].clone(), field["code"].clone()), (json!("title"), json!("min_length")), "{invalid}");
    assert_eq!(stored_title(&server).await, "Passkeys");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_failed_frees_its_key_so_its_retry_runs() {
    let server = start();
    let person = json!({ "name": "Ada", "email": "ada@example.org" });
    let owner = call(&server, Some(AGENT_TOKEN), "people_create", person, None).await;
    let owner = owner["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    // `requirements.link` declares no precondition: its handler runs, and fails on a missing one.
    let missing = || json!({ "req_id": "REQ-404", "owner": owner });
    // The retry is sent the moment the failure arrives, again and again: it always runs (and
    // fails the same way) rather than finding the failed call's key still taken. (The server
    // frees the key before it answers; over HTTP a key freed just after would mostly pass too.)
    for _ in 0..10 {
        let failed = call(&server, Some(AGENT_TOKEN), "requirements_link", missing(), Some(json!("k-4"))).await;
        // The handler's own error (not found, a result the model reads), not the key's refusal.
        assert_eq!(failed["result"]["isError"], true, "{failed}");
        let shown: Value = serde_json::from_str(failed["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(shown["kind"], "not_found", "{failed}");
        assert!(failed["result"]["_meta"].is_null(), "a failure is never replayed: {failed}");
    }
    let create =
        json!({ "req_id": "REQ-404", "title": "Single sign-on", "status": "proposed", "priority": 1, "tags": [] });
    assert!(call(&server, Some(AGENT_TOKEN), "requirements_create", create, None).await["result"].is_object());
    let ran = call(&server, Some(AGENT_TOKEN), "requirements_link", missing(), Some(json!("k-4"))).await;
    assert_eq!(ran["result"]["structuredContent"]["owner"], json!(owner), "{ran}");
    assert!(ran["result"]["_meta"].is_null(), "no failure was kept to replay: {ran}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_is_an_error_even_where_validation_failures_are_results() {
    let server = start_with("[mcp]\nvalidation_errors = \"tool_result\"\n\n");
    let create =
        json!({ "req_id": "REQ-1", "title": "Single sign-on", "status": "proposed", "priority": 1, "tags": [] });
    assert!(call(&server, Some(AGENT_TOKEN), "requirements_create", create, None).await["result"].is_object());
    // The mode is on: invalid arguments come back as an `isError` result.
    let invalid = call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("X"), Some(json!("k-1"))).await;
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    let first = call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("Passkeys"), Some(json!("k-1"))).await;
    assert!(first["result"]["_meta"].is_null(), "{first}");
    // Nothing ran for a refused key: it is a JSON-RPC error, not a result the model reads as the
    // tool's own answer.
    let other =
        call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("Magic links"), Some(json!("k-1"))).await;
    assert!(other["result"].is_null(), "{other}");
    assert_eq!(other["error"]["data"]["fields"][0]["code"], "unique", "{other}");
    assert_eq!(stored_title(&server).await, "Passkeys");
}

#[tokio::test(flavor = "multi_thread")]
async fn over_invoke_the_key_is_the_idempotency_key_header() {
    let server = start();
    let create =
        json!({ "req_id": "REQ-1", "title": "Single sign-on", "status": "proposed", "priority": 1, "tags": [] });
    assert!(call(&server, Some(AGENT_TOKEN), "requirements_create", create, None).await["result"].is_object());
    let invoke = |key: &'static str, title: &'static str| {
        reqwest::Client::new()
            .post(format!("http://{}/invoke/requirements.update", server.addr))
            .bearer_auth(AGENT_TOKEN)
            .header("idempotency-key", key)
            .json(&retitle(title))
            .send()
    };
    let first = invoke("h-1", "Passkeys").await.unwrap();
    assert_eq!(first.status(), 200);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: Value = first.json().await.unwrap();
    let again = invoke("h-1", "Passkeys").await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["structuredContent"], first["structuredContent"]);
    let conflict = invoke("h-1", "Magic links").await.unwrap();
    assert_eq!(conflict.status(), 409);
    let body: Value = conflict.json().await.unwrap();
    assert_eq!(body["error"]["data"]["fields"][0]["field"], "Idempotency-Key", "{body}");
    // The MCP key space is the same: the header's key replays over MCP too.
    let replay = call(&server, Some(AGENT_TOKEN), "requirements_update", retitle("Passkeys"), Some(json!("h-1"))).await;
    assert_eq!(replay["result"]["_meta"]["trails"]["replayed"], true, "{replay}");
}

/// On the hot path and through rmcp's handler (`[http] hot_path = false`), which read the key
/// each their own way.
#[tokio::test(flavor = "multi_thread")]
async fn in_an_mcp_session_the_key_in_meta_replays_too() {
    for hot_path in [true, false] {
        the_key_in_meta_replays_in_a_session(hot_path).await;
    }
}

async fn the_key_in_meta_replays_in_a_session(hot_path: bool) {
    use rmcp::model::{CallToolRequestParams, MetaObject, RequestMetaObject};
    let server = crate::fixture().config(format!("[http]\nsessions = true\nhot_path = {hot_path}\n")).http();
    let client = trails_tests::client::connect(server.addr, None).await;
    let call = |arguments: Value, key: Option<&str>| {
        let mut params =
            CallToolRequestParams::new(if key.is_some() { "requirements_update" } else { "requirements_create" });
        params.arguments = arguments.as_object().cloned();
        if let Some(key) = key {
            let meta = json!({ "trails": { "idempotency_key": key } }).as_object().cloned().unwrap();
            params.meta = Some(RequestMetaObject(MetaObject(meta)));
        }
        client.call_tool(params)
    };
    let create =
        json!({ "req_id": "REQ-1", "title": "Single sign-on", "status": "proposed", "priority": 1, "tags": [] });
    call(create, None).await.unwrap();
    let first = call(retitle("Passkeys"), Some("s-1")).await.unwrap();
    assert!(first.meta.is_none(), "{first:?}");
    let again = call(retitle("Passkeys"), Some("s-1")).await.unwrap();
    let replayed = again.meta.as_ref().and_then(|meta| meta.get("trails")).and_then(|t| t.get("replayed")).cloned();
    assert_eq!(replayed, Some(json!(true)), "{again:?}");
    assert_eq!(again.structured_content, first.structured_content);
    let other = call(retitle("Magic links"), Some("s-1")).await.unwrap_err();
    assert!(other.to_string().contains("idempotency key"), "{other}");
}

/// Two builder tokens (the `builder` scope calls `trails_meta_fixture_people`, an idempotent
/// list), and `config` before them.
fn start_builders(config: &str) -> Served {
    let token = |name: &str, secret: &str| {
        format!(
            "[[http.tokens]]\nname = \"{name}\"\nsha256 = \"{}\"\nscopes = [\"builder\"]\n",
            trails::auth::sha256_hex(secret)
        )
    };
    let toml = format!(
        "{config}[mcp]\nscopes = [\"builder\"]\n\n[http]\nsessions = false\n\n{}{}",
        token("ana", "ana-token"),
        token("bo", "bo-token")
    );
    crate::fixture().config(toml).http()
}

async fn people(server: &Served, token: &str, key: &str) -> Value {
    let reply = call(server, Some(token), "trails_meta_fixture_people", json!({ "count": 40 }), Some(json!(key))).await;
    assert!(reply["result"].is_object(), "{reply}");
    reply["result"].clone()
}

fn replayed(result: &Value) -> bool {
    result["_meta"]["trails"]["replayed"] == true
}

#[tokio::test(flavor = "multi_thread")]
async fn kept_results_are_bounded_in_bytes_a_callers_oldest_go_first_and_past_the_total_new_keys_wait() {
    // A page of 40 people is ~3 kB: a caller keeps about three, everyone about five.
    let server = start_builders("[idempotency]\nmax_bytes_per_caller = 10000\nmax_bytes = 15000\n\n");
    for n in 0..6 {
        let first = people(&server, "ana-token", &format!("a{n}")).await;
        assert!(first["structuredContent"]["items"].is_array() && !replayed(&first), "{first}");
    }
    assert!(replayed(&people(&server, "ana-token", "a5").await), "the newest replays");
    let oldest = people(&server, "ana-token", "a0").await;
    assert!(!replayed(&oldest) && oldest["isError"] != true, "the oldest went first, so it runs again: {oldest}");

    // Bo's results take the total past 15 kB: then a new key is refused, retryable, nothing runs.
    let mut refused = None;
    for n in 0..6 {
        let result = people(&server, "bo-token", &format!("b{n}")).await;
        if result["isError"] == true {
            refused = Some((n, result));
            break;
        }
    }
    let (n, refused) = refused.expect("a new key is refused once the kept results reach max_bytes");
    assert!(n >= 1, "bo kept something first");
    let error: Value = serde_json::from_str(refused["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(error["kind"], "unavailable", "{refused}");
    assert_eq!((error["retryable"].clone(), error["retry_after_secs"].clone()), (json!(true), json!(60)));
    assert!(error["message"].as_str().unwrap().contains("max_bytes"), "{refused}");
    // A kept key still replays, and a call without a key runs.
    assert!(replayed(&people(&server, "bo-token", "b0").await));
    let keyless = call(&server, Some("bo-token"), "trails_meta_fixture_people", json!({ "count": 1 }), None).await
        ["result"]
        .clone();
    assert!(keyless["isError"] != true, "{keyless}");
}
