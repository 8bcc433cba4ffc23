//! `soak`: the example app under hostile and careless load for a while, then idle; reports what
//! it answered and what it held, and fails when memory or throughput does not hold up. CI runs a
//! short one (`.ci/run`); run a long one before changing the HTTP layer, the store or the call
//! path. The guide (`runtime/guide/04-serving.md`, "Limits and timeouts") has the last figures:
//!
//! ```text
//! cargo xtask soak --secs 1800     # builds the example and this in release mode, then runs it
//! ```
//!
//! The server is the example app's own binary (`requirements serve --http`, found next to this
//! one or given with `--server PATH`) in its own process, on a fresh store. At the same time:
//!
//! - 64 workers, one keep-alive connection each, send a mix of valid calls (search, list,
//!   updates of 100 seeded requirements, KG reads) and invalid ones (bad arguments, unknown
//!   tools with 10 kB names, malformed JSON, batches, bad tokens, foreign hosts, oversized
//!   bodies);
//! - 200 slowloris connections trickle a request head one byte a second (reconnecting when cut);
//! - 100 connections connect and send nothing (reconnecting when cut);
//! - 4 flooders open MCP sessions as fast as they can and never finish initialising them.
//!
//! Before the load, `--warmup` seconds (default 30) of the workers' mix alone bring the store to
//! the content the load leaves (requirements updated, a full provenance log); the RSS after the
//! 30 quiet seconds that follow is the baseline.
//!
//! Every second it samples the server's RSS and open file descriptors, every 10 s the provenance
//! activities the store holds (`trails://stats`). After the load it goes on sampling for
//! `--settle` seconds (default 60: past the header and session-init timeouts, and the server's
//! 10 s quiet checks that give memory back), and reports when both came back.
//!
//! It fails (exit 1), printing a table of each measure and its bound, if:
//!
//! - a valid request got anything but a 200 without an error, any request a 5xx other than the
//!   documented 503 refusals, an internal error or a lost connection, or the server died;
//! - peak RSS passed `--max-peak` (default 4) times the baseline;
//! - RSS still climbed over the last half of the load: from each third of that half to the next,
//!   the median RSS rose by more than `--max-slope` (default 2) percent of the baseline a minute
//!   (a leak climbs all along; RSS reaching its high-water mark late is one step, in one third),
//!   or the load was too short to sample each third;
//! - the requests answered a second in the last minute fell below `--min-throughput` (default
//!   0.9) times the first minute's (halves of the load when it is shorter than two minutes);
//! - the store held more provenance activities than `keep` plus the calls in flight (64) at any
//!   sample;
//! - within `--settle` open file descriptors did not come back to where they were before the load
//!   or RSS to within a fifth of the baseline.
//!
//! `--query-url URL` (and `--update-url URL`) serve the knowledge graph from a remote store
//! instead of the embedded one, to hold the server's side of that to the same bounds.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use trails_bench::process::{arg, sample};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const WORKERS: usize = 64;
const SLOWLORIS: usize = 200;
const SILENT: usize = 100;
const FLOODERS: usize = 4;
const SEEDED: usize = 100;
/// `[kg] provenance_keep` of the server under load.
const KEEP: usize = 1000;
/// How far past `keep` the log may run during the load: the calls in flight (each call retires
/// the oldest as it records its own).
const IN_FLIGHT: u64 = WORKERS as u64;

