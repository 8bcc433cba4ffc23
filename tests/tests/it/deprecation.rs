//! Deprecation (`deprecates`, `version_status`): what a client sees and what the
//! operator sees. `fixtures.assign` supersedes `fixtures.assign_v1`, which is `deprecated`: both
//! say so in `_meta.trails`, the OpenAPI operation of the old one is `deprecated: true`, and the
//! first call to the old one — over MCP or `/invoke` — is logged once, naming its successor.

use serde_json::{json, Value};
use trails_tests::client::post;

#[tokio::test(flavor = "multi_thread")]
async fn deprecated_capabilities_say_so_and_their_first_call_is_logged_once() {
    let server = crate::fixture().config("[http]\nsessions = false\n").http();
    let addr = server.addr;
    let client = reqwest::Client::new();
    let listing = post(addr, None, &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })).await;
    assert!(listing["result"]["tools"].is_array(), "{listing}");
    let tool = |name: &str| {
        listing["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).cloned().unwrap()
    };
    assert_eq!(tool("fixtures_assign_v1")["_meta"]["trails"]["version_status"], "deprecated");
    assert_eq!(tool("fixtures_assign")["_meta"]["trails"]["deprecates"], "fixtures.assign_v1");
    assert!(tool("research_search")["_meta"]["trails"].get("version_status").is_none(), "stable says nothing");

    let openapi: Value = client.get(format!("http://{addr}/openapi.json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(openapi["paths"]["/invoke/fixtures.assign_v1"]["post"]["deprecated"], true);
    assert!(openapi["paths"]["/invoke/fixtures.assign"]["post"].get("deprecated").is_none());

    for id in 2..5 {
        let call = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": { "name": "fixtures_assign_v1", "arguments": { "paper": "P" } } });
        let answer = post(addr, None, &call).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        let response =
            client.post(format!("http://{addr}/invoke/fixtures.assign_v1")).json(&json!({ "paper": "P" })).send().await;
        assert_eq!(response.unwrap().status(), 200);
    }
    let logged = server.stderr();
    let lines: Vec<&str> = logged.lines().filter(|l| l.contains("a deprecated capability was called")).collect();
    assert_eq!(lines.len(), 1, "{logged}");
    assert!(
        lines[0].contains("fixtures.assign_v1") && lines[0].contains("superseded_by=\"fixtures.assign\""),
        "{}",
        lines[0]
    );
}
