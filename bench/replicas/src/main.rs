//! `cargo xtask replicas [--secs S] [--rounds R] [--writes W] [--parts calls,notifications]`: the example app (release build)
//! as one process and as replicas sharing Redis (`runtime/guide/09-replicas.md`), each in a process
//! of its own, loaded by `wrk` in another.
//!
//! - **Calls**, in four set-ups: one process without `[coordination]` (budgets and keys in its
//!   SQLite ledger); one replica with Redis, called directly; one behind HAProxy; three behind
//!   HAProxy. Three `tools/call`s of `requirements_search` each: unmetered and unkeyed (Redis is
//!   not asked), charged to a caller with a budget (one round trip), and with a new idempotency key
//!   per request (claim, then keep the result: two round trips). Requests/s and p50/p99 latency,
//!   medians over `--rounds` with the range, each as a ratio to the one process of the same round.
//! - **Notifications**: a `subscriptions/listen` client on replica A; `--writes` creates, one at a
//!   time, through replica B, and for comparison through A itself: from sending a create to its
//!   answer, and to the client's notification, p50/p99.
//!
//! Each replica keeps its own embedded store here (the feed carries changes whatever the store),
//! so store traffic does not blur what coordination costs. Everything shares this machine's cores
//! with the load generator: only the ratios of one run mean anything.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;
use trails_bench::load::{spread, wrk_with, Run};
use trails_bench::process::arg;
use trails_tests::servers::{Balancer, RedisServer};
use trails_tests::{Launch, Served};

const METERED_TOKEN: &str = "replicas-bench-metered";
const PROTOCOL: &str = "2025-11-25";
const SEARCH: &str = r#"{"name":"requirements_search","arguments":{"text":"audit","limit":5}"#;

fn number(name: &str, default: usize) -> usize {
    arg(name).map(|v| v.parse().unwrap_or_else(|_| panic!("{name} takes a number"))).unwrap_or(default)
}

/// What is measured: which caller, and whether each request carries a new key.
#[derive(Clone, Copy)]
enum Call {
    Plain,
    Budgeted,
    Keyed,
}

impl Call {
    const ALL: [Call; 3] = [Call::Plain, Call::Budgeted, Call::Keyed];

    fn label(self) -> &'static str {
        match self {
            Call::Plain => "unmetered, no key",
            Call::Budgeted => "budgeted",
            Call::Keyed => "new idempotency key",
        }
    }

    /// The wrk script: a fixed body, or one key per request (`init(args)`: the run's seed).
    fn script(self) -> String {
        let headers = format!(
            "wrk.method = \"POST\"\n\
             wrk.headers[\"Content-Type\"] = \"application/json\"\n\
             wrk.headers[\"Accept\"] = \"application/json, text/event-stream\"\n\
             wrk.headers[\"MCP-Protocol-Version\"] = \"{PROTOCOL}\"\n"
        );
        match self {
            Call::Plain => format!("{headers}wrk.body = [[{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{SEARCH}}}}}]]\n"),
            Call::Budgeted => format!(
                "{headers}wrk.headers[\"Authorization\"] = \"Bearer {METERED_TOKEN}\"\n\
                 wrk.body = [[{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{SEARCH}}}}}]]\n"
            ),
            Call::Keyed => {
                let keyed = SEARCH.replace('%', "%%") + r#","_meta":{"trails":{"idempotency_key":"k-%s-%d"}}}"#;
                format!(
                    "{headers}local threads = 0\n\
                     function setup(thread) threads = threads + 1; thread:set(\"tid\", threads) end\n\
                     function init(args) prefix = args[1] .. \"-\" .. tostring(tid); n = 0 end\n\
                     function request()\n  n = n + 1\n  \
                     return wrk.format(nil, nil, nil, string.format([[{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{keyed}}}]], prefix, n))\nend\n"
                )
            }
        }
    }
}

/// The set-ups compared.
#[derive(Clone, Copy, PartialEq)]
enum Setup {
    OneProcess,
    ReplicaDirect,
    OneBehindBalancer,
    ThreeBehindBalancer,
}