/// The server process, killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let binary = arg("--server")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::current_exe().unwrap().parent().unwrap().join("requirements"));
    assert!(
        binary.exists(),
        "{} not found: build it (cargo build --release -p requirements) or pass --server",
        binary.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let config = dir.path().join("trails.toml");
    // A bounded provenance log: the valid writes would otherwise grow the store by design.
    std::fs::write(
        &config,
        format!(
            "[mcp]\nscopes = [\"builder\"]\n[kg]\nprovenance_keep = {KEEP}\n[[http.tokens]]\nname = \"soak\"\nsha256 = \"{}\"\nscopes = [\"builder\"]\n",
            trails::auth::sha256_hex("soak-token")
        ),
    )
    .unwrap();
    let stderr = std::fs::File::create(dir.path().join("stderr.log")).unwrap();
    let mut command = Command::new(&binary);
    command
        .args(["serve", "--http", &addr.to_string(), "--config"])
        .arg(&config)
        .env("TRAILS_KG_PATH", dir.path().join("data"))
        .env_remove("TRAILS_LOG");
    // `--query-url URL [--update-url URL]`: a remote store (an Oxigraph server, say) instead of
    // the embedded one; it should start empty.
    if let Some(query) = arg("--query-url") {
        command.env("TRAILS_KG_UPDATE_URL", arg("--update-url").unwrap_or_else(|| query.clone()));
        command.env("TRAILS_KG_QUERY_URL", query);
    }
    let child = command.stdout(Stdio::null()).stderr(stderr).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !trails_bench::process::listens(addr) {
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server { child, addr, _dir: dir }
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"soak","version":"0"}}"#;

/// One request of the mix: (kind, method header, name header, body, extra headers).
struct Request {
    kind: &'static str,
    method: &'static str,
    name: String,
    body: Vec<u8>,
    token: Option<&'static str>,
    host: Option<&'static str>,
}

fn call(kind: &'static str, tool: &str, arguments: &str) -> Request {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments},{META}}}}}"#
    );
    Request { kind, method: "tools/call", name: tool.to_owned(), body: body.into_bytes(), token: None, host: None }
}

