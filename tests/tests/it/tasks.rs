//! Capabilities declared `task` (`fixtures.crunch`) run as MCP tasks for 2026-07-28 clients that
//! declare the Tasks extension: fast work answers as a result, slow work as a task its creator
//! alone reads, answers and cancels; records survive `kill -9`, a server that stops leaves its
//! running tasks failed with a reason (never run again), and a task expires.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use trails_tests::Served;

const ALICE: &str = "tasks-alice-token";
const BOB: &str = "tasks-bob-token";

fn tokens() -> String {
    let token = |name: &str, token: &str| {
        format!(
            "[[http.tokens]]\nname = \"{name}\"\nsha256 = \"{}\"\nscopes = [\"runtime\"]\n",
            trails::auth::sha256_hex(token)
        )
    };
    format!("{}{}", token("alice", ALICE), token("bob", BOB))
}

/// A 2026-07-28 request's `_meta`; `tasks`: the client declares the Tasks extension.
fn meta(tasks: bool) -> Value {
    let extensions = if tasks { json!({ "io.modelcontextprotocol/tasks": {} }) } else { json!({}) };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "tasks-test", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": {}, "extensions": extensions },
    })
}

/// `method` with `params` (its `_meta` added) as a stateless 2026-07-28 request as `token`: the
/// JSON-RPC message.
pub(crate) async fn rpc(addr: std::net::SocketAddr, token: &str, method: &str, mut params: Value) -> Value {
    if params.get("_meta").is_none() {
        params["_meta"] = meta(true);
    }
    let name =
        ["name", "taskId", "uri"].iter().find_map(|key| params.get(*key)).and_then(Value::as_str).map(str::to_owned);
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let response =
        request.json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })).send().await.unwrap();
    let text = response.text().await.unwrap();
    let body =
        text.lines().filter_map(|line| line.strip_prefix("data:")).next_back().unwrap_or(&text).trim().to_owned();
    serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

pub(crate) async fn crunch(addr: std::net::SocketAddr, token: &str, arguments: Value) -> Value {
    rpc(addr, token, "tools/call", json!({ "name": "fixtures_crunch", "arguments": arguments })).await
}

pub(crate) async fn get(addr: std::net::SocketAddr, token: &str, id: &str) -> Value {
    rpc(addr, token, "tasks/get", json!({ "taskId": id })).await
}

