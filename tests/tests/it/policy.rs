//! `policy_required`, enforced with Cedar, on the real fixture server: `fixtures.constraints`
//! requires policy `fixtures.write`. One policy file denies it to anonymous callers (`-32002`
//! over MCP, 403 over `/invoke`) and allows it to the `dev` token; another decides on the call's
//! arguments; a replayed idempotent call must pass the policies in force too. Without a policy
//! file, or without the named policy, the server refuses to start and says which capability and
//! what to add.

use serde_json::{json, Value};
use trails_tests::{Launch, Served};

const DEV_TOKEN: &str = "policy-dev-token";

/// The fixture server with `policies` (Cedar text, in `policies.cedar`) as its only policy file.
fn launch(policies: Option<&str>) -> Launch {
    let launch = crate::fixture().config(format!(
        "[mcp]\nscopes = [\"dev\"]\n\n[http]\nsessions = false\n\n\
         [[http.tokens]]\nname = \"dev\"\nsha256 = \"{}\"\nscopes = [\"dev\"]\n",
        trails::auth::sha256_hex(DEV_TOKEN)
    ));
    match policies {
        Some(text) => launch.file("policies.cedar", text).env("TRAILS_POLICY_FILES", "policies.cedar"),
        None => launch.env("TRAILS_POLICY_FILES", ""),
    }
}

fn start(policies: &str) -> Served {
    launch(Some(policies)).http()
}

/// Stop `server` and serve its directory (and store) again, under `policies`.
fn restart(mut server: Served, policies: &str) -> Served {
    server.kill();
    std::fs::write(server.dir.path().join("policies.cedar"), policies).unwrap();
    server.restart();
    server
}

fn arguments(priority: i64) -> Value {
    json!({ "handle": "abc", "code": "REQ-1", "status": "proposed", "priority": priority, "tags": ["a"] })
}

/// `tools/call fixtures.constraints` over stateless MCP: the result, or the error.
async fn over_mcp(server: &Served, token: Option<&str>, arguments: &Value) -> Result<Value, Value> {
    over_mcp_keyed(server, token, arguments, None).await
}

/// The same, with an idempotency key in `_meta`.
async fn over_mcp_keyed(
    server: &Served,
    token: Option<&str>,
    arguments: &Value,
    key: Option<&str>,
) -> Result<Value, Value> {
    let mut params = json!({ "name": "fixtures_constraints", "arguments": arguments });
    if let Some(key) = key {
        params["_meta"] = json!({ "trails": { "idempotency_key": key } });
    }
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params });
    let mut answer = trails_tests::client::post(server.addr, token, &body).await;
    match answer.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(answer["error"].take()),
    }
}

