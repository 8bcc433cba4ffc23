//! `cargo run --release -p trails-bench --bin mcp-bench`: tools/list and tools/call over
//! Streamable HTTP for 100 tools, Trails against an equivalent rmcp `#[tool_router]` server
//! measured in the same run, plus start-up time to the first response with 1000 tools.
//!
//! Both servers run in this process on loopback, stateless JSON mode, same tokio runtime; the
//! load generator shares the machine, so only the ratios are meaningful.

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use trails::{Config, Settings};
use trails_bench::rmcp_app::Baseline;

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bench.tool42","arguments":{"query":"hello world","limit":10,"order":"asc"}}}"#;
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

async fn start_trails() -> SocketAddr {
    trails_bench::trails_app::link();
    let config = Config::parse("[http]\nsessions = false").unwrap();
    let settings = Settings::resolve(config, &|_| None).unwrap();
    let server = trails::App::new().build(settings).expect("trails app builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = server.router(addr);
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

async fn start_rmcp() -> SocketAddr {
    // The router is built once; the factory clones it, as an rmcp app would.
    let baseline = Baseline::new();
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false).with_json_response(true);
    let service =
        StreamableHttpService::new(move || Ok(baseline.clone()), Arc::new(LocalSessionManager::default()), config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, axum::Router::new().route_service("/mcp", service)).await });
    addr
}

async fn post(client: &reqwest::Client, addr: SocketAddr, body: &'static str) -> Result<usize, String> {
    let response = client
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    // Raw bytes: decoding 90 KB of text per response would make the load generator, not the
    // servers, the bottleneck.
    let body = response.bytes().await.map_err(|e| e.to_string())?;
    if status.is_success() && body.windows(8).any(|w| w == b"\"result\"") {
        Ok(body.len())
    } else {
        Err(format!("{status}: {}", String::from_utf8_lossy(&body)))
    }
}

struct Measurement {
    throughput: f64,
    p50_us: f64,
    p99_us: f64,
}

async fn measure(addr: SocketAddr, body: &'static str, requests: usize, concurrency: usize) -> Measurement {
    let client = reqwest::Client::builder().pool_max_idle_per_host(concurrency).build().unwrap();
    for _ in 0..100 {
        post(&client, addr, body).await.expect("warm-up request succeeds");
    }
    let started = Instant::now();
    let per_worker = requests / concurrency;
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(per_worker);
                for _ in 0..per_worker {
                    let t = Instant::now();
                    post(&client, addr, body).await.expect("request succeeds");
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for worker in workers {
        latencies.extend(worker.await.unwrap());
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)].as_secs_f64() * 1e6;
    Measurement { throughput: latencies.len() as f64 / elapsed.as_secs_f64(), p50_us: pct(0.50), p99_us: pct(0.99) }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values[values.len() / 2]
}

/// Spawn `command`, then time until an `initialize` POST gets its answer.
fn startup(mut command: Command, addr: SocketAddr, runtime: &tokio::runtime::Handle) -> Duration {
    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn start-up binary");
    let elapsed = runtime.block_on(async {
        loop {
            if post(&client, addr, INITIALIZE).await.is_ok() {
                break started.elapsed();
            }
            assert!(started.elapsed() < Duration::from_secs(30), "server did not answer");
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
    });
    let _ = child.kill();
    let _ = child.wait();
    elapsed
}

fn free_port() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

fn main() {
    let requests = arg("--requests", 4000);
    let concurrency = arg("--concurrency", 8);
    let rounds = arg("--rounds", 3);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (trails_addr, rmcp_addr) = runtime.block_on(async { (start_trails().await, start_rmcp().await) });

    println!("# Trails vs rmcp #[tool_router], 100 tools, Streamable HTTP (stateless JSON), loopback");
    println!("requests per measurement: {requests}, concurrency: {concurrency}, rounds: {rounds} (median reported)\n");
    println!("| operation | server | req/s | p50 µs | p99 µs | ratio (Trails / rmcp req/s) |");
    println!("|---|---|---:|---:|---:|---:|");
    for (label, body) in [("tools/list", LIST), ("tools/call", CALL)] {
        let mut trails = Vec::new();
        let mut rmcp = Vec::new();
        for round in 0..rounds {
            // Alternate which server goes first so warm caches do not favour one.
            if round % 2 == 0 {
                trails.push(runtime.block_on(measure(trails_addr, body, requests, concurrency)));
                rmcp.push(runtime.block_on(measure(rmcp_addr, body, requests, concurrency)));
            } else {
                rmcp.push(runtime.block_on(measure(rmcp_addr, body, requests, concurrency)));
                trails.push(runtime.block_on(measure(trails_addr, body, requests, concurrency)));
            }
        }
        let summary = |runs: &[Measurement]| {
            (
                median(runs.iter().map(|m| m.throughput).collect()),
                median(runs.iter().map(|m| m.p50_us).collect()),
                median(runs.iter().map(|m| m.p99_us).collect()),
            )
        };
        let (t_rps, t_p50, t_p99) = summary(&trails);
        let (r_rps, r_p50, r_p99) = summary(&rmcp);
        println!("| {label} | rmcp | {r_rps:.0} | {r_p50:.0} | {r_p99:.0} | |");
        println!("| {label} | Trails | {t_rps:.0} | {t_p50:.0} | {t_p99:.0} | **{:.2}×** |", t_rps / r_rps);
    }

    let dir = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let samples = arg("--startup-samples", 9);
    let mut trails_ms = Vec::new();
    let mut rmcp_ms = Vec::new();
    for _ in 0..samples {
        let addr = free_port();
        let mut command = Command::new(dir.join("startup-trails"));
        command.args(["serve", "--http", &addr.to_string()]).env("TRAILS_LOG", "error");
        trails_ms.push(startup(command, addr, runtime.handle()).as_secs_f64() * 1e3);
        let addr = free_port();
        let mut command = Command::new(dir.join("startup-rmcp"));
        command.arg(addr.to_string());
        rmcp_ms.push(startup(command, addr, runtime.handle()).as_secs_f64() * 1e3);
    }
    let (t, r) = (median(trails_ms), median(rmcp_ms));
    println!("\n| start-up to first response (process spawn → `initialize` answered) | median ms |");
    println!("|---|---:|");
    println!("| Trails, 1100 capabilities (1000 + the 100 above) | {t:.1} |");
    println!("| rmcp `#[tool_router]`, 1000 tools | {r:.1} |");
    println!("| ratio (rmcp / Trails) | **{:.2}×** |", r / t);
}