/// The `n`th request of a worker's mix.
fn request(n: u64) -> Request {
    let pick = n % 200;
    let id = n % SEEDED as u64;
    match pick {
        0..=59 => call("valid: requirements.search", "requirements_search", r#"{"text":"soak","limit":20}"#),
        60..=79 => Request {
            kind: "valid: tools/list",
            method: "tools/list",
            name: String::new(),
            body: format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#).into_bytes(),
            token: None,
            host: None,
        },
        80..=99 => {
            let status = ["proposed", "accepted", "rejected"][(n / 7 % 3) as usize];
            call(
                "valid: requirements.update",
                "requirements_update",
                &format!(r#"{{"req_id":"REQ-{id}","status":"{status}"}}"#),
            )
        }
        100..=109 => call("valid: trails.kg.list", "trails_kg_list", r#"{"node_type":"Requirement","limit":50}"#),
        110..=119 => {
            call("valid: trails.kg.get", "trails_kg_get", &format!(r#"{{"node_type":"Requirement","id":"REQ-{id}"}}"#))
        }
        120..=139 => call(
            "invalid: bad arguments",
            "requirements_create",
            r#"{"req_id":"R1","title":"x","status":"draft","priority":9,"tags":[],"extra":"y"}"#,
        ),
        // The same name in `Mcp-Name` (so the request reaches the tool lookup; 10 kB keeps the
        // head under its 16 KiB bound) and in the body.
        140..=149 => call("invalid: unknown 10 kB tool name", &"x".repeat(10_000), "{}"),
        150..=159 => Request {
            kind: "invalid: malformed JSON",
            method: "tools/call",
            name: "x".into(),
            body: br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"#.to_vec(),
            token: None,
            host: None,
        },
        160..=169 => Request {
            kind: "invalid: batch",
            method: "tools/list",
            name: String::new(),
            body: br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#
                .to_vec(),
            token: None,
            host: None,
        },
        170..=179 => {
            let mut request = call("invalid: bad token", "requirements_search", "{}");
            request.token = Some("not-the-token");
            request
        }
        180..=189 => {
            let mut request = call("invalid: foreign Host", "requirements_search", "{}");
            request.host = Some("evil.example");
            request
        }
        190..=198 => {
            let mut request = call("valid: builder stats", "trails_meta_requirements_stats", "{}");
            request.token = Some("soak-token");
            request
        }
        _ if n % 2000 == 199 => {
            let mut request = call("invalid: 5 MB body", "requirements_search", r#"{"text":"x"}"#);
            request.body.resize(5 * 1024 * 1024, b' ');
            request
        }
        _ => call("valid: requirements.search", "requirements_search", r#"{"text":"REQ","limit":5}"#),
    }
}

/// Outcomes counted by (request kind, what came back).
type Tally = Arc<Mutex<BTreeMap<(String, String), u64>>>;

/// The JSON-RPC message of an answer, whether it came as JSON or as a `text/event-stream`
/// (its last `data:` line).
fn message_of(body: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(body);
    let data = text.lines().filter_map(|line| line.strip_prefix("data:")).rfind(|data| !data.trim().is_empty());
    serde_json::from_str(data.unwrap_or(&text).trim()).unwrap_or_default()
}

/// What came back: the status, and the JSON-RPC error code or `isError` of the message.
fn outcome(status: u16, body: &[u8]) -> String {
    let message = message_of(body);
    match (message["error"]["code"].as_i64(), message["result"]["isError"].as_bool()) {
        (Some(code), _) => format!("{status} error {code}"),
        (None, Some(true)) => format!("{status} isError"),
        _ => format!("{status}"),
    }
}

/// Whether an answer to a request of `kind` shows the server failing: anything but a plain 200
/// for a valid request; a 5xx other than the documented 503 refusals, an internal error
/// (`-32603`) or a lost connection for any request.
fn is_failure(kind: &str, answer: &str) -> bool {
    // The server answers 413 as soon as the body passes the bound and closes the connection
    // without reading the rest: a client still sending may see the reset before the answer.
    if kind.contains("5 MB body") && answer == "connection closed" {
        return false;
    }
    let valid = kind.starts_with("valid") || kind == "seed";
    (valid && answer != "200")
        || (answer.starts_with('5') && !answer.starts_with("503"))
        || answer.contains("-32603")
        || answer.starts_with("connection")
}

async fn worker(addr: SocketAddr, start: u64, stop: Arc<AtomicBool>, tally: Tally, sent: Arc<AtomicU64>) {
    let client = reqwest::Client::builder().pool_max_idle_per_host(1).timeout(Duration::from_secs(30)).build().unwrap();
    let mut n = start;
    // `--only TEXT`: just the requests whose kind contains it (to find what holds memory).
    let only = arg("--only");
    while !stop.load(Ordering::Relaxed) {
        let r = request(n);
        n += 1;
        if only.as_deref().is_some_and(|only| !r.kind.contains(only)) {
            continue;
        }
        let mut builder = client
            .post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", r.method)
            .body(r.body);
        if !r.name.is_empty() {
            builder = builder.header("mcp-name", r.name);
        }
        if let Some(token) = r.token {
            builder = builder.bearer_auth(token);
        }
        if let Some(host) = r.host {
            builder = builder.header("host", host);
        }
        let key = match builder.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                let body = response.bytes().await.unwrap_or_default();
                outcome(status, &body)
            }
            Err(error) if error.is_connect() => "connection refused".into(),
            Err(_) => "connection closed".into(),
        };
        sent.fetch_add(1, Ordering::Relaxed);
        *tally.lock().unwrap().entry((r.kind.to_owned(), key)).or_default() += 1;
    }
}

/// A connection that sends its head one byte a second (or nothing at all) until cut.
async fn trickler(addr: SocketAddr, silent: bool, stop: Arc<AtomicBool>, cuts: Arc<AtomicU64>) {
    let head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Padding: ";
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut stream) = TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let mut at = 0;
        let mut buffer = [0u8; 512];
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            if !silent {
                let byte = head.get(at).copied().unwrap_or(b'a');
                at += 1;
                if stream.write_all(&[byte]).await.is_err() {
                    break;
                }
            }
            match tokio::time::timeout(Duration::from_secs(1), stream.read(&mut buffer)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(_)) => break, // an answer (408/431) then close
                Err(_) => {}        // still open
            }
        }
        cuts.fetch_add(1, Ordering::Relaxed);
    }
}

/// Opens sessions (2025-11-25 `initialize`) and never sends `notifications/initialized`.
async fn flooder(addr: SocketAddr, stop: Arc<AtomicBool>, tally: Tally) {
    let client = reqwest::Client::new();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"0"}}}"#;
    while !stop.load(Ordering::Relaxed) {
        let answer = client
            .post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .send()
            .await;
        let key = match answer {
            Ok(response) => response.status().as_u16().to_string(),
            Err(_) => "connection error".into(),
        };
        *tally.lock().unwrap().entry(("session flood: initialize".into(), key)).or_default() += 1;
    }
}

