//! An app's own guard (`App::guard`) on the real pipeline: it sees the arguments only once they
//! are validated (integral floats already integers), can attach a value the handler reads, can
//! refuse a call (which then costs no budget and runs no handler), and sees every answer on its
//! way out — over MCP and over `/invoke` alike.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use trails::pipeline::{Call, Guard, GuardFuture, Next};
use trails::Error;
use trails_tests::{in_process, Tenant};

const DEV_TOKEN: &str = "guards-dev-token";

/// Refuses searches for "forbidden", attaches the caller's tenant, and writes down what it saw.
#[derive(Default)]
struct TenantGuard {
    seen: Mutex<Vec<(String, Value)>>,
    answered: Mutex<Vec<Result<bool, i32>>>,
}

impl Guard for TenantGuard {
    fn call<'a>(&'a self, mut call: Call, next: Next<'a>) -> GuardFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push((call.tool().id().to_owned(), call.arguments().clone()));
            if call.arguments()["query"] == "forbidden" {
                return Err(call.refuse(Error::policy_denied("this tenant may not search for that")));
            }
            assert_ne!(call.arguments()["query"], "panic", "a guard with a bug");
            let tenant = call.ctx().caller().map_or("public", |_| "acme").to_owned();
            call.insert_extension(Tenant(tenant));
            let answer = next.run(call).await;
            self.answered.lock().unwrap().push(answer.as_ref().map(|a| a.result().is_error).map_err(|r| r.code()));
            answer
        })
    }
}

async fn serve(guard: Arc<TenantGuard>) -> (SocketAddr, trails::serve::Server) {
    let toml = format!(
        "[mcp]\nscopes = [\"dev\"]\n\n[http]\nsessions = false\n\n[budget]\ntokens = 40\n\n\
         [[http.tokens]]\nname = \"dev\"\nsha256 = \"{}\"\nscopes = [\"dev\"]\nbudget = {{ tokens = 1000 }}\n",
        trails::auth::sha256_hex(DEV_TOKEN)
    );
    let app = trails::App::new().kg(trails::kg::Kg::temporary().unwrap()).guard(guard);
    let served = in_process::serve(app, in_process::settings(&toml)).await;
    (served.addr, served.server)
}

