//! A handler reports progress (`ctx.progress`) on the request's own stream — a 2026-07-28
//! request's SSE answer, a 2025 session's, stdio — learns that its client cancelled
//! (`ctx.cancelled()`: `notifications/cancelled`, or a client that hung up), and reads what its
//! request carried (`ctx.request()`).

use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ProgressNotificationParam};
use rmcp::service::{NotificationContext, PeerRequestOptions};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

/// The `data:` of each event of an SSE body, as JSON.
fn events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

fn count(to: u32, pause_ms: u32, label: &str) -> Value {
    json!({ "name": "fixtures_count", "arguments": { "to": to, "pause_ms": pause_ms, "label": label } })
}

/// The progress values of `notifications/progress` messages under `token`.
fn progress_of(messages: &[Value], token: &Value) -> Vec<f64> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == *token)
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_2026_call_gets_its_progress_on_its_own_stream_before_its_answer() {
    let server = crate::fixture().http();
    let mut params = count(3, 30, "stream");
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "progress-test", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": {},
        "progressToken": "p-1",
    });
    let response = reqwest::Client::new()
        .post(server.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "fixtures_count")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let messages = events(&response.text().await.unwrap());
    assert_eq!(progress_of(&messages, &json!("p-1")), vec![1.0, 2.0, 3.0], "{messages:#?}");
    let last = messages.last().unwrap();
    assert_eq!(last["id"], 1, "the answer comes last: {messages:#?}");
    assert_eq!(last["result"]["content"][0]["text"], "counted to 3");
    assert_eq!(last["result"]["resultType"], "complete");
    let first = &messages[0];
    assert_eq!(first["params"]["total"], 3.0);
    assert_eq!(first["params"]["message"], "counted 1");
}

/// A client that keeps the progress and the log messages it is sent.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<ProgressNotificationParam>>>, Arc<Mutex<Vec<Value>>>);

impl ClientHandler for Seen {
    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.0.lock().unwrap().push(params);
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.1.lock().unwrap().push(serde_json::to_value(params).unwrap());
    }
}

fn call_request(params: Value) -> ClientRequest {
    let params: CallToolRequestParams = serde_json::from_value(params).unwrap();
    ClientRequest::CallToolRequest(CallToolRequest::new(params))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_gets_progress_and_its_cancellation_reaches_the_handler() {
    let dir = tempfile::tempdir().unwrap();
    let settings = trails_tests::in_process::settings(&format!("[kg]\npath = {:?}\n", dir.path().join("kg")));
    let served = trails_tests::in_process::serve(trails::App::new(), settings).await;
    let seen = Seen::default();
    let client = seen
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(format!("http://{}/mcp", served.addr)))
        .await
        .unwrap();
    // rmcp's client puts a progress token on every request.
    let done = client.call_tool(serde_json::from_value(count(3, 30, "session")).unwrap()).await.unwrap();
    assert_eq!(serde_json::to_value(&done.content).unwrap()[0]["text"], "counted to 3");
    let values: Vec<f64> = seen.0.lock().unwrap().iter().map(|p| p.progress).collect();
    assert_eq!(values, vec![1.0, 2.0, 3.0]);
    assert!(seen.1.lock().unwrap().is_empty(), "no log messages before the client asks for them");
    // Once it asks (2025's `logging/setLevel`), the messages at that level and above.
    #[allow(deprecated)]
    {
        let level = rmcp::model::SetLevelRequestParams::new(rmcp::model::LoggingLevel::Debug);
        client.set_level(level).await.unwrap();
    }
    client.call_tool(serde_json::from_value(count(2, 30, "logged")).unwrap()).await.unwrap();
    let logged = seen.1.lock().unwrap().clone();
    assert_eq!(
        logged,
        vec![json!({ "level": "debug", "data": "counted 1" }), json!({ "level": "debug", "data": "counted 2" })]
    );

    // A long count, cancelled once it has begun.
    let handle = client
        .send_cancellable_request(
            call_request(count(1000, 20, "cancelled in session")),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let token = handle.progress_token.clone();
    wait_for(|| seen.0.lock().unwrap().iter().any(|p| p.progress_token == token)).await;
    handle.cancel(Some("changed my mind".into())).await.unwrap();
    let at = wait_for_cancellation("cancelled in session").await;
    assert!((1..1000).contains(&at), "the handler stopped at step {at}");

    // What the handler reads of its request in a session: the client's `initialize`.
    let result = client.call_tool(CallToolRequestParams::new("fixtures_request")).await.unwrap();
    let said: Value = serde_json::from_str(result.content[0].as_text().unwrap().text.as_str()).unwrap();
    assert_eq!(said["in_session"], true, "{said}");
    assert_eq!(said["protocol_version"], "2025-11-25", "{said}");
    assert_eq!(said["client"]["name"], "rmcp", "{said}");
    assert!(said["capabilities"].is_object(), "{said}");
    assert!(said["progress_token"].is_number() || said["progress_token"].is_string(), "{said}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_hangs_up_cancels_and_a_2026_request_says_who_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let settings = trails_tests::in_process::settings(&format!(
        "[http]\nsessions = false\n[kg]\npath = {:?}\n",
        dir.path().join("kg")
    ));
    let served = trails_tests::in_process::serve(trails::App::new(), settings).await;
    // The hot path answers it: no progress asked for.
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": count(1000, 20, "hung up") });
    let hung_up = reqwest::Client::new()
        .post(format!("http://{}/mcp", served.addr))
        .header("accept", "application/json, text/event-stream")
        .timeout(Duration::from_millis(300))
        .json(&body)
        .send()
        .await;
    assert!(hung_up.is_err_and(|error| error.is_timeout()));
    let at = wait_for_cancellation("hung up").await;
    assert!((1..1000).contains(&at), "the handler stopped at step {at}");

    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "hand-written", "version": "2" },
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} },
    });
    let answer = reqwest::Client::new()
        .post(format!("http://{}/mcp", served.addr))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "fixtures_request")
        .json(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": { "name": "fixtures_request", "_meta": meta } }))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let said: Value = serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        said,
        json!({ "protocol_version": "2026-07-28", "in_session": false, "client": { "name": "hand-written", "version": "2" },
                "capabilities": { "elicitation": {} }, "progress_token": null })
    );
}