impl Setup {
    const ALL: [Setup; 4] =
        [Setup::OneProcess, Setup::ReplicaDirect, Setup::OneBehindBalancer, Setup::ThreeBehindBalancer];

    fn label(self) -> &'static str {
        match self {
            Setup::OneProcess => "one process, no Redis",
            Setup::ReplicaDirect => "1 replica + Redis, direct",
            Setup::OneBehindBalancer => "1 replica + Redis, HAProxy",
            Setup::ThreeBehindBalancer => "3 replicas + Redis, HAProxy",
        }
    }
}

/// The example app, next to this binary (`cargo xtask replicas` builds it).
fn app() -> Launch {
    let path = std::env::current_exe().unwrap().parent().unwrap().join("requirements");
    assert!(path.exists(), "{} not found: `cargo build --release -p requirements`", path.display());
    Launch::new(path.to_str().unwrap())
}

fn config(redis: Option<&RedisServer>) -> String {
    let coordination = redis.map(|r| format!("[coordination]\nurl = \"{}\"\n\n", r.url())).unwrap_or_default();
    format!(
        "{coordination}[http]\nsessions = false\n\n[[http.tokens]]\nname = \"metered\"\nsha256 = \"{}\"\n\
         scopes = [\"runtime\"]\nbudget = {{ tokens = 1000000000000000 }}\n",
        trails::auth::sha256_hex(METERED_TOKEN)
    )
}

/// The processes of one set-up, and where the load goes.
struct Running {
    _replicas: Vec<Served>,
    _balancer: Option<Balancer>,
    target: SocketAddr,
}

fn start(setup: Setup, redis: &RedisServer) -> Running {
    let (count, coordinated) = match setup {
        Setup::OneProcess => (1, false),
        Setup::ReplicaDirect | Setup::OneBehindBalancer => (1, true),
        Setup::ThreeBehindBalancer => (3, true),
    };
    let toml = config(coordinated.then_some(redis));
    let replicas: Vec<Served> = (0..count).map(|_| app().config(toml.clone()).http()).collect();
    let balancer = matches!(setup, Setup::OneBehindBalancer | Setup::ThreeBehindBalancer)
        .then(|| Balancer::start(&replicas.iter().map(|r| r.addr).collect::<Vec<_>>()));
    let target = balancer.as_ref().map_or(replicas[0].addr, |b| b.addr);
    Running { _replicas: replicas, _balancer: balancer, target }
}

fn scripts(dir: &Path) -> Vec<PathBuf> {
    Call::ALL
        .iter()
        .map(|call| {
            let path = dir.join(format!("{}.lua", call.label().replace([' ', ','], "-")));
            std::fs::write(&path, call.script()).unwrap();
            path
        })
        .collect()
}

fn calls(secs: usize, rounds: usize) {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let scripts = scripts(dir.path());
    // runs[setup][call]
    let mut runs: Vec<Vec<Vec<Run>>> =
        Setup::ALL.iter().map(|_| Call::ALL.iter().map(|_| Vec::new()).collect()).collect();
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..Setup::ALL.len()).collect();
        order.rotate_left(round % Setup::ALL.len());
        for s in order {
            let running = start(Setup::ALL[s], &redis);
            for (c, script) in scripts.iter().enumerate() {
                let seed = format!("{round}-{s}");
                wrk_with(running.target, script, 1, 8, 2, &[&format!("warm-{seed}")]);
                runs[s][c].push(wrk_with(running.target, script, secs, 8, 2, &[&seed]));
            }
        }
    }
    println!("\n## Calls: `requirements_search`, wrk -t2 -c8, {rounds} rounds × {secs} s, medians (range)\n");
    println!("| set-up | call | req/s | ÷ one process | p50 µs | p99 µs |");
    println!("|---|---|---:|---:|---:|---:|");
    for (c, call) in Call::ALL.iter().enumerate() {
        for (s, setup) in Setup::ALL.iter().enumerate() {
            let (rps, lo, hi) = spread(runs[s][c].iter().map(|r| r.rps));
            let ratio = spread(runs[s][c].iter().zip(&runs[0][c]).map(|(r, base)| r.rps / base.rps));
            let (p50, ..) = spread(runs[s][c].iter().map(|r| r.p50_us));
            let (p99, ..) = spread(runs[s][c].iter().map(|r| r.p99_us));
            println!(
                "| {} | {} | {rps:.0} ({lo:.0}–{hi:.0}) | {:.2}× ({:.2}–{:.2}) | {p50:.0} | {p99:.0} |",
                setup.label(),
                call.label(),
                ratio.0,
                ratio.1,
                ratio.2
            );
        }
    }
}

