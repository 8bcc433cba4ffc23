//! Resource subscriptions (`runtime/guide/03-knowledge-graph.md`) with rmcp's client: 2025-* sessions
//! `resources/subscribe` over Streamable HTTP (in-process server) and stdio (the fixture server
//! as a child process); 2026-07-28 clients `subscriptions/listen` over both. Umbrellas fire on
//! any change of their type, instances on theirs, `kg/types` on creates and deletes, `stats` on
//! every call; what cannot be watched is refused with a `-32602` that says why.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use rmcp::model::{
    ErrorData, ProtocolVersion, ResourceUpdatedNotificationParam, ServerNotification, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use trails::auth::sha256_hex;

const BUILDER_TOKEN: &str = "subscriptions-builder-token";
const UMBRELLA: &str = "trails://kg/Requirement";
const TYPES: &str = "trails://kg/types";
const STATS: &str = "trails://stats";

/// A client that forwards every `notifications/resources/updated` it receives.
#[derive(Clone)]
struct Watcher(mpsc::UnboundedSender<(String, Value)>);

impl ClientHandler for Watcher {
    async fn on_resource_updated(&self, params: ResourceUpdatedNotificationParam, _: NotificationContext<RoleClient>) {
        let meta = params.meta.map(|m| serde_json::to_value(m).unwrap()).unwrap_or_default();
        let _ = self.0.send((params.uri, meta));
    }
}

type Client = RunningService<RoleClient, Watcher>;
type Updates = mpsc::UnboundedReceiver<(String, Value)>;

fn data_dir() -> std::path::PathBuf {
    tempfile::Builder::new().prefix("trails-subscriptions-").tempdir().unwrap().keep()
}

async fn http_server(extra_toml: &str) -> SocketAddr {
    let toml = format!(
        "[mcp]\nscopes = [\"dev\"]\n{extra_toml}\n[[http.tokens]]\nname = \"builder\"\nsha256 = \"{}\"\nscopes = [\"builder\"]",
        sha256_hex(BUILDER_TOKEN)
    );
    let app = trails::App::new().kg(trails::kg::Kg::temporary().unwrap());
    trails_tests::in_process::serve(app, trails_tests::in_process::settings(&toml)).await.addr
}

fn http_transport(addr: SocketAddr, token: Option<&str>) -> StreamableHttpClientTransport<reqwest::Client> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    StreamableHttpClientTransport::from_config(config)
}

fn stdio_transport() -> TokioChildProcess {
    TokioChildProcess::new(crate::fixture().env("TRAILS_MCP_SCOPES", "dev").stdio_command(&data_dir())).unwrap()
}

/// A 2025-11-25 session over `transport`, and the updates it receives.
async fn session<T, E, A>(transport: T) -> (Client, Updates)
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let (sender, updates) = mpsc::unbounded_channel();
    (Watcher(sender).serve(transport).await.expect("client connects"), updates)
}

/// A 2026-07-28 (stateless, `server/discover`) client over `transport`.
async fn discovering<T, E, A>(transport: T) -> Client
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let (sender, _updates) = mpsc::unbounded_channel();
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = Watcher(sender).serve_with_lifecycle(transport, lifecycle).await.expect("discover handshake");
    assert_eq!(client.peer_info().unwrap().protocol_version, ProtocolVersion::V_2026_07_28);
    client
}

async fn call(client: &Client, tool: &str, arguments: Value) {
    trails_tests::client::call(client, tool, arguments).await.unwrap_or_else(|e| panic!("{tool}: {e:?}"));
}

async fn create(client: &Client, id: &str) {
    let requirement = json!({"req_id": id, "title": "Audit log", "status": "proposed", "priority": 2, "tags": []});
    call(client, "requirements_create", requirement).await;
}

/// `resources/subscribe` (deprecated by rmcp for 2026-07-28; what 2025-* peers use).
#[allow(deprecated)]
async fn subscribe(client: &Client, uri: &str) -> Result<(), ErrorData> {
    match client.subscribe(SubscribeRequestParams::new(uri)).await {
        Ok(()) => Ok(()),
        Err(ServiceError::McpError(error)) => Err(error),
        Err(other) => panic!("transport failure subscribing to {uri}: {other}"),
    }
}

