//! Three replicas of the fixture app on one Oxigraph server, sharing `[coordination]` in Redis,
//! behind HAProxy (round robin): a budget of N is N across them, an idempotent retry that lands on
//! another replica replays, a listener on one replica hears writes made through the others, and
//! what happens when Redis goes away and comes back (`runtime/guide/09-replicas.md`).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::RoleClient;
use serde_json::{json, Value};
use trails_tests::servers::{Balancer, OxigraphServer, RedisServer};
use trails_tests::Served;

const AGENT_TOKEN: &str = "replicas-agent-token";

struct Topology {
    replicas: Vec<Served>,
    balancer: Balancer,
    redis: RedisServer,
    _store: OxigraphServer,
}

fn replica_config(store: &OxigraphServer, redis: &RedisServer, sessions: bool, extra: &str) -> String {
    format!(
        "[http]\nsessions = {sessions}\n\n[kg]\nquery_url = \"{}\"\nupdate_url = \"{}\"\n\n[budget]\ntokens = 600\n\n\
         [coordination]\nurl = \"{}\"\n{extra}\n\n[[http.tokens]]\nname = \"agent\"\nsha256 = \"{}\"\nscopes = [\"runtime\"]\n",
        store.query_url(),
        store.update_url(),
        redis.url(),
        trails::auth::sha256_hex(AGENT_TOKEN),
    )
}

/// The topology, the replicas' `[coordination]` ending with `extra`.
fn topology(extra: &str) -> Topology {
    topology_with(false, extra)
}

fn topology_with(sessions: bool, extra: &str) -> Topology {
    let (store, redis) = (OxigraphServer::start(), RedisServer::start());
    let config = replica_config(&store, &redis, sessions, extra);
    let replicas: Vec<Served> = (0..3).map(|_| crate::fixture().config(config.clone()).http()).collect();
    let balancer = Balancer::start(&replicas.iter().map(|r| r.addr).collect::<Vec<_>>());
    Topology { replicas, balancer, redis, _store: store }
}

async fn call(addr: SocketAddr, tool: &str, arguments: Value, key: Option<&str>) -> Value {
    let mut params = json!({ "name": tool, "arguments": arguments });
    if let Some(key) = key {
        params["_meta"] = json!({ "trails": { "idempotency_key": key } });
    }
    let request = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params });
    trails_tests::client::post(addr, Some(AGENT_TOKEN), &request).await
}

fn requirement(id: &str) -> Value {
    json!({ "req_id": id, "title": "Audit log", "status": "proposed", "priority": 2, "tags": [] })
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Redis, HAProxy and Oxigraph server: `cargo xtask test` installs them and runs this"]
async fn a_budget_of_n_is_n_across_replicas_and_a_retry_through_another_replica_replays() {
    let topology = topology("");
    // `requirements.create` costs 120 tokens; the budget is 600: five creates, wherever they land.
    let mut admitted = 0;
    let mut refused = 0;
    for n in 0..15 {
        let answer = call(topology.balancer.addr, "requirements_create", requirement(&format!("REQ-{n}")), None).await;
        match answer["error"]["code"].as_i64() {
            None if answer["result"]["isError"] != true => admitted += 1,
            Some(-32003) => refused += 1,
            _ => panic!("{answer}"),
        }
    }
    assert_eq!((admitted, refused), (5, 10), "one budget across three replicas");
    let refusal = call(topology.replicas[2].addr, "requirements_create", requirement("REQ-99"), None).await;
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(message.contains("0 tokens left"), "{refusal}");

    // `requirements.update` is idempotent (and free): three tries of one key, one per replica.
    let retitle = json!({ "req_id": "REQ-0", "title": "Passkeys" });
    let first = call(topology.replicas[0].addr, "requirements_update", retitle.clone(), Some("k-1")).await;
    assert_eq!(first["result"]["structuredContent"]["title"], "Passkeys", "{first}");
    // Someone retitles it without a key in between: a replay must not write it back.
    let other = json!({ "req_id": "REQ-0", "title": "Hardware keys" });
    call(topology.replicas[1].addr, "requirements_update", other, None).await;
    for replica in &topology.replicas[1..] {
        let retry = call(replica.addr, "requirements_update", retitle.clone(), Some("k-1")).await;
        assert_eq!(retry["result"]["_meta"]["trails"]["replayed"], true, "{retry}");
        assert_eq!(retry["result"]["structuredContent"], first["result"]["structuredContent"]);
    }
    let get = call(topology.balancer.addr, "trails_kg_get", json!({ "node_type": "Requirement", "id": "REQ-0" }), None);
    assert_eq!(get.await["result"]["structuredContent"]["fields"]["title"], "Hardware keys", "the retries ran nothing");
    // Other arguments under the key are refused on any replica.
    let other = json!({ "req_id": "REQ-0", "title": "Magic links" });
    let reused = call(topology.replicas[2].addr, "requirements_update", other, Some("k-1")).await;
    let refusal = &reused["error"]["data"]["fields"][0];
    assert_eq!(
        (&refusal["field"], &refusal["code"]),
        (&json!("_meta/trails/idempotency_key"), &json!("unique")),
        "{reused}"
    );
}

/// A 2026-07-28 client of one replica.
async fn listener(replica: &Served) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_uri(replica.url("/mcp"));
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    ().serve_with_lifecycle(transport, lifecycle).await.expect("discover handshake")
}