async fn seed(addr: SocketAddr) {
    let client = reqwest::Client::new();
    for n in 0..SEEDED {
        let r = call(
            "seed",
            "requirements_create",
            &format!(
                r#"{{"req_id":"REQ-{n}","title":"soak requirement {n}","status":"proposed","priority":3,"tags":["soak"]}}"#
            ),
        );
        let response = client
            .post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "requirements_create")
            .body(r.body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body = response.bytes().await.unwrap_or_default();
        assert_eq!(outcome(status, &body), "200", "seeding failed: {}", String::from_utf8_lossy(&body));
    }
}

/// `trails://stats` (instances, provenance kept and pruned): what the store holds (null when it
/// cannot be read).
async fn store_stats(addr: SocketAddr) -> serde_json::Value {
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"uri":"trails://stats",{META}}}}}"#);
    let answer = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "resources/read")
        .header("mcp-name", "trails://stats")
        // Provenance activities are shown to callers with a token.
        .bearer_auth("soak-token")
        .body(body)
        .timeout(Duration::from_secs(5))
        .send()
        .await;
    let Ok(answer) = answer else { return serde_json::Value::Null };
    let message = message_of(&answer.bytes().await.unwrap_or_default());
    let stats = message["result"]["contents"][0]["text"].as_str().unwrap_or_default();
    let stats: serde_json::Value = serde_json::from_str(stats).unwrap_or_default();
    serde_json::json!({ "instances": stats["instances"], "provenance": stats["provenance"] })
}

/// What a load phase left behind: a sample a second (seconds into the load, RSS in KiB, open
/// fds, requests answered so far), the provenance activities the store held every 10 s, and how
/// long it ran.
struct Phase {
    samples: Vec<(f64, u64, usize, u64)>,
    activities: Vec<u64>,
    elapsed: f64,
}

impl Phase {
    fn peak(&self) -> (u64, usize) {
        self.samples.iter().fold((0, 0), |(rss, fds), s| (rss.max(s.1), fds.max(s.2)))
    }

    /// Requests answered a second over the first and over the last `window` seconds, each
    /// measured between the samples that bound it (samples drift late of whole seconds).
    fn throughput(&self, window: f64) -> (f64, f64) {
        let at_or_before = |t: f64| self.samples.iter().rev().find(|s| s.0 <= t).map_or((0.0, 0), |s| (s.0, s.3));
        let rate = |(t0, n0): (f64, u64), (t1, n1): (f64, u64)| {
            if t1 > t0 {
                (n1 - n0) as f64 / (t1 - t0)
            } else {
                0.0
            }
        };
        let end = self.samples.last().map_or((0.0, 0), |s| (s.0, s.3));
        (rate((0.0, 0), at_or_before(window)), rate(at_or_before(end.0 - window), end))
    }