/// `POST /invoke/fixtures.constraints`: status and body.
async fn over_invoke(server: &Served, token: Option<&str>, arguments: &Value) -> (u16, Value) {
    let mut request =
        reqwest::Client::new().post(format!("http://{}/invoke/fixtures.constraints", server.addr)).json(arguments);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_policy_denies_with_32002_and_403_and_another_allows() {
    // Only the caller holding the `dev` token may write fixtures.
    let server = start(
        r#"@id("fixtures.write")
           permit (principal == Trails::Caller::"dev", action == Trails::Action::"fixtures.constraints", resource);"#,
    );
    let denied = over_mcp(&server, None, &arguments(1)).await.unwrap_err();
    assert_eq!(denied["code"], -32002, "{denied}");
    assert!(denied["message"].as_str().unwrap().contains("`fixtures.constraints` is not allowed"), "{denied}");
    let (status, body) = over_invoke(&server, None, &arguments(1)).await;
    assert_eq!((status, &body["error"]["code"]), (403, &json!(-32002)), "{body}");

    let allowed = over_mcp(&server, Some(DEV_TOKEN), &arguments(1)).await.unwrap();
    assert_eq!(allowed["structuredContent"]["handle"], "abc", "{allowed}");
    let (status, body) = over_invoke(&server, Some(DEV_TOKEN), &arguments(1)).await;
    assert_eq!(status, 200, "{body}");

    // Denied whatever the arguments: refused before validation (whose errors would show the
    // contract), as a scope denial is. The `dev` caller's invalid input is a validation error.
    let invalid = over_mcp(&server, None, &arguments(9)).await.unwrap_err();
    assert_eq!(invalid["code"], -32002, "{invalid}");
    assert!(invalid.get("data").is_none_or(|data| data.get("fields").is_none()), "{invalid}");
    let invalid = over_mcp(&server, Some(DEV_TOKEN), &arguments(9)).await.unwrap_err();
    assert_eq!(invalid["code"], -32602, "{invalid}");

    // Denied whatever the arguments: not listed to anonymous callers — not in tools/list, the
    // manifest or OpenAPI — and listed to `dev`.
    assert!(!listed(&server, None).await.contains(&"fixtures_constraints".to_owned()));
    assert!(listed(&server, Some(DEV_TOKEN)).await.contains(&"fixtures_constraints".to_owned()));
    let manifest: Value =
        reqwest::get(format!("http://{}/.well-known/capabilities", server.addr)).await.unwrap().json().await.unwrap();
    assert!(!manifest.to_string().contains("urn:trails:capability:fixtures.constraints\""), "{manifest}");
    let openapi: Value =
        reqwest::get(format!("http://{}/openapi.json", server.addr)).await.unwrap().json().await.unwrap();
    assert!(openapi["paths"].get("/invoke/fixtures.constraints").is_none());
}

/// The tool names `tools/list` shows a caller with `token`.
async fn listed(server: &Served, token: Option<&str>) -> Vec<String> {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    let answer = trails_tests::client::post(server.addr, token, &body).await;
    answer["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn under_mask_denied_a_tool_denied_whatever_the_arguments_is_unknown() {
    let server = launch(Some(
        r#"@id("fixtures.write")
           permit (principal == Trails::Caller::"dev", action == Trails::Action::"fixtures.constraints", resource);"#,
    ))
    .env("TRAILS_MASK_DENIED", "true")
    .http();
    let masked = over_mcp(&server, None, &arguments(1)).await.unwrap_err();
    let unknown = over_mcp_named(&server, "fixtures_nonexistent").await.unwrap_err();
    assert_eq!(masked["code"], unknown["code"], "{masked} vs {unknown}");
    assert!(masked["message"].as_str().unwrap().contains("unknown tool"), "{masked}");
    // Invalid arguments too: a -32602 naming a field would tell that the tool exists.
    let invalid = over_mcp(&server, None, &arguments(9)).await.unwrap_err();
    assert_eq!(invalid["message"], masked["message"], "{invalid}");
    assert!(over_mcp(&server, Some(DEV_TOKEN), &arguments(1)).await.is_ok());
}

/// `tools/call` of `name` with no arguments, anonymously.
async fn over_mcp_named(server: &Served, name: &str) -> Result<Value, Value> {
    let body =
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": {} } });
    let mut answer = trails_tests::client::post(server.addr, None, &body).await;
    match answer.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(answer["error"].take()),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_policy_decides_on_the_arguments_and_unrelated_policies_do_not_open_the_capability() {
    let server = start(
        r#"@id("fixtures.write")
           permit (principal, action == Trails::Action::"fixtures.constraints", resource)
           when { context.arguments.priority <= 2 && context.scopes.contains("runtime") };
           @id("everything")
           permit (principal, action, resource);"#,
    );
    assert!(over_mcp(&server, None, &arguments(2)).await.is_ok());
    // The policy sees only valid arguments: invalid input is a validation error first.
    let invalid = over_mcp(&server, None, &arguments(9)).await.unwrap_err();
    assert_eq!(invalid["code"], -32602, "{invalid}");
    // Decided per call: listed to every caller.
    assert!(listed(&server, None).await.contains(&"fixtures_constraints".to_owned()));
    let denied = over_mcp(&server, None, &arguments(3)).await.unwrap_err();
    assert_eq!(denied["code"], -32002, "`everything` is not one of the capability's policies: {denied}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replay_answers_only_a_caller_the_policies_in_force_still_allow() {
    // `fixtures.constraints` is `idempotent`: a retry with the same key replays the first result.
    let low_priorities = r#"@id("fixtures.write")
        permit (principal, action == Trails::Action::"fixtures.constraints", resource)
        when { context.arguments.priority <= 2 };"#;
    let server = start(low_priorities);
    let first = over_mcp_keyed(&server, None, &arguments(2), Some("k-1")).await.unwrap();
    assert!(first["_meta"].is_null(), "{first}");
    let replay = over_mcp_keyed(&server, None, &arguments(2), Some("k-1")).await.unwrap();
    assert_eq!(replay["_meta"]["trails"]["replayed"], true, "{replay}");

    // The policy tightens (a restart reads it): the kept result is not handed out any more.
    let server = restart(server, low_priorities.replace("<= 2", "<= 1").as_str());
    let denied = over_mcp_keyed(&server, None, &arguments(2), Some("k-1")).await.unwrap_err();
    assert_eq!(denied["code"], -32002, "a replay passes the policies a first call must: {denied}");
    let (status, _) = over_invoke(&server, None, &arguments(2)).await;
    assert_eq!(status, 403);

    // Allowed again, the same key still replays the first result: the denial kept nothing.
    let server = restart(server, low_priorities);
    let replay = over_mcp_keyed(&server, None, &arguments(2), Some("k-1")).await.unwrap();
    assert_eq!(replay["_meta"]["trails"]["replayed"], true, "{replay}");
    assert_eq!(replay["structuredContent"], first["structuredContent"]);
}

#[test]
fn without_its_policies_the_server_refuses_to_start_and_says_what_to_add() {
    for (policies, expected) in [
        (None, vec!["`fixtures.constraints`", "fixtures.write", "[policy] files"]),
        (
            Some(r#"@id("something.else") permit (principal, action, resource);"#),
            vec!["`fixtures.constraints`", "`fixtures.write`", "@id(\"fixtures.write\")"],
        ),
        (Some("permit (principal, action"), vec!["policies.cedar", "not valid Cedar"]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let output = launch(policies).cli(dir.path(), &["serve", "--http", "127.0.0.1:0"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{policies:?}: the server started");
        for text in expected {
            assert!(stderr.contains(text), "{policies:?}: `{text}` not in: {stderr}");
        }
    }
}