/// `tasks/get` until the task's status is `status` (or terminal), within `limit`.
pub(crate) async fn until(addr: std::net::SocketAddr, token: &str, id: &str, status: &str, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let got = get(addr, token, id).await;
        let now = got["result"]["status"].as_str().unwrap_or_default().to_owned();
        if now == status || ["completed", "failed", "cancelled"].contains(&now.as_str()) {
            return got;
        }
        assert!(Instant::now() < deadline, "task {id} never became {status}: {got}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) fn task_id(created: &Value) -> String {
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().expect("a task id").to_owned()
}

fn runs(label: &str) -> usize {
    trails_tests::CRUNCHED.lock().unwrap().iter().filter(|(began, _)| began == label).count()
}

async fn serve(config: &str) -> (trails_tests::in_process::InProcess, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let toml = format!("{config}[kg]\npath = {:?}\n\n{}", dir.path().join("kg"), tokens());
    let settings = trails_tests::in_process::settings(&toml);
    (trails_tests::in_process::serve(trails::App::new(), settings).await, dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn fast_work_is_a_result_slow_work_a_task_that_only_its_creator_reads() {
    let (server, _dir) = serve("[tasks]\ninline_ms = 300\n\n").await;
    let addr = server.addr;
    let fast = crunch(addr, ALICE, json!({ "steps": 1, "step_ms": 10, "label": "fast" })).await;
    assert_eq!(fast["result"]["resultType"], "complete", "within the bound: a result: {fast}");
    assert_eq!(fast["result"]["content"][0]["text"], "fast: 1 steps");

    let started = Instant::now();
    // Three seconds of work: the handle comes at the bound (300 ms), well before the end.
    let slow = crunch(addr, ALICE, json!({ "steps": 20, "step_ms": 150, "label": "slow" })).await;
    assert!(started.elapsed() < Duration::from_millis(2500), "the handle comes at the bound, not the end");
    let id = task_id(&slow);
    assert_eq!(slow["result"]["status"], "working");
    assert!(slow["result"]["ttlMs"].as_u64().unwrap() > 0 && slow["result"].get("result").is_none(), "{slow}");

    // Another caller is told there is no such task, whatever it does with the id.
    for (method, params) in [
        ("tasks/get", json!({ "taskId": id })),
        ("tasks/cancel", json!({ "taskId": id })),
        ("tasks/update", json!({ "taskId": id, "inputResponses": {} })),
    ] {
        let refused = rpc(addr, BOB, method, params).await;
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
    }
    // Progress reaches the task's status message; then the result.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let working = get(addr, ALICE, &id).await;
        let message = working["result"]["statusMessage"].as_str().unwrap_or_default().to_owned();
        if message.starts_with("crunched (") && message.ends_with("/20)") {
            break;
        }
        let running = working["result"]["status"] == "working";
        assert!(running && Instant::now() < deadline, "no progress in the status message: {working}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let done = until(addr, ALICE, &id, "completed", Duration::from_secs(10)).await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(done["result"]["result"]["content"][0]["text"], "slow: 20 steps", "{done}");
    assert_eq!(runs("slow"), 1);

    // A client that takes no tasks gets the held request, as before.
    let params = json!({ "name": "fixtures_crunch", "arguments": { "steps": 2, "step_ms": 250, "label": "held" }, "_meta": meta(false) });
    let held = rpc(addr, ALICE, "tools/call", params).await;
    assert_eq!(held["result"]["resultType"], "complete", "{held}");
    assert_eq!(held["result"]["content"][0]["text"], "held: 2 steps");
    let gated = rpc(addr, ALICE, "tasks/get", json!({ "taskId": id, "_meta": meta(false) })).await;
    assert_eq!(gated["error"]["code"], -32021, "tasks/* needs the extension declared: {gated}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_asks_waits_for_its_answer_and_is_cancelled_at_once() {
    let (server, _dir) = serve("").await;
    let addr = server.addr;
    let asking = crunch(addr, ALICE, json!({ "steps": 1, "step_ms": 10, "label": "asking", "ask": true })).await;
    let id = task_id(&asking);
    let waiting = until(addr, ALICE, &id, "input_required", Duration::from_secs(5)).await;
    let asked = &waiting["result"]["inputRequests"]["name"];
    assert_eq!(asked["method"], "elicitation/create", "{waiting}");
    // An answer to nothing asked is ignored; a malformed one is refused and changes nothing.
    let ignored = rpc(addr, ALICE, "tasks/update", json!({ "taskId": id, "inputResponses": { "other": {} } })).await;
    assert_eq!(ignored["result"]["resultType"], "complete", "{ignored}");
    let bad = rpc(addr, ALICE, "tasks/update", json!({ "taskId": id, "inputResponses": { "name": "Ada" } })).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let answer = json!({ "action": "accept", "content": { "name": "Ada" } });
    let acked = rpc(addr, ALICE, "tasks/update", json!({ "taskId": id, "inputResponses": { "name": answer } })).await;
    assert_eq!(acked["result"], json!({ "resultType": "complete" }), "an empty ack: {acked}");
    let done = until(addr, ALICE, &id, "completed", Duration::from_secs(5)).await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "asking: 1 steps, for Ada", "{done}");
    assert_eq!(runs("asking"), 1, "the handler was not run again for its answer");

    let long = crunch(addr, ALICE, json!({ "steps": 100, "step_ms": 100, "label": "cancelled", "now": true })).await;
    let id = task_id(&long);
    let acked = rpc(addr, ALICE, "tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(acked["result"], json!({ "resultType": "complete" }), "{acked}");
    let cancelled = get(addr, ALICE, &id).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "at once: {cancelled}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !trails_tests::CRUNCHED.lock().unwrap().iter().any(|(label, end)| label == "cancelled" && end.is_some()) {
        assert!(Instant::now() < deadline, "the handler never saw the cancellation");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let again = rpc(addr, ALICE, "tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(again["result"]["resultType"], "complete", "cancelling an ended task is acknowledged: {again}");
    assert_eq!(get(addr, ALICE, &id).await["result"]["status"], "cancelled", "and changes nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_keyed_retry_gets_the_same_task_and_a_caller_has_few_running() {
    let (server, _dir) = serve("[tasks]\nmax_live_per_caller = 1\n\n").await;
    let addr = server.addr;
    let keyed = |label: &str| {
        let mut meta = meta(true);
        meta["trails"] = json!({ "idempotency_key": "crunch-1" });
        json!({ "name": "fixtures_crunch", "arguments": { "steps": 10, "step_ms": 100, "label": label, "now": true }, "_meta": meta })
    };
    let first = rpc(addr, ALICE, "tools/call", keyed("keyed")).await;
    let id = task_id(&first);
    let retried = rpc(addr, ALICE, "tools/call", keyed("keyed")).await;
    assert_eq!(task_id(&retried), id, "the same task: {retried}");
    // One running already: another is refused, retryable, and does not run.
    let refused = crunch(addr, ALICE, json!({ "steps": 1, "step_ms": 600, "label": "over", "now": true })).await;
    assert_eq!(refused["error"]["data"]["kind"], "unavailable", "{refused}");
    assert_eq!(refused["error"]["data"]["retryable"], true, "{refused}");
    assert_eq!(runs("over"), 0);
    // Bob's cap is his own.
    let bobs = crunch(addr, BOB, json!({ "steps": 1, "step_ms": 10, "label": "bob", "now": true })).await;
    task_id(&bobs);
    until(addr, ALICE, &id, "completed", Duration::from_secs(10)).await;
    assert_eq!(runs("keyed"), 1, "the retry ran nothing");
}

fn fixture(config: &str, runs: &std::path::Path) -> Served {
    let toml = format!("{config}[http]\nsessions = false\n\n{}", tokens());
    crate::fixture().config(toml).env("TRAILS_TESTS_RUNS", runs.display().to_string()).http()
}

pub(crate) fn lines(path: &std::path::Path, label: &str) -> usize {
    std::fs::read_to_string(path).unwrap_or_default().lines().filter(|line| *line == label).count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_completed_result_survives_kill_9_and_the_task_expires() {
    let runs = tempfile::tempdir().unwrap();
    let log = runs.path().join("runs");
    let mut server = fixture("[tasks]\nttl_secs = 10\n\n", &log);
    let created = crunch(server.addr, ALICE, json!({ "steps": 2, "step_ms": 100, "label": "kept", "now": true })).await;
    let id = task_id(&created);
    until(server.addr, ALICE, &id, "completed", Duration::from_secs(5)).await;
    server.kill_and_restart();
    let kept = get(server.addr, ALICE, &id).await;
    assert_eq!(kept["result"]["status"], "completed", "{kept}");
    assert_eq!(kept["result"]["result"]["content"][0]["text"], "kept: 2 steps");
    assert_eq!(lines(&log, "kept"), 1);
    // Its time to live (from its creation) ends: it is gone.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = get(server.addr, ALICE, &id).await;
        if got["error"]["code"] == -32602 {
            break;
        }
        assert!(Instant::now() < deadline, "the task never expired: {got}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_whose_server_died_fails_with_a_reason_and_never_runs_again() {
    let runs = tempfile::tempdir().unwrap();
    let log = runs.path().join("runs");
    let mut server = fixture("[tasks]\nlease_secs = 2\n\n", &log);
    let created =
        crunch(server.addr, ALICE, json!({ "steps": 1000, "step_ms": 50, "label": "killed", "now": true })).await;
    let id = task_id(&created);
    until(server.addr, ALICE, &id, "working", Duration::from_secs(5)).await;
    server.kill_and_restart();
    let failed = until(server.addr, ALICE, &id, "failed", Duration::from_secs(10)).await;
    assert_eq!(failed["result"]["status"], "failed", "{failed}");
    assert_eq!(failed["result"]["error"]["code"], -32603);
    let reason = failed["result"]["statusMessage"].as_str().unwrap();
    assert!(reason.contains("stopped before it ended"), "{reason}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(lines(&log, "killed"), 1, "the work ran once");

    // A server stopped in order fails its running tasks as it stops.
    let created =
        crunch(server.addr, ALICE, json!({ "steps": 1000, "step_ms": 50, "label": "stopped", "now": true })).await;
    let id = task_id(&created);
    server.signal("TERM");
    assert!(server.exits_within(Duration::from_secs(10)).is_some(), "the server stops");
    server.restart();
    let failed = until(server.addr, ALICE, &id, "failed", Duration::from_secs(10)).await;
    assert!(failed["result"]["statusMessage"].as_str().unwrap().contains("stopped"), "{failed}");
    assert_eq!(lines(&log, "stopped"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_tasks_left_unread_expire_and_leave_nothing_running() {
    let (server, _dir) = serve("[tasks]\nttl_secs = 10\nmax_live_per_caller = 1000\n\n").await;
    let addr = server.addr;
    let made = std::sync::Arc::new(tokio::sync::Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..8)
        .map(|worker| {
            let made = made.clone();
            tokio::spawn(async move {
                for n in 0..125 {
                    let label = format!("soak-{worker}-{n}");
                    let created =
                        crunch(addr, ALICE, json!({ "steps": 1, "step_ms": 0, "label": label, "now": true })).await;
                    made.lock().await.push(task_id(&created));
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    let made = made.lock().await.clone();
    assert_eq!(made.len(), 1000);
    let stats = || async {
        let read = rpc(addr, ALICE, "resources/read", json!({ "uri": "trails://stats" })).await;
        let text = read["result"]["contents"][0]["text"].as_str().expect("the stats").to_owned();
        serde_json::from_str::<Value>(&text).unwrap()["tasks"].clone()
    };
    // Every call ended: none is held in memory.
    let deadline = Instant::now() + Duration::from_secs(10);
    while stats().await["running_here"] != 0 {
        assert!(Instant::now() < deadline, "tasks still running: {}", stats().await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(get(addr, ALICE, &made[999]).await["result"]["status"], "completed");
    // Unread, they expire with their time to live; the records are gone.
    tokio::time::sleep(Duration::from_secs(11)).await;
    for id in [&made[0], &made[500], &made[999]] {
        assert_eq!(get(addr, ALICE, id).await["error"]["code"], -32602, "expired");
    }
}
