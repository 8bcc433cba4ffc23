//! Deprecation (`deprecates`, `version_status`): what a client sees and what the
//! operator sees. `fixtures.assign` supersedes `fixtures.assign_v1`, which is `deprecated`: both
//! say so in `_meta.trails`, the OpenAPI operation of the old one is `deprecated: true`, and the
//! first call to the old one — over MCP or `/invoke` — is logged once, naming its successor.

use std::net::TcpListener;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread")]
async fn deprecated_capabilities_say_so_and_their_first_call_is_logged_once() {
    let dir = tempfile::tempdir().unwrap();
    let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let log = dir.path().join("stderr.log");
    let config = dir.path().join("trails.toml");
    std::fs::write(&config, "[http]\nsessions = false\n").unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_trails-fixture-server"))
        .args(["serve", "--http", &addr.to_string(), "--config"])
        .arg(&config)
        .env("TRAILS_KG_PATH", dir.path().join("kg"))
        .env("TRAILS_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let _server = trails_tests::KilledOnDrop(child);
    trails_tests::wait_until_listening(addr);
    let client = reqwest::Client::new();
    let rpc = |body: Value| {
        client
            .post(format!("http://{addr}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&body)
            .send()
    };
    let listing: Value =
        rpc(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })).await.unwrap().json().await.unwrap();
    assert!(listing["result"]["tools"].is_array(), "{listing}");
    let tool = |name: &str| {
        listing["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).cloned().unwrap()
    };
    assert_eq!(tool("fixtures.assign_v1")["_meta"]["trails"]["version_status"], "deprecated");
    assert_eq!(tool("fixtures.assign")["_meta"]["trails"]["deprecates"], "fixtures.assign_v1");
    assert!(tool("research.search")["_meta"]["trails"].get("version_status").is_none(), "stable says nothing");

    let openapi: Value = client.get(format!("http://{addr}/openapi.json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(openapi["paths"]["/invoke/fixtures.assign_v1"]["post"]["deprecated"], true);
    assert!(openapi["paths"]["/invoke/fixtures.assign"]["post"].get("deprecated").is_none());

    for id in 2..5 {
        let call = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": { "name": "fixtures.assign_v1", "arguments": { "paper": "P" } } });
        let answer: Value = rpc(call).await.unwrap().json().await.unwrap();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        let response =
            client.post(format!("http://{addr}/invoke/fixtures.assign_v1")).json(&json!({ "paper": "P" })).send().await;
        assert_eq!(response.unwrap().status(), 200);
    }
    let logged = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = logged.lines().filter(|l| l.contains("a deprecated capability was called")).collect();
    assert_eq!(lines.len(), 1, "{logged}");
    assert!(
        lines[0].contains("fixtures.assign_v1") && lines[0].contains("superseded_by=\"fixtures.assign\""),
        "{}",
        lines[0]
    );
}