    /// How fast RSS still climbed over the last half of the load, in KiB a minute: that half cut
    /// in thirds, the rise from each third's median RSS to the next's, the smaller of the two.
    /// A leak climbs all along and raises both. A one-off rise of S (RSS reaching the allocator's
    /// high-water mark late, 10-15 MiB two or three minutes in on a slower machine) reads 0 as a
    /// step, and at most S / (2 × a third) however it falls; a least-squares slope read such a
    /// step in the middle of the half as S / (two thirds). None when a third holds no sample.
    fn late_climb(&self) -> Option<f64> {
        let end = self.samples.last()?.0;
        let third = end / 6.0;
        let mut parts: [Vec<u64>; 3] = Default::default();
        for s in self.samples.iter().filter(|s| s.0 >= end / 2.0) {
            parts[(((s.0 - end / 2.0) / third) as usize).min(2)].push(s.1);
        }
        let mut medians = [0.0; 3];
        for (part, median) in parts.iter_mut().zip(&mut medians) {
            part.sort_unstable();
            *median = *part.get(part.len() / 2)? as f64;
        }
        Some((medians[1] - medians[0]).min(medians[2] - medians[1]) / (third / 60.0))
    }
}

/// `secs` of load (the parts `parts` names) against `pid` at `addr`; samples every second and
/// prints a line a minute.
async fn load(addr: SocketAddr, pid: u32, secs: u64, parts: &str, counts: &Counts) -> Phase {
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    let (workers, slow, flood) =
        (parts.contains("workers") as usize, parts.contains("slow") as usize, parts.contains("flood") as usize);
    for w in 0..WORKERS * workers {
        let (stop, tally, sent) = (stop.clone(), counts.tally.clone(), counts.sent.clone());
        tasks.push(tokio::spawn(worker(addr, w as u64 * 7919, stop, tally, sent)));
    }
    for i in 0..(SLOWLORIS + SILENT) * slow {
        tasks.push(tokio::spawn(trickler(addr, i >= SLOWLORIS, stop.clone(), counts.cuts.clone())));
    }
    for _ in 0..FLOODERS * flood {
        tasks.push(tokio::spawn(flooder(addr, stop.clone(), counts.tally.clone())));
    }
    let began = Instant::now();
    let mut samples = Vec::new();
    let mut activities = Vec::new();
    let mut next_line = 60;
    while began.elapsed() < Duration::from_secs(secs) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let (rss, fds) = sample(pid);
        let (at, answered) = (began.elapsed().as_secs_f64(), counts.sent.load(Ordering::Relaxed));
        samples.push((at, rss, fds, answered));
        if samples.len() % 10 == 0 {
            activities.extend(store_stats(addr).await["provenance"]["activities"].as_u64());
        }
        if at >= next_line as f64 {
            next_line += 60;
            println!("  {:>4.0} s: {answered} requests, RSS {rss} KiB, {fds} fds", at);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let elapsed = began.elapsed().as_secs_f64();
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    }
    Phase { samples, activities, elapsed }
}

/// What every phase adds to.
#[derive(Default)]
struct Counts {
    tally: Tally,
    sent: Arc<AtomicU64>,
    cuts: Arc<AtomicU64>,
}

