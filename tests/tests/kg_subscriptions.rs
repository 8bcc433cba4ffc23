//! Resource subscriptions (DESIGN §4.4, ADR-0060 Bundle 2) with rmcp's client: 2025-* sessions
//! `resources/subscribe` over Streamable HTTP (in-process server) and stdio (the fixture server
//! as a child process); 2026-07-28 clients `subscriptions/listen` over both. Umbrellas fire on
//! any change of their type, instances on theirs, `kg/types` on creates and deletes, `stats` on
//! every call; what cannot be watched is refused with a `-32602` that says why.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ErrorData, ProtocolVersion, ResourceUpdatedNotificationParam, ServerNotification,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use trails::{sha256_hex, Config, Settings};

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
    trails_tests::link();
    let toml = format!(
        "[mcp]\nscopes = [\"dev\"]\n{extra_toml}\n[[http.tokens]]\nname = \"builder\"\nsha256 = \"{}\"\nscopes = [\"builder\"]",
        sha256_hex(BUILDER_TOKEN)
    );
    let settings = Settings::resolve(Config::parse(&toml).unwrap(), &|_| None).unwrap();
    let kg = trails::kg::Kg::temporary().unwrap();
    let server = trails::App::new().kg(kg).build(settings).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { server.serve_http(listener).await });
    addr
}

fn http_transport(addr: SocketAddr, token: Option<&str>) -> StreamableHttpClientTransport<reqwest::Client> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    StreamableHttpClientTransport::from_config(config)
}

fn stdio_transport() -> TokioChildProcess {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_trails-fixture-server")).configure(|c| {
        c.args(["serve", "--stdio"])
            .env("TRAILS_KG_PATH", data_dir())
            .env("TRAILS_LOG", "warn")
            .env("TRAILS_MCP_SCOPES", "dev")
            .env_remove("TRAILS_MCP_TOKEN");
    });
    TokioChildProcess::new(command).unwrap()
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
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = arguments.as_object().cloned();
    client.call_tool(params).await.unwrap_or_else(|e| panic!("{tool}: {e}"));
}

async fn create(client: &Client, id: &str) {
    let requirement = json!({"req_id": id, "title": "Audit log", "status": "proposed", "priority": 2, "tags": []});
    call(client, "requirements.create", requirement).await;
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

/// The ADR's subscription criteria over one 2025-* session: what fires, what does not, and that
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
    call(&client, "requirements.update", json!({"req_id": "REQ-1", "status": "accepted"})).await;
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
    for unknown in ["trails://kg/Nope", "trails://elsewhere", "trails://prov/latest", "trails://doctor"] {
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
async fn a_listen_request_receives_the_updates_of_its_filter(client: Client, with_tools: bool) {
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
    create(&client, "REQ-7").await;
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
        call(&client, "trails_meta_tools_enable", json!({"tool": "requirements.search", "enabled": false})).await;
        let next = tokio::time::timeout(Duration::from_secs(10), subscription.next()).await;
        let notification = next.expect("the list change arrives").unwrap().unwrap();
        assert!(matches!(notification, ServerNotification::ToolListChangedNotification(_)), "{notification:?}");
    }
    subscription.cancel().await.unwrap();

    // A filter naming a page is refused, before any update, with the reason.
    let filter =
        SubscriptionFilter::builder().resource_subscription("trails://kg/Requirement?where=status=proposed").build();
    let mut refused = client.peer().listen(filter).await.expect("acknowledged, then ended");
    match tokio::time::timeout(Duration::from_secs(10), refused.next()).await.expect("it ends") {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32602);
            assert!(error.message.contains("not subscribable"), "{}", error.message);
        }
        other => panic!("expected the -32602, got {other:?}"),
    }
}

#[tokio::test]
async fn over_http_a_2026_listen_receives_resource_and_tool_list_updates() {
    let addr = http_server("").await;
    let client = discovering(http_transport(addr, Some(BUILDER_TOKEN))).await;
    a_listen_request_receives_the_updates_of_its_filter(client, true).await;
}

#[tokio::test]
async fn over_stdio_a_2026_listen_receives_resource_updates() {
    let client = discovering(stdio_transport()).await;
    a_listen_request_receives_the_updates_of_its_filter(client, false).await;
}
