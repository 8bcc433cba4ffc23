//! A handler's domain errors — not found, conflict, precondition failed, unavailable — reach the
//! model as `isError` results it reads (not as JSON-RPC errors a host may hide), `/invoke` as
//! 404 / 409 / 412 / 503 with `Retry-After`, and provenance as failed calls (DESIGN §4.2).

use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread")]
async fn each_domain_error_is_a_result_the_model_reads_and_an_http_status() {
    let server = crate::fixture().config("[http]\nsessions = false\n").http();
    let cases = [
        ("not_found", 404, "no fixture named sunday", false, None),
        ("conflict", 409, "the fixture is already assigned", false, None),
        ("precondition_failed", 412, "the fixture must be reviewed first", false, None),
        // 29.001 s, rounded up: a client that waits the whole seconds it is told is never early.
        ("unavailable", 503, "the mail relay refused", true, Some(30)),
    ];
    for (kind, status, message, retryable, retry_after) in cases {
        let mut expected = json!({ "kind": kind, "message": message, "retryable": retryable });
        if let Some(secs) = retry_after {
            expected["retry_after_secs"] = json!(secs);
        }
        let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": { "name": "fixtures_fail", "arguments": { "how": kind } } });
        let answer = trails_tests::client::post(server.addr, None, &call).await;
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{kind}: a result, not a JSON-RPC error: {answer}");
        assert_eq!(result["structuredContent"], expected, "{kind}");
        let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, expected, "{kind}: a host that shows only text shows the same");

        let response = reqwest::Client::new()
            .post(format!("http://{}/invoke/fixtures.fail", server.addr))
            .json(&json!({ "how": kind }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), status, "{kind}");
        let retry = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(retry, retry_after.map(|secs| secs.to_string()), "{kind}");
        assert_eq!(response.json::<Value>().await.unwrap(), json!({ "error": expected }), "{kind}");
    }
    // The OpenAPI document lists them.
    let openapi: Value =
        reqwest::get(format!("http://{}/openapi.json", server.addr)).await.unwrap().json().await.unwrap();
    let responses = &openapi["paths"]["/invoke/fixtures.fail"]["post"]["responses"];
    for status in ["404", "409", "412", "503"] {
        assert!(responses[status].is_object(), "{status}: {responses}");
    }
    let unavailable = &openapi["components"]["responses"]["Unavailable"];
    assert!(unavailable["headers"]["Retry-After"].is_object(), "{unavailable}");
}