/// A bound the run is held to, from the command line or its default.
fn bound(name: &str, default: f64) -> f64 {
    arg(name).and_then(|s| s.parse().ok()).unwrap_or(default)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let secs: u64 = arg("--secs").and_then(|s| s.parse().ok()).unwrap_or(600);
    let warmup: u64 = arg("--warmup").and_then(|s| s.parse().ok()).unwrap_or(30);
    let settle: u64 = arg("--settle").and_then(|s| s.parse().ok()).unwrap_or(60);
    // `--parts workers,slow,flood` (default all): to find which load holds what.
    let parts = arg("--parts").unwrap_or_else(|| "workers,slow,flood".into());
    // What the run is held to (`runtime/guide/08-benchmarks.md`).
    let max_peak = bound("--max-peak", 4.0);
    let max_slope = bound("--max-slope", 2.0);
    let min_throughput = bound("--min-throughput", 0.9);
    let server = start_server();
    let pid = server.child.id();
    seed(server.addr).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let start = sample(pid);
    // The baseline: the same store content the load leaves (seeded requirements updated, a full
    // provenance log), reached by the workers' mix alone (no slow connections, no session flood),
    // then quiet. Memory after the load is compared with this, not with the empty start.
    println!("soak: {warmup} s of warm-up (the workers' mix) against pid {pid} at {}", server.addr);
    let warmup_counts = Counts::default();
    load(server.addr, pid, warmup, "workers", &warmup_counts).await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    let baseline = sample(pid);
    let warmup_failures = failures(&warmup_counts.tally.lock().unwrap());
    println!("soak: {secs} s of load ({parts}); start RSS {} KiB, baseline {} KiB", start.0, baseline.0);
    let counts = Counts::default();
    let phase = load(server.addr, pid, secs, &parts, &counts).await;
    let (peak, elapsed) = (phase.peak(), phase.elapsed);
    // Back to the baseline (same store content), give or take a fifth (allocator pages go back
    // whole, so the figure never matches to the byte), within `settle` seconds: the server gives
    // memory back once quiet, on its own 10 s ticks, after the header and session-init timeouts.
    let back_to = baseline.0 + baseline.0 / 5;
    // File descriptors back to where they were before the load: the start's, or with a remote
    // store the baseline's (its client keeps idle connections to the store for a while).
    let fds_before = if arg("--query-url").is_some() { start.1.max(baseline.1) } else { start.1 };
    let settling = Instant::now();
    let mut end = sample(pid);
    // RSS every second of the whole window (to see how memory comes back, and whether it stays
    // back), judged at the first second it is back.
    let mut after = vec![end.0];
    let mut settled = None;
    loop {
        if settled.is_none() && end.0 <= back_to && end.1 <= fds_before + 2 {
            settled = Some((settling.elapsed().as_secs(), end));
        }
        if settling.elapsed() >= Duration::from_secs(settle) {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        end = sample(pid);
        after.push(end.0);
    }
    let (settled, end) = settled.unwrap_or((settling.elapsed().as_secs(), end));
    let stats = store_stats(server.addr).await;
    let mut server = server;
    let alive = server.child.try_wait().ok().flatten().is_none();
    let log_bytes = std::fs::metadata(server._dir.path().join("stderr.log")).map(|m| m.len()).unwrap_or(0);
    // Kept for reading after the run (the server's directory goes with it).
    let kept_log = std::env::temp_dir().join("trails-soak-server.log");
    let _ = std::fs::copy(server._dir.path().join("stderr.log"), &kept_log);

    let total = counts.sent.load(Ordering::Relaxed);
    println!(
        "\n{total} requests in {elapsed:.0} s ({:.0}/s) from {WORKERS} workers; {} slow/silent connections cut",
        total as f64 / elapsed,
        counts.cuts.load(Ordering::Relaxed)
    );
    println!("\n| request | answer | count |\n|---|---|---|");
    let tally = counts.tally.lock().unwrap();
    for ((kind, answer), count) in tally.iter() {
        println!("| {kind} | {answer} | {count}{} |", if is_failure(kind, answer) { " ✗" } else { "" });
    }
    let failures = failures(&tally) + warmup_failures;
    println!("\n| | RSS (KiB) | open fds |\n|---|---|---|");
    println!("| start (seeded) | {} | {} |", start.0, start.1);
    println!("| baseline ({warmup} s of the workers' mix, then 30 s quiet) | {} | {} |", baseline.0, baseline.1);
    println!("| peak | {} | {} |", peak.0, peak.1);
    println!("| end ({settled} s after the load) | {} | {} |", end.0, end.1);
    let every_ten: Vec<String> = after.iter().step_by(10).map(u64::to_string).collect();
    println!("\nRSS (KiB) after the load, every 10 s: {}", every_ten.join(" / "));
    // About 30 figures whatever the length: every 10 s of a short run, every minute of 30.
    let step = (elapsed / 30.0).max(10.0).round();
    let during: Vec<String> = (1..=(elapsed / step) as usize)
        .filter_map(|m| phase.samples.iter().find(|s| s.0 >= step * m as f64))
        .map(|s| s.1.to_string())
        .collect();
    println!("\nRSS (KiB) every {step:.0} s of the load: {}", during.join(" / "));
    // `--samples FILE`: every second of the load as CSV (seconds, RSS KiB, fds, requests).
    if let Some(path) = arg("--samples") {
        let rows: String = phase.samples.iter().map(|s| format!("{:.1},{},{},{}\n", s.0, s.1, s.2, s.3)).collect();
        std::fs::write(&path, format!("secs,rss_kib,fds,requests\n{rows}")).unwrap();
    }
    println!(
        "server log: {log_bytes} bytes (copied to {}); trails://stats after the load: {stats}",
        kept_log.display()
    );

    // The held-to measures, each with its verdict.
    let baseline_kib = baseline.0.max(1) as f64;
    let peak_ratio = peak.0 as f64 / baseline_kib;
    // KiB a minute, and as a percentage of the baseline.
    let climb = phase.late_climb().map(|kib| (kib, 100.0 * kib / baseline_kib));
    let window = (elapsed / 2.0).min(60.0);
    let (first, last) = phase.throughput(window);
    let throughput_ratio = if first > 0.0 { last / first } else { 0.0 };
    let keep = KEEP as u64;
    let most_activities = phase.activities.iter().copied().max();
    let activities_ok = most_activities.is_some_and(|most| most <= keep + IN_FLIGHT);
    let checks = [
        (format!("peak RSS {peak_ratio:.2}× the baseline"), format!("≤ {max_peak}×"), peak_ratio <= max_peak),
        (
            match climb {
                Some((kib, share)) => format!(
                    "RSS climb over the last half of the load (the smaller rise between its thirds) {kib:.0} KiB/min ({share:.2}% of the baseline)"
                ),
                None => "RSS climb over the last half of the load: a third of it has no sample (too short a load)".to_owned(),
            },
            format!("≤ {max_slope}%/min"),
            climb.is_some_and(|(_, share)| share <= max_slope),
        ),
        (
            format!("requests/s, last {window:.0} s vs first: {last:.0} / {first:.0} = {throughput_ratio:.2}"),
            format!("≥ {min_throughput}"),
            throughput_ratio >= min_throughput,
        ),
        (
            format!(
                "provenance activities during the load, most sampled: {} (of {} samples)",
                most_activities.map_or("unreadable".into(), |most| most.to_string()),
                phase.activities.len()
            ),
            format!("≤ keep + the calls in flight = {}", keep + IN_FLIGHT),
            activities_ok,
        ),
        (
            format!("RSS {settled} s after the load: {} KiB ({:.2}× the baseline)", end.0, end.0 as f64 / baseline_kib),
            "≤ 1.2×".to_owned(),
            alive && end.0 > 0 && end.0 <= back_to,
        ),
        (
            format!("open fds after the load: {} (start: {}, baseline: {})", end.1, start.1, baseline.1),
            "≤ before the load + 2".to_owned(),
            alive && end.1 > 0 && end.1 <= fds_before + 2,
        ),
        (
            format!("answers that show a failure: {failures} ({warmup_failures} in the warm-up)"),
            "0".to_owned(),
            failures == 0,
        ),
        ("server alive after the load".to_owned(), "yes".to_owned(), alive),
    ];
    println!("\n| measure | bound | verdict |\n|---|---|---|");
    for (measure, bound, ok) in &checks {
        println!("| {measure} | {bound} | {} |", if *ok { "ok" } else { "**FAILED**" });
    }
    if checks.iter().any(|(_, _, ok)| !ok) {
        println!("FAILED");
        return std::process::ExitCode::FAILURE;
    }
    println!("passed");
    std::process::ExitCode::SUCCESS
}

/// How many answers in `tally` show a failure.
fn failures(tally: &BTreeMap<(String, String), u64>) -> u64 {
    tally.iter().filter(|((kind, answer), _)| is_failure(kind, answer)).map(|(_, count)| count).sum()
}