/// The URIs of the next updates on `subscription` until every one of `expected` came, and
/// whether any said it lagged.
async fn heard(subscription: &mut rmcp::service::Subscription, expected: &[&str]) -> (BTreeSet<String>, bool) {
    let (mut seen, mut lagged) = (BTreeSet::new(), false);
    while !expected.iter().all(|uri| seen.contains(*uri)) {
        let next = tokio::time::timeout(Duration::from_secs(15), subscription.next()).await;
        let notification = next.unwrap_or_else(|_| panic!("{expected:?} within 15 s; heard {seen:?}")).unwrap();
        let notification = notification.expect("open");
        // rmcp keeps a notification's `_meta` beside its params.
        let meta = serde_json::to_value(rmcp::model::GetMeta::get_meta(&notification)).unwrap();
        match notification {
            ServerNotification::ResourceUpdatedNotification(update) => {
                lagged |= meta["trails"]["lagged"].as_u64().is_some_and(|n| n > 0);
                seen.insert(update.params.uri);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    (seen, lagged)
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Redis, HAProxy and Oxigraph server: `cargo xtask test` installs them and runs this"]
async fn a_listener_on_one_replica_hears_writes_through_the_others_and_redis_going_away_fails_closed() {
    let mut topology = topology("");
    let client = listener(&topology.replicas[0]).await;
    let umbrella = "trails://kg/Requirement";
    let filter = SubscriptionFilter::builder().resource_subscriptions([umbrella.to_owned()]).build();
    let mut subscription = client.peer().listen(filter).await.expect("acknowledged");

    // A write through replica 1, then one through replica 2: replica 0's listener hears both.
    for (n, replica) in topology.replicas[1..].iter().enumerate() {
        let created = call(replica.addr, "requirements_create", requirement(&format!("REQ-{n}")), None).await;
        assert!(created["result"].is_object(), "{created}");
        let (seen, lagged) = heard(&mut subscription, &[umbrella]).await;
        assert!(!lagged && seen.len() == 1, "{seen:?}");
    }

    // Redis stops: a call that needs it (a budgeted create) is refused, retryable, and runs
    // nothing; a call that does not (a read) still works.
    topology.redis.stop();
    let refused = call(topology.replicas[1].addr, "requirements_create", requirement("REQ-9"), None).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let error: Value = serde_json::from_str(refused["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!((&error["kind"], &error["retryable"]), (&json!("unavailable"), &json!(true)), "{refused}");
    // A keyed call too: its key cannot be claimed, so it does not run.
    let retitle = json!({ "req_id": "REQ-0", "title": "Magic links" });
    let keyed = call(topology.replicas[2].addr, "requirements_update", retitle, Some("k-9")).await;
    let error: Value =
        serde_json::from_str(keyed["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{keyed}")))
            .unwrap();
    assert_eq!((&error["kind"], &error["retryable"]), (&json!("unavailable"), &json!(true)), "{keyed}");
    let read =
        call(topology.replicas[1].addr, "trails_kg_get", json!({ "node_type": "Requirement", "id": "REQ-9" }), None);
    assert!(read.await["result"]["structuredContent"]["found"] != true, "the refused create wrote nothing");

    // Redis comes back empty: calls go on, and the listener is told it may have missed changes.
    topology.redis.restart();
    let mut created = Value::Null;
    for _ in 0..50 {
        created = call(topology.replicas[2].addr, "requirements_create", requirement("REQ-10"), None).await;
        if created["result"]["isError"] != true {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(created["result"].is_object() && created["result"]["isError"] != true, "{created}");
    let (_, lagged) = heard(&mut subscription, &[umbrella]).await;
    let (_, lagged_later) = heard(&mut subscription, &[umbrella]).await;
    assert!(lagged || lagged_later, "the updates after Redis came back say changes may have been missed");
    drop(subscription);
    let _ = client.cancel().await;
}

#[test]
#[ignore = "needs Redis: `cargo xtask test` installs it and runs this"]
fn a_replica_that_cannot_reach_redis_refuses_to_start() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let config = format!("[coordination]\nurl = \"redis://:secret@{closed}\"\ntimeout_ms = 300\n");
    let dir = tempfile::tempdir().unwrap();
    let output = crate::fixture().config(config).cli(dir.path(), &["serve", "--http", "127.0.0.1:0"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("[coordination]") && stderr.contains("unreachable"), "{stderr}");
    assert!(!stderr.contains("secret"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Redis, HAProxy and Oxigraph server: `cargo xtask test` installs them and runs this"]
async fn a_2025_session_through_the_balancer_stays_on_its_replica() {
    // Sessions on: each lives in one replica, and the balancer is sticky on `Mcp-Session-Id`.
    let topology = topology_with(true, "");
    let client = trails_tests::client::connect(topology.balancer.addr, Some(AGENT_TOKEN)).await;
    // Round robin would send every other request to a replica that does not know the session.
    for n in 0..6 {
        let pinged = trails_tests::client::call(client.peer(), "trails_meta_ping", json!({})).await;
        assert!(pinged.is_ok(), "request {n}: {pinged:?}");
    }
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Redis, HAProxy and Oxigraph server: `cargo xtask test` installs them and runs this"]
async fn failing_open_runs_budgeted_and_keyed_calls_while_redis_is_away() {
    let mut topology = topology("fail_open = true");
    let created = call(topology.balancer.addr, "requirements_create", requirement("REQ-1"), None).await;
    assert!(created["result"].is_object() && created["result"]["isError"] != true, "{created}");
    topology.redis.stop();
    // Unmetered: more creates than the budget holds.
    for n in 2..8 {
        let created = call(topology.balancer.addr, "requirements_create", requirement(&format!("REQ-{n}")), None).await;
        assert!(created["result"]["isError"] != true && created["error"].is_null(), "{created}");
    }
    // Unkeyed: a retry runs again rather than replay (nothing could be kept).
    let retitle = json!({ "req_id": "REQ-1", "title": "Passkeys" });
    for _ in 0..2 {
        let updated = call(topology.balancer.addr, "requirements_update", retitle.clone(), Some("k-1")).await;
        assert_eq!(updated["result"]["structuredContent"]["title"], "Passkeys", "{updated}");
        assert!(updated["result"]["_meta"].is_null(), "not a replay: {updated}");
    }
}

/// POST a keyed `requirements_update` to the balancer: `None` when no JSON-RPC answer came back
/// (the replica died with the request: HAProxy says 502).
async fn try_update(addr: SocketAddr, req: &str, title: &str, key: &str) -> Option<Value> {
    let params = json!({ "name": "requirements_update", "arguments": { "req_id": req, "title": title },
                         "_meta": { "trails": { "idempotency_key": key } } });
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .bearer_auth(AGENT_TOKEN)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }))
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .ok()?;
    response.json::<Value>().await.ok()
}

/// How one keyed update ended, after retries with its key.
#[derive(Debug, PartialEq)]
enum Ended {
    /// Answered with its result (first run or replay).
    Acknowledged,
    /// Its key is held by a claim of the killed replica ("still running" until it is presumed
    /// abandoned): never acknowledged.
    Stuck,
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Redis, HAProxy and Oxigraph server: `cargo xtask test` installs them and runs this"]
async fn killing_a_replica_under_load_loses_no_acknowledged_write_and_runs_no_key_twice() {
    let mut topology = topology("");
    const WORKERS: usize = 4;
    const UPDATES: usize = 30;
    for w in 0..WORKERS {
        let created = call(topology.balancer.addr, "requirements_create", requirement(&format!("REQ-{w}")), None).await;
        assert!(created["result"]["isError"] != true && created["error"].is_null(), "{created}");
    }
    let balancer = topology.balancer.addr;
    let acknowledged = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let acknowledged = acknowledged.clone();
            tokio::spawn(async move {
                let mut ended = Vec::new();
                for i in 0..UPDATES {
                    let (req, title, key) = (format!("REQ-{w}"), format!("T-{w}-{i}"), format!("k-{w}-{i}"));
                    let mut outcome = None;
                    for _ in 0..100 {
                        let Some(answer) = try_update(balancer, &req, &title, &key).await else {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        };
                        let refusal = answer["error"]["data"]["fields"][0]["message"].as_str().unwrap_or_default();
                        if answer["result"]["structuredContent"]["title"] == title.as_str() {
                            acknowledged.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            outcome = Some(Ended::Acknowledged);
                        } else if refusal.contains("still running") {
                            outcome = Some(Ended::Stuck);
                        } else {
                            panic!("{key}: {answer}");
                        }
                        break;
                    }
                    ended.push((title, outcome.expect("an answer within 100 tries")));
                }
                ended
            })
        })
        .collect();
    // A third of the way in, one replica dies without a chance to finish anything.
    while acknowledged.load(std::sync::atomic::Ordering::Relaxed) < WORKERS * UPDATES / 3 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    topology.replicas[1].kill();
    let at_kill = acknowledged.load(std::sync::atomic::Ordering::Relaxed);
    let mut results = Vec::new();
    for worker in workers {
        results.push(worker.await.unwrap());
    }

    assert!(at_kill < WORKERS * UPDATES * 2 / 3, "the kill came while the load ran ({at_kill} acknowledged)");
    let store = topology._store.kg();
    for (w, ended) in results.iter().enumerate() {
        let acknowledged = ended.iter().filter(|(_, e)| *e == Ended::Acknowledged).count();
        let stuck = ended.len() - acknowledged;
        assert!(acknowledged >= UPDATES - 2, "worker {w}: {ended:?}");
        // Nothing acknowledged is lost: the stored title is the last acknowledged one, or a later
        // update's that ran on the killed replica without an answer.
        let get =
            call(balancer, "trails_kg_get", json!({ "node_type": "Requirement", "id": format!("REQ-{w}") }), None);
        let stored = get.await["result"]["structuredContent"]["fields"]["title"].as_str().unwrap().to_owned();
        let last = ended.iter().rposition(|(_, e)| *e == Ended::Acknowledged).unwrap();
        assert!(ended[last..].iter().any(|(title, _)| *title == stored), "worker {w}: stored {stored}, {ended:?}");
        // No key ran twice: one successful run per acknowledged key, at most one per stuck key.
        let runs = successful_updates(&store, &format!("urn:trails:kg/Requirement/REQ-{w}")).await;
        assert!((acknowledged..=acknowledged + stuck).contains(&runs), "worker {w}: {runs} runs for {ended:?}");
    }
}

/// `requirements.update` activities that succeeded and touched `iri`.
async fn successful_updates(kg: &trails::kg::Kg, iri: &str) -> usize {
    let query = "SELECT (COUNT(DISTINCT ?a) AS ?n) WHERE { GRAPH ?a { ?a ?touched ?entity ;
           <https://w3id.org/trails/capability#capability> \"requirements.update\" ;
           <https://w3id.org/trails/capability#outcome> \"success\" } }";
    let entity = trails::kg::Term::NamedNode(trails::kg::NamedNode::new(iri).unwrap());
    let rows = kg.sparql(query, &[("entity", entity)]).await.unwrap();
    match rows[0].iter().find(|(name, _)| name == "n") {
        Some((_, trails::kg::Term::Literal(count))) => count.value().parse().unwrap(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Redis, HAProxy and Oxigraph server: `cargo xtask test` installs them and runs this"]
async fn a_task_is_one_across_replicas_and_a_dead_replicas_task_fails_once_its_lease_lapses() {
    use crate::tasks::{crunch, get, lines, rpc, task_id, until};
    let (store, redis) = (OxigraphServer::start(), RedisServer::start());
    let config = replica_config(&store, &redis, false, "\n[tasks]\nlease_secs = 2");
    let runs = tempfile::tempdir().unwrap();
    let log = runs.path().join("runs");
    let mut replicas: Vec<Served> = (0..3)
        .map(|_| crate::fixture().config(config.clone()).env("TRAILS_TESTS_RUNS", log.display().to_string()).http())
        .collect();
    let addrs: Vec<SocketAddr> = replicas.iter().map(|r| r.addr).collect();
    let balancer = Balancer::start(&addrs);
    let at = |n: usize| addrs[n];

    // Made through one replica, its question read through a second, answered through a third.
    let asking = crunch(at(0), AGENT_TOKEN, json!({ "steps": 1, "step_ms": 10, "label": "across", "ask": true })).await;
    let id = task_id(&asking);
    let waiting = until(at(1), AGENT_TOKEN, &id, "input_required", Duration::from_secs(10)).await;
    assert_eq!(waiting["result"]["inputRequests"]["name"]["method"], "elicitation/create", "{waiting}");
    let answer = json!({ "action": "accept", "content": { "name": "Ada" } });
    let acked =
        rpc(at(2), AGENT_TOKEN, "tasks/update", json!({ "taskId": id, "inputResponses": { "name": answer } })).await;
    assert_eq!(acked["result"]["resultType"], "complete", "{acked}");
    let done = until(balancer.addr, AGENT_TOKEN, &id, "completed", Duration::from_secs(10)).await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "across: 1 steps, for Ada", "{done}");

    // Cancelled through another replica than the one running it: the call stops there.
    let long = crunch(at(0), AGENT_TOKEN, json!({ "steps": 1000, "step_ms": 50, "label": "far", "now": true })).await;
    let id = task_id(&long);
    let acked = rpc(at(1), AGENT_TOKEN, "tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(acked["result"]["resultType"], "complete", "{acked}");
    assert_eq!(get(at(2), AGENT_TOKEN, &id).await["result"]["status"], "cancelled");

    // The replica running a task dies: another fails it once the lease lapses; it never runs again.
    let doomed =
        crunch(at(0), AGENT_TOKEN, json!({ "steps": 1000, "step_ms": 50, "label": "doomed", "now": true })).await;
    let id = task_id(&doomed);
    until(at(1), AGENT_TOKEN, &id, "working", Duration::from_secs(5)).await;
    replicas[0].kill();
    let failed = until(at(2), AGENT_TOKEN, &id, "failed", Duration::from_secs(15)).await;
    assert_eq!(failed["result"]["error"]["code"], -32603, "{failed}");
    assert!(failed["result"]["statusMessage"].as_str().unwrap().contains("stopped before it ended"), "{failed}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(lines(&log, "doomed"), 1, "run once, by the replica that died");
    assert_eq!(lines(&log, "across"), 1);
    drop(balancer);
    drop(redis);
}