/// For each create through `writer`, one at a time: (its round trip, the time from sending it
/// to the notification arriving at `listener`'s client), in milliseconds.
async fn notification_latencies(listener: &Served, writer: &Served, writes: usize, first: usize) -> Vec<(f64, f64)> {
    let transport = StreamableHttpClientTransport::from_uri(listener.url("/mcp"));
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = ().serve_with_lifecycle(transport, lifecycle).await.expect("discover handshake");
    let filter = SubscriptionFilter::builder().resource_subscriptions(["trails://kg/Requirement".to_owned()]).build();
    let mut subscription = client.peer().listen(filter).await.expect("listen");
    // Arrivals are stamped as they come (a notification may arrive before the create's answer).
    let (arrived, mut arrivals) = tokio::sync::mpsc::unbounded_channel();
    let stamping = tokio::spawn(async move {
        while let Ok(Some(notification)) = subscription.next().await {
            if matches!(notification, ServerNotification::ResourceUpdatedNotification(_)) {
                let _ = arrived.send(Instant::now());
            }
        }
    });
    let mut latencies = Vec::with_capacity(writes);
    for n in first..first + writes {
        let requirement = json!({ "req_id": format!("REQ-{n}"), "title": "Audit log", "status": "proposed",
                                  "priority": 2, "tags": [] });
        let sent = Instant::now();
        let created = trails_tests::client::call_tool(writer.addr, None, "requirements_create", requirement).await;
        let answered = sent.elapsed();
        assert!(created["result"]["isError"] != true && created["error"].is_null(), "{created}");
        let at = tokio::time::timeout(Duration::from_secs(10), arrivals.recv()).await;
        let at = at.expect("a notification within 10 s").expect("the listener is open");
        latencies.push((answered.as_secs_f64() * 1e3, (at - sent).as_secs_f64() * 1e3));
    }
    stamping.abort();
    let _ = client.cancel().await;
    latencies
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn notifications(writes: usize) {
    let redis = RedisServer::start();
    let toml = config(Some(&redis));
    let (a, b) = (app().config(toml.clone()).http(), app().config(toml).http());
    // Warm both paths, then measure.
    notification_latencies(&a, &b, 20, 0).await;
    let across = notification_latencies(&a, &b, writes, 100).await;
    let local = notification_latencies(&a, &a, writes, 100 + writes).await;
    println!("\n## Notifications: {writes} creates, one at a time, each timed from when it was sent\n");
    println!("| create through | its answer p50 / p99 ms | the listener's notification p50 / p99 ms |");
    println!("|---|---:|---:|");
    for (label, latencies) in [("the listener's own replica", local), ("another replica (Redis feed)", across)] {
        let sorted = |pick: fn(&(f64, f64)) -> f64| {
            let mut values: Vec<f64> = latencies.iter().map(pick).collect();
            values.sort_by(f64::total_cmp);
            (percentile(&values, 0.5), percentile(&values, 0.99))
        };
        let ((answer50, answer99), (notified50, notified99)) = (sorted(|l| l.0), sorted(|l| l.1));
        println!("| {label} | {answer50:.2} / {answer99:.2} | {notified50:.2} / {notified99:.2} |");
    }
}

fn main() {
    let (secs, rounds, writes) = (number("--secs", 5), number("--rounds", 3), number("--writes", 200));
    let parts = arg("--parts").unwrap_or_else(|| "calls,notifications".into());
    if parts.split(',').any(|p| p == "calls") {
        calls(secs, rounds);
    }
    if parts.split(',').any(|p| p == "notifications") {
        tokio::runtime::Runtime::new().unwrap().block_on(notifications(writes));
    }
}