#[test]
fn over_stdio_progress_comes_before_the_answer() {
    let mut app = crate::fixture().stdio();
    let mut send = |message: Value| writeln!(app.stdin, "{message}").unwrap();
    send(json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "stdio-test", "version": "1" } } }));
    send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let mut params = count(3, 30, "stdio");
    params["_meta"] = json!({ "progressToken": 42 });
    send(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }));
    let mut messages = Vec::new();
    loop {
        let message = app.answer();
        let last = message["id"] == 1;
        messages.push(message);
        if last {
            break;
        }
    }
    assert_eq!(progress_of(&messages, &json!(42)), vec![1.0, 2.0, 3.0], "{messages:#?}");
    assert_eq!(messages.last().unwrap()["result"]["content"][0]["text"], "counted to 3");
}

async fn wait_for(mut condition: impl FnMut() -> bool) {
    for _ in 0..500 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("not within 5 s");
}

/// The step at which the `fixtures.count` call labelled `label` saw its cancellation.
async fn wait_for_cancellation(label: &str) -> u32 {
    let found = || trails_tests::CANCELLED_AT.lock().unwrap().iter().find(|(l, _)| l == label).map(|(_, at)| *at);
    wait_for(|| found().is_some()).await;
    found().unwrap()
}

/// A session's call the hot path answers (no progress asked for) is cancelled by the session's
/// `notifications/cancelled` as one rmcp answers is.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_cancels_a_call_the_hot_path_answers() {
    let dir = tempfile::tempdir().unwrap();
    let settings = trails_tests::in_process::settings(&format!("[kg]\npath = {:?}\n", dir.path().join("kg")));
    let served = trails_tests::in_process::serve(trails::App::new(), settings).await;
    let client = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut request = client
            .post(format!("http://{}/mcp", served.addr))
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
        }
        request.send()
    };
    let opened = post(
        json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "raw", "version": "1" } } }),
        None,
    )
    .await
    .unwrap();
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    opened.text().await.unwrap();
    post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), Some(session.clone())).await.unwrap();
    let call = post(
        json!({ "jsonrpc": "2.0", "id": "long-1", "method": "tools/call", "params": count(1000, 20, "hot session") }),
        Some(session.clone()),
    );
    let answered = tokio::spawn(async move { call.await.unwrap().text().await.unwrap() });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": { "requestId": "long-1", "reason": "no longer needed" } });
    assert_eq!(post(cancel, Some(session)).await.unwrap().status(), 202);
    let at = wait_for_cancellation("hot session").await;
    assert!((1..1000).contains(&at), "the handler stopped at step {at}");
    let body = answered.await.unwrap();
    assert!(body.contains(&format!("cancelled after {at}")), "{body}");
}
