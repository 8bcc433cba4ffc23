//! A capability returns images, audio, embedded resources and mixed content as typed values; each
//! transport carries the blocks as MCP shapes them, annotations included, and the result bound
//! holds for them too.

use serde_json::{json, Value};

use trails::testing::Client;

fn blocks(size: usize) -> Value {
    use base64::Engine as _;
    json!([
        { "type": "text", "text": "Sales by week", "annotations": { "audience": ["assistant"], "priority": 0.5 } },
        { "type": "image", "mimeType": "image/png", "annotations": { "audience": ["user"] },
          "data": base64::engine::general_purpose::STANDARD.encode(vec![0x89_u8; size]) },
        { "type": "resource", "resource": { "uri": "data://sales.csv", "mimeType": "text/csv", "text": "week,sales\n1,3\n" } },
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn mixed_content_reaches_each_transport_as_mcp_blocks() {
    // Without sessions (the hot path's stateless answer), and in an rmcp client's session.
    let stateless = crate::fixture().config("[http]\nsessions = false\n").http();
    let answer = trails_tests::client::call_tool(stateless.addr, None, "fixtures_chart", json!({ "size": 3 })).await;
    let result = &answer["result"];
    assert_eq!(result["content"], blocks(3), "{answer}");
    assert_eq!(result["isError"], false);
    assert!(result.get("structuredContent").is_none(), "no output schema, no structured content");
    let server = crate::fixture().http();
    let session = trails_tests::client::connect(server.addr, None).await;
    let result = trails_tests::client::call(&session, "fixtures_chart", json!({ "size": 3 })).await.unwrap();
    assert_eq!(serde_json::to_value(&result.content).unwrap(), blocks(3));
    let invoked: Value = reqwest::Client::new()
        .post(format!("http://{}/invoke/fixtures.chart", server.addr))
        .json(&json!({ "size": 3 }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(invoked["content"], blocks(3), "/invoke: {invoked}");
    let listed =
        trails_tests::client::post(stateless.addr, None, &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }))
            .await;
    let tool = listed["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "fixtures_chart").unwrap();
    assert!(tool.get("outputSchema").is_none(), "content blocks have no output schema: {tool}");
}

#[tokio::test]
async fn content_over_the_result_bound_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let settings = trails_tests::in_process::settings(&format!(
        "[mcp]\nmax_result_bytes = 4096\ntool_window_chars = 1024\n[kg]\npath = {:?}\n",
        dir.path().join("kg")
    ));
    let server = trails::App::new().include(trails_tests::link).build(settings).unwrap();
    let client = Client::anonymous(&server);
    let small = client.call("fixtures.chart", json!({ "size": 100 })).await.unwrap();
    assert_eq!(small["content"], blocks(100));
    let large = client.call("fixtures.chart", json!({ "size": 10_000 })).await.unwrap();
    assert_eq!(large["isError"], true, "{large}");
    let error = large["structuredContent"]["error"].as_str().unwrap();
    assert!(error.contains("this server sends at most 4096 ([mcp] max_result_bytes)"), "{error}");
    // Base64 is no reading for a model: nothing is kept to page through.
    assert!(large["structuredContent"]["next_call"].is_null(), "{large}");
}