async fn call(addr: SocketAddr, token: Option<&str>, tool: &str, arguments: Value) -> Value {
    trails_tests::client::call_tool(addr, token, tool, arguments).await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_apps_own_guard_sees_validated_calls_can_refuse_them_and_attach_what_handlers_read() {
    let guard = Arc::new(TenantGuard::default());
    let (addr, _) = serve(guard.clone()).await;

    // Validation runs first: the guard never sees arguments that break the declared constraints.
    let invalid = call(addr, None, "research_search", json!({ "query": "" })).await;
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    assert!(guard.seen.lock().unwrap().is_empty());

    // A refusal of the guard's: an error answer, no handler, and no budget spent — the anonymous
    // budget (40 tokens) still pays for one search afterwards, and only one.
    let refused = call(addr, None, "research_search", json!({ "query": "forbidden" })).await;
    assert_eq!(refused["error"]["code"], -32002, "{refused}");
    assert_eq!(refused["error"]["message"], "policy denied: this tenant may not search for that");
    let found = call(addr, None, "research_search", json!({ "query": "graph", "limit": 2.0 })).await;
    assert!(found["result"]["structuredContent"]["items"].is_array(), "{found}");
    assert_eq!(call(addr, None, "research_search", json!({ "query": "graph" })).await["error"]["code"], -32003);

    // It saw the validated arguments: `2.0` for an integer field arrived as `2`.
    let seen = guard.seen.lock().unwrap().clone();
    assert_eq!(seen[1], ("research.search".to_owned(), json!({ "query": "graph", "limit": 2 })));
    assert_eq!(seen.len(), 3);

    // A guard that panics fails that call only: `-32603` with a trace id, and the server goes on.
    let panicked = call(addr, Some(DEV_TOKEN), "research_search", json!({ "query": "panic" })).await;
    assert_eq!(panicked["error"]["code"], -32603, "{panicked}");
    assert!(panicked["error"]["data"]["trace_id"].is_string(), "{panicked}");
    assert!(!panicked.to_string().contains("a guard with a bug"), "the cause stays in the log: {panicked}");

    // What it attached reaches the handler.
    let inspected = call(addr, Some(DEV_TOKEN), "trails_meta_fixture_inspect", json!({})).await;
    let text = inspected["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.ends_with(r#"for tenant Some("acme")"#), "{inspected}");

    // And it saw each answer on its way out: the search, the budget's refusal, the inspection.
    assert_eq!(*guard.answered.lock().unwrap(), vec![Ok(false), Err(-32003), Ok(false)]);

    // `/invoke` passes the same guards.
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/invoke/research.search"))
        .bearer_auth(DEV_TOKEN)
        .json(&json!({ "query": "forbidden" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

/// The public in-process client (`trails::testing`) answers as MCP over HTTP does, call for
/// call: the listing per caller, validation, the app's guard, scopes and bearer tokens.
#[tokio::test(flavor = "multi_thread")]
async fn the_in_process_test_client_answers_as_mcp_over_http_does() {
    use trails::testing::{CallError, Client};
    let guard = Arc::new(TenantGuard::default());
    let (addr, server) = serve(guard.clone()).await;
    let anonymous = Client::anonymous(&server);
    let dev = Client::with_token(&server, DEV_TOKEN).unwrap();
    let refused = Client::with_token(&server, "not-a-token").err().unwrap();
    assert_eq!(refused.code, -32001, "{refused}");

    let http_tools = |token: Option<&'static str>| async move {
        let mut request = reqwest::Client::new()
            .post(format!("http://{addr}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.unwrap().json::<Value>().await.unwrap()["result"]["tools"].clone()
    };
    assert_eq!(Value::Array(anonymous.tools()), http_tools(None).await);
    assert_eq!(Value::Array(dev.tools()), http_tools(Some(DEV_TOKEN)).await);
    assert!(dev.tools().len() > anonymous.tools().len(), "the dev token sees the dev tools");

    let as_wire = |answer: Result<Value, CallError>| match answer {
        Ok(result) => json!({ "result": result }),
        Err(error) => json!({ "error": { "code": error.code, "message": error.message, "data": error.data } }),
    };
    let cases: [(Option<&str>, &str, Value); 5] = [
        (Some(DEV_TOKEN), "research_search", json!({ "query": "graphs", "limit": 2 })),
        (Some(DEV_TOKEN), "research_search", json!({ "query": "forbidden" })),
        (None, "research_search", json!({ "query": "" })),
        (None, "trails_meta_gen_shape", json!({})),
        (Some(DEV_TOKEN), "no.such.tool", json!({})),
    ];
    for (token, tool, arguments) in cases {
        let over_http = call(addr, token, tool, arguments.clone()).await;
        let client = if token.is_some() { &dev } else { &anonymous };
        let in_process = as_wire(client.call(tool, arguments.clone()).await);
        let mut over_http = over_http.as_object().unwrap().clone();
        over_http.retain(|key, _| key == "result" || key == "error");
        if let Some(error) = over_http.get_mut("error") {
            error.as_object_mut().unwrap().entry("data").or_insert(Value::Null);
        }
        assert_eq!(in_process, Value::Object(over_http), "{tool} {arguments}");
    }
    // The guard saw the in-process calls too: each passing call twice, once per route.
    let forbidden = |guard: &TenantGuard| {
        let seen = guard.seen.lock().unwrap();
        seen.iter().filter(|(id, args)| id == "research.search" && args["query"] == "forbidden").count()
    };
    assert_eq!(forbidden(&guard), 2);

    // A dry run passes the app's guard too: its refusal is the verdict's reason, and nothing ran.
    let verdict = dev.dry_run("research_search", json!({ "query": "forbidden" })).await.unwrap();
    assert_eq!(verdict["would_run"], false, "{verdict}");
    assert_eq!(verdict["reasons"][0]["kind"], "policy_denied", "{verdict}");
    assert_eq!(forbidden(&guard), 3, "the guard saw the dry run");
    // The test client can ask its user: a declared confirmation is said, and does not block.
    let purge = dev.dry_run("fixtures_purge", json!({})).await.unwrap();
    assert_eq!(purge["would_run"], true, "{purge}");
    assert_eq!(
        (&purge["reasons"][0]["kind"], &purge["reasons"][0]["question"]),
        (&json!("confirmation"), &json!("Forget every count?"))
    );
    let verdict = dev.dry_run("research_search", json!({ "query": "graphs" })).await.unwrap();
    assert_eq!(
        verdict,
        json!({ "would_run": true, "reasons": [{ "kind": "cost", "blocking": false,
        "message": "the call would be charged its declared cost to the caller's budget", "cost": { "tokens": 40, "usd": 0.0 } }] })
    );
}

/// Takes its time, then lets the call through, and notes that the call ended.
#[derive(Default)]
struct SlowGuard {
    ended: std::sync::atomic::AtomicBool,
}

impl Guard for SlowGuard {
    fn call<'a>(&'a self, call: Call, next: Next<'a>) -> GuardFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
            let answer = next.run(call).await;
            self.ended.store(true, std::sync::atomic::Ordering::SeqCst);
            answer
        })
    }
}

/// A client that hangs up mid-call does not cut the call off half-way: it runs to its end (its
/// writes and provenance complete), its answer unsent.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_whose_client_hangs_up_still_runs_to_its_end() {
    use tokio::io::AsyncWriteExt;
    let guard = Arc::new(SlowGuard::default());
    let app = trails::App::new().kg(trails::kg::Kg::temporary().unwrap()).guard(guard.clone());
    let served = in_process::serve(app, in_process::settings("[http]\nsessions = false\n")).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"research_search","arguments":{"query":"graph"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(served.addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    drop(stream);
    tokio::time::sleep(std::time::Duration::from_millis(900)).await;
    assert!(guard.ended.load(std::sync::atomic::Ordering::SeqCst), "the call was cut off when its client left");
}

/// In a 2025-* session, a call that is not done at once is primed for resumption: its client
/// may lose the stream and take the answer up again with `Last-Event-ID`, as rmcp's own answers
/// can be, and the call runs to its end meanwhile.
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_call_in_a_session_survives_a_dropped_stream_and_is_resumed() {
    let guard = Arc::new(SlowGuard::default());
    let app = trails::App::new().kg(trails::kg::Kg::temporary().unwrap()).guard(guard.clone());
    let served = in_process::serve(app, in_process::settings("[http]\nsessions = true\n")).await;
    let url = format!("http://{}/mcp", served.addr);
    let client = reqwest::Client::new();
    let post = |session: Option<&str>, body: &'static str| {
        let request = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        match session {
            Some(session) => request.header("mcp-session-id", session),
            None => request,
        }
    };
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let opened = post(None, initialize).send().await.unwrap();
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    opened.text().await.unwrap();
    let initialized = post(Some(&session), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(initialized.send().await.unwrap().status(), 202);

    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"research_search","arguments":{"query":"graph"}}}"#;
    let mut stream = post(Some(&session), call).send().await.unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let priming = String::from_utf8(stream.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    assert_eq!(priming, "data: \nid: t0\nretry: 3000\n\n");
    drop(stream);
    assert!(!guard.ended.load(std::sync::atomic::Ordering::SeqCst), "the stream dropped before the call ended");

    let resume = |last_event_id: &str| {
        client
            .get(&url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("last-event-id", last_event_id)
    };
    let resumed = resume("t0").send().await.unwrap();
    assert_eq!(resumed.status(), 200);
    let answer = resumed.text().await.unwrap();
    assert!(guard.ended.load(std::sync::atomic::Ordering::SeqCst), "the call ran to its end");
    let data = answer.strip_prefix("data: ").and_then(|a| a.strip_suffix("\n\n")).unwrap_or_else(|| panic!("{answer}"));
    let message: Value = serde_json::from_str(data).unwrap();
    assert_eq!(message["id"], 1, "{message}");
    assert_eq!(message["result"]["isError"], false, "{message}");
    // Again, while it is kept; an id this server never gave is an empty stream, as rmcp answers.
    assert_eq!(resume("t0").send().await.unwrap().text().await.unwrap(), answer);
    assert_eq!(resume("t99").send().await.unwrap().text().await.unwrap(), "");
}