#[allow(deprecated)]
async fn unsubscribe(client: &Client, uri: &str) {
    client.unsubscribe(UnsubscribeRequestParams::new(uri)).await.unwrap();
}

fn instance(id: &str) -> String {
    format!("{UMBRELLA}/{id}")
}

/// The URIs updated once every one of `expected` arrived, plus whatever else arrives in the next
/// quarter second (so an update that should not come has had its chance to).
async fn updated(updates: &mut Updates, expected: &[&str]) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !expected.iter().all(|uri| seen.contains(*uri)) {
        match tokio::time::timeout_at(deadline, updates.recv()).await {
            Ok(Some((uri, meta))) => {
                assert_eq!(meta, Value::Null, "nothing lagged, so no lag is reported");
                seen.insert(uri);
            }
            _ => panic!("expected updates for {expected:?}; got {seen:?}"),
        }
    }
    while let Ok(Some((uri, _))) = tokio::time::timeout(Duration::from_millis(250), updates.recv()).await {
        seen.insert(uri);
    }
    seen
}

/// The subscription criteria over one 2025-* session: what fires, what does not, and that
/// unsubscribing stops it.
async fn umbrella_instance_types_and_stats_fire_on_their_changes(client: Client, mut updates: Updates) {
    for uri in [UMBRELLA, &instance("REQ-1"), TYPES, STATS] {
        subscribe(&client, uri).await.unwrap_or_else(|e| panic!("{uri}: {e:?}"));
    }
    create(&client, "REQ-1").await;
    let seen = updated(&mut updates, &[UMBRELLA, &instance("REQ-1"), TYPES, STATS]).await;
    assert_eq!(seen.len(), 4, "{seen:?}");

    // An update fires the instance and the umbrella (and stats, for the call's provenance) but
    // not the instance counts.
    call(&client, "requirements_update", json!({"req_id": "REQ-1", "status": "accepted"})).await;
    let seen = updated(&mut updates, &[UMBRELLA, &instance("REQ-1"), STATS]).await;
    assert!(!seen.contains(TYPES), "{seen:?}");

    // Another instance: the umbrella fires, REQ-1 does not.
    create(&client, "REQ-2").await;
    let seen = updated(&mut updates, &[UMBRELLA, TYPES, STATS]).await;
    assert!(!seen.contains(&instance("REQ-1")), "{seen:?}");

    // Unsubscribed, the umbrella is quiet.
    unsubscribe(&client, UMBRELLA).await;
    create(&client, "REQ-3").await;
    let seen = updated(&mut updates, &[TYPES, STATS]).await;
    assert!(!seen.contains(UMBRELLA), "{seen:?}");
}

#[tokio::test]
async fn over_http_umbrella_instance_types_and_stats_fire_on_their_changes() {
    let addr = http_server("").await;
    let (client, updates) = session(http_transport(addr, None)).await;
    umbrella_instance_types_and_stats_fire_on_their_changes(client, updates).await;
}

#[tokio::test]
async fn over_stdio_umbrella_instance_types_and_stats_fire_on_their_changes() {
    let (client, updates) = session(stdio_transport()).await;
    umbrella_instance_types_and_stats_fire_on_their_changes(client, updates).await;
}

#[tokio::test]
async fn what_cannot_be_watched_is_refused_with_the_reason() {
    let addr = http_server("max_subscriptions = 2").await;
    let (client, _updates) = session(http_transport(addr, None)).await;

    let filtered = subscribe(&client, "trails://kg/Requirement?where=status=proposed").await.unwrap_err();
    assert_eq!(filtered.code.0, -32602);
    assert!(filtered.message.contains("subscribe to trails://kg/Requirement"), "{}", filtered.message);
    assert_eq!(filtered.data.unwrap()["subscribable"], false);
    let paged = subscribe(&client, "trails://kg/Requirement?limit=5").await.unwrap_err();
    assert!(paged.message.contains("not subscribable"), "{}", paged.message);
    let schema = subscribe(&client, "trails://schema").await.unwrap_err();
    assert!(schema.message.contains("does not change"), "{}", schema.message);
    for unknown in
        ["trails://kg/Nope", "trails://elsewhere", "trails://prov/latest", "trails://doctor", "trails://prov/latest?x"]
    {
        let error = subscribe(&client, unknown).await.unwrap_err();
        assert_eq!((error.code.0, error.data.unwrap()), (-32602, json!({ "uri": unknown })), "{unknown}");
    }
    let long = format!("{UMBRELLA}/{}", "x".repeat(3000));
    assert!(subscribe(&client, &long).await.unwrap_err().message.contains("at most 2048 bytes"));

    // The per-session cap (`[mcp] max_subscriptions`); subscribing twice to one URI is one.
    subscribe(&client, UMBRELLA).await.unwrap();
    subscribe(&client, UMBRELLA).await.unwrap();
    subscribe(&client, TYPES).await.unwrap();
    let over = subscribe(&client, STATS).await.unwrap_err();
    assert_eq!((over.code.0, over.data.unwrap()), (-32602, json!({ "max_subscriptions": 2 })));
    unsubscribe(&client, TYPES).await;
    subscribe(&client, STATS).await.expect("unsubscribing frees a place");

    // A builder may watch the latest provenance.
    let (builder, mut updates) = session(http_transport(addr, Some(BUILDER_TOKEN))).await;
    subscribe(&builder, "trails://prov/latest").await.unwrap();
    create(&builder, "REQ-9").await;
    updated(&mut updates, &["trails://prov/latest"]).await;

    // Without sessions there is nowhere to deliver to: said, not silently accepted.
    let stateless = http_server("[http]\nsessions = false").await;
    let (client, _updates) = session(http_transport(stateless, None)).await;
    let error = subscribe(&client, UMBRELLA).await.unwrap_err();
    assert!(error.message.contains("subscriptions/listen"), "{}", error.message);
}

/// The 2026-07-28 model: one `subscriptions/listen` request carries the filter and the updates.
async fn a_listen_request_receives_the_updates_of_its_filter(client: &Client, with_tools: bool) {
    let mut filter = SubscriptionFilter::builder().resource_subscriptions([UMBRELLA.to_owned(), instance("REQ-7")]);
    if with_tools {
        filter = filter.tools_list_changed();
    }
    let filter = filter.build();
    let mut subscription = client.peer().listen(filter).await.expect("acknowledged");
    assert_eq!(
        subscription.acknowledged().resource_subscriptions.as_deref(),
        Some(&[UMBRELLA.to_owned(), instance("REQ-7")][..])
    );
    create(client, "REQ-7").await;
    let mut seen = BTreeSet::new();
    while seen.len() < 2 {
        let next = tokio::time::timeout(Duration::from_secs(10), subscription.next()).await;
        match next.expect("updates arrive").unwrap().expect("still open") {
            ServerNotification::ResourceUpdatedNotification(update) => seen.insert(update.params.uri),
            other => panic!("unexpected {other:?}"),
        };
    }
    assert_eq!(seen, BTreeSet::from([UMBRELLA.to_owned(), instance("REQ-7")]));
    if with_tools {
        call(client, "trails_meta_tools_enable", json!({"tool": "requirements_search", "enabled": false})).await;
        let next = tokio::time::timeout(Duration::from_secs(10), subscription.next()).await;
        let notification = next.expect("the list change arrives").unwrap().unwrap();
        assert!(matches!(notification, ServerNotification::ToolListChangedNotification(_)), "{notification:?}");
    }
    subscription.cancel().await.unwrap();

    // URIs that cannot be watched (a page, the schema, nothing) are left out of the
    // acknowledgement — the 2026-07-28 way of saying no — and the rest is served.
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions([
            "trails://kg/Requirement?where=status=proposed",
            "trails://schema",
            "trails://kg/Nope",
            TYPES,
        ])
        .build();
    let mut partial = client.peer().listen(filter).await.expect("acknowledged");
    assert_eq!(partial.acknowledged().resource_subscriptions.as_deref(), Some(&[TYPES.to_owned()][..]));
    create(client, "REQ-8").await;
    let next = tokio::time::timeout(Duration::from_secs(10), partial.next()).await.expect("the update arrives");
    match next.unwrap().expect("still open") {
        ServerNotification::ResourceUpdatedNotification(update) => assert_eq!(update.params.uri, TYPES),
        other => panic!("unexpected {other:?}"),
    }
    partial.cancel().await.unwrap();
}

#[tokio::test]
async fn over_http_a_2026_listen_receives_resource_and_tool_list_updates() {
    let addr = http_server("").await;
    let client = discovering(http_transport(addr, Some(BUILDER_TOKEN))).await;
    a_listen_request_receives_the_updates_of_its_filter(&client, true).await;

    // A filter over the per-subscriber limit is refused, repeats counted: what one request can
    // make the server hold stays bounded.
    let filter = SubscriptionFilter::builder().resource_subscriptions(vec![STATS; 65]).build();
    let mut refused = client.peer().listen(filter).await.expect("acknowledged, then ended");
    match tokio::time::timeout(Duration::from_secs(10), refused.next()).await.expect("it ends") {
        Err(ServiceError::McpError(error)) => {
            assert_eq!((error.code.0, error.data.unwrap()), (-32602, json!({ "max_subscriptions": 64 })));
        }
        other => panic!("expected the -32602, got {other:?}"),
    }
}

/// Anonymous callers share a smaller pool of listen requests (as of sessions), so one
/// client without a token cannot take every place from those with one.
#[tokio::test]
async fn anonymous_listeners_cannot_take_every_place() {
    let addr = http_server("[http]\nmax_sessions = 4\nmax_anonymous_sessions = 1").await;
    let filter = || SubscriptionFilter::builder().resource_subscriptions([TYPES.to_owned()]).build();
    let first = discovering(http_transport(addr, None)).await;
    let mut held = first.peer().listen(filter()).await.expect("acknowledged");
    let second = discovering(http_transport(addr, None)).await;
    let mut refused = second.peer().listen(filter()).await.expect("acknowledged, then ended");
    match tokio::time::timeout(Duration::from_secs(10), refused.next()).await.expect("it ends") {
        Err(ServiceError::McpError(error)) => {
            assert_eq!((error.code.0, error.data.unwrap()), (-32603, json!({ "max_anonymous_listens": 1 })));
            assert!(error.message.contains("present a token"), "{}", error.message);
        }
        other => panic!("expected the refusal, got {other:?}"),
    }
    // A caller with a token still gets a place, and its updates.
    let builder = discovering(http_transport(addr, Some(BUILDER_TOKEN))).await;
    let mut served = builder.peer().listen(filter()).await.expect("acknowledged");
    create(&builder, "REQ-9").await;
    for subscription in [&mut served, &mut held] {
        let next =
            tokio::time::timeout(Duration::from_secs(10), subscription.next()).await.expect("the update arrives");
        assert!(matches!(next.unwrap().expect("open"), ServerNotification::ResourceUpdatedNotification(_)));
    }
}

#[tokio::test]
async fn over_stdio_a_2026_listen_receives_resource_updates() {
    let client = discovering(stdio_transport()).await;
    a_listen_request_receives_the_updates_of_its_filter(&client, false).await;
}

/// `trails-dual-server`: one process serving stdio — this test, speaking raw JSON-RPC lines,
/// so it can stop reading — and Streamable HTTP on a loopback port, for writers.
struct DualServer {
    app: trails_tests::StdioApp,
    addr: SocketAddr,
}

impl DualServer {
    fn start(toml: &str) -> DualServer {
        let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let launch = trails_tests::Launch::new(env!("CARGO_BIN_EXE_trails-dual-server")).config(toml).log(None);
        let mut app = launch.piped(&[&addr.to_string()]);
        app.wait_until_listening(addr);
        DualServer { app, addr }
    }

    fn send(&mut self, message: Value) {
        use std::io::Write;
        writeln!(self.app.stdin, "{message}").unwrap();
    }

    /// The next message on stdout.
    fn receive(&mut self) -> Value {
        let mut line = String::new();
        assert!(std::io::BufRead::read_line(&mut self.app.stdout, &mut line).unwrap() > 0, "stdout closed");
        serde_json::from_str(&line).unwrap()
    }

    /// Send request `id` and wait for its answer.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.receive();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Resident memory, in bytes.
    fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.app.child.0.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    }
}

/// What one load run measured.
#[derive(Debug)]
struct LoadRun {
    /// Writes before the measured ones (until the stdio subscriber was blocked).
    warm_up: usize,
    rss_growth: i64,
    writes_per_second: f64,
    subscriptions: Value,
}

async fn subscriptions(client: &Client) -> Value {
    let read = client.read_resource(rmcp::model::ReadResourceRequestParams::new(STATS)).await.unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else { panic!() };
    serde_json::from_str::<Value>(text).unwrap()["subscriptions"].take()
}

/// Creates `REQ-<n>` for every `n` in `ids`, by 8 concurrent writers.
async fn write_all(writer: &std::sync::Arc<Client>, ids: std::ops::Range<usize>) {
    let tasks: Vec<_> = (0..8)
        .map(|w| {
            let (writer, ids) = (writer.clone(), ids.clone());
            tokio::spawn(async move {
                for n in ids.skip(w).step_by(8) {
                    create(&writer, &format!("REQ-{n}")).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

/// The first of the measured writes (their ids do not meet the warm-up's).
const MEASURED: usize = 1_000_000;

/// Initialize the stdio session; with `subscribe`, watch the umbrella, the counts and the first
/// ten instances the measured writes create — then never read stdout again. A warm-up of HTTP
/// writes follows until the subscriber is blocked (its queue holds updates), or of `warm_up`
/// writes when given; then `writes` measured creates by 8 concurrent HTTP writers.
async fn load(server: &mut DualServer, subscribe: bool, warm_up: Option<usize>, writes: usize) -> LoadRun {
    let init =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "stalled", "version": "0"}});
    assert!(server.request(0, "initialize", init)["result"].is_object());
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    if subscribe {
        let mut uris = vec![UMBRELLA.to_owned(), TYPES.to_owned(), STATS.to_owned()];
        uris.extend((0..10).map(|n| instance(&format!("REQ-{}", MEASURED + n))));
        for (id, uri) in (1..).zip(uris) {
            let answer = server.request(id, "resources/subscribe", json!({ "uri": uri }));
            assert!(answer["result"].is_object(), "{uri}: {answer}");
        }
    }
    let (writer, _updates) = session(http_transport(server.addr, Some(BUILDER_TOKEN))).await;
    let writer = std::sync::Arc::new(writer);
    let mut written = 0;
    loop {
        let done = match warm_up {
            Some(count) => written >= count,
            None => subscriptions(&writer).await["queued"].as_u64().unwrap() > 0,
        };
        if done {
            break;
        }
        assert!(written < 5_000, "the stdio subscriber never blocked: {}", subscriptions(&writer).await);
        write_all(&writer, written..written + 100).await;
        written += 100;
    }
    let before = server.rss();
    let started = std::time::Instant::now();
    write_all(&writer, MEASURED..MEASURED + writes).await;
    let writes_per_second = writes as f64 / started.elapsed().as_secs_f64();
    let rss_growth = server.rss() as i64 - before as i64;
    LoadRun { warm_up: written, rss_growth, writes_per_second, subscriptions: subscriptions(&writer).await }
}

/// A subscriber that never reads cannot grow the server's memory or slow writers.
/// Two servers take the same writes over HTTP while a stdio client stops reading; on one it
/// has subscribed to 13 URIs (the umbrella, the counts and instances the writes create). Once
/// its pipe is full (the warm-up), 10,000 writes must grow both servers' memory alike (by the
/// data itself) and go as fast on both. Then the stalled client reads again and is told how many
/// updates it missed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_never_reads_grows_no_memory_and_slows_no_writer() {
    const WRITES: usize = 10_000;
    const QUEUE: usize = 8;
    // The writers carry a token: `trails://stats` shows subscriptions to callers with one.
    let toml = format!(
        "[kg]\nsynchronous = \"normal\"\n[mcp]\nsubscription_queue = {QUEUE}\n[[http.tokens]]\nname = \"writer\"\nsha256 = \"{}\"\nscopes = [\"runtime\"]\n",
        sha256_hex(BUILDER_TOKEN)
    );
    let mut stalled = DualServer::start(&toml);
    let stalled_run = load(&mut stalled, true, None, WRITES).await;
    let mut quiet = DualServer::start(&toml);
    let quiet_run = load(&mut quiet, false, Some(stalled_run.warm_up), WRITES).await;
    drop(quiet);
    eprintln!("unsubscribed: {quiet_run:?}\nsubscribed, never reading: {stalled_run:?}");

    let queued = stalled_run.subscriptions["queued"].as_u64().unwrap();
    assert!((1..=QUEUE as u64).contains(&queued), "{:?}", stalled_run.subscriptions);
    assert!(stalled_run.subscriptions["lagged"].as_u64().unwrap() > 0, "{:?}", stalled_run.subscriptions);
    let margin = 16 * 1024 * 1024;
    assert!(
        stalled_run.rss_growth < quiet_run.rss_growth + margin,
        "the stalled subscriber grew the server by {} bytes more than none did",
        stalled_run.rss_growth - quiet_run.rss_growth
    );
    assert!(
        stalled_run.writes_per_second > quiet_run.writes_per_second * 0.5,
        "the stalled subscriber slowed writers: {:.0}/s against {:.0}/s",
        stalled_run.writes_per_second,
        quiet_run.writes_per_second
    );

    // The stalled client reads again: past what the pipe held, an update says how many were
    // dropped before it.
    let lagged = tokio::task::spawn_blocking(move || loop {
        let message = stalled.receive();
        if let Some(lagged) = message["params"]["_meta"]["trails"]["lagged"].as_u64() {
            return lagged;
        }
    });
    let lagged = tokio::time::timeout(Duration::from_secs(60), lagged).await.expect("a lagged update arrives").unwrap();
    assert!(lagged > 0);
}

/// An abandoned 2025-* HTTP session — subscribed to `trails://stats`, which every call fires —
/// still expires once its client has sent nothing for `[http] session_idle_secs`, while another
/// client keeps writing: the notifications it is sent do not keep it open.
#[tokio::test]
async fn an_abandoned_subscribed_session_expires_although_writes_keep_firing() {
    let addr = http_server("[http]\nsession_idle_secs = 2").await;
    let (abandoned, mut updates) = session(http_transport(addr, None)).await;
    subscribe(&abandoned, STATS).await.unwrap();
    // (With a token: `trails://stats` shows subscriptions to callers with one.)
    let (writer, _) = session(http_transport(addr, Some(BUILDER_TOKEN))).await;
    create(&writer, "REQ-1").await;
    updated(&mut updates, &[STATS]).await;
    assert_eq!(subscriptions(&writer).await["subscribers"], 1);

    // The abandoned client sends nothing more; the writer writes every 200 ms.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut n = 2;
    loop {
        create(&writer, &format!("REQ-{n}")).await;
        n += 1;
        if subscriptions(&writer).await["subscribers"] == 0 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the abandoned session never expired");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(abandoned);
}

/// An app's own resources (`#[resource]`) are subscribed to like the server's, and fire when the
/// app says they changed (`Control::resource_updated`): a fixed URI, a URI a template names.
#[tokio::test(flavor = "multi_thread")]
async fn an_apps_own_resources_fire_when_the_app_says_they_changed() {
    let app = trails::App::new().kg(trails::kg::Kg::temporary().unwrap());
    let served = trails_tests::in_process::serve(app, trails_tests::in_process::settings("")).await;
    let (client, mut updates) = session(http_transport(served.addr, None)).await;
    subscribe(&client, "notes://pinned").await.unwrap();
    subscribe(&client, "reports://2026/sales").await.unwrap();
    let refused = subscribe(&client, "ops://runbook").await.unwrap_err();
    assert!(refused.message.contains("unknown resource"), "another scope's is unknown: {refused:?}");
    let control = served.server.control();
    control.resource_updated("notes://pinned");
    control.resource_updated("reports://2026/sales");
    control.resource_updated("reports://2025/sales");
    let seen = updated(&mut updates, &["notes://pinned", "reports://2026/sales"]).await;
    assert_eq!(seen, BTreeSet::from(["notes://pinned".to_owned(), "reports://2026/sales".to_owned()]));
    unsubscribe(&client, "notes://pinned").await;
    control.resource_updated("notes://pinned");
    control.resource_updated("reports://2026/sales");
    let seen = updated(&mut updates, &["reports://2026/sales"]).await;
    assert_eq!(seen, BTreeSet::from(["reports://2026/sales".to_owned()]), "unsubscribed, no update");
    client.cancel().await.unwrap();
}
