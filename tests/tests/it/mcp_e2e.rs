//! End to end with rmcp's client, over Streamable HTTP (in-process server on a loopback port)
//! and stdio (the fixture server as a child process): list, call, every error code, the scope
//! matrix, tokens, production mode, masking, list_changed and HTTP hardening.

use std::net::SocketAddr;
use std::path::Path;

use rmcp::model::{CallToolResult, ClientConfig, Tool};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Map, Value};
use trails::auth::sha256_hex;
use trails::config::Settings;
use trails_tests::in_process;

const RUNTIME_TOKEN: &str = "runtime-token-1";
const BUILDER_TOKEN: &str = "builder-token-2";
const DEV_TOKEN: &str = "dev-token-3";

/// A fresh data directory per server, so servers of one test binary never share a store. Kept
/// (not deleted) because the server outlives the test's stack frame; it lives under the temp dir.
fn data_dir() -> String {
    tempfile::Builder::new().prefix("trails-e2e-").tempdir().unwrap().keep().display().to_string()
}

fn settings(extra_toml: &str, env: &[(&str, &str)]) -> Settings {
    let toml = format!(
        r#"
        [mcp]
        scopes = ["dev"]
        {extra_toml}
        [[http.tokens]]
        name = "runtime-client"
        sha256 = "{}"
        scopes = ["runtime"]
        [[http.tokens]]
        name = "builder-client"
        sha256 = "{}"
        scopes = ["builder"]
        [[http.tokens]]
        name = "dev-client"
        sha256 = "{}"
        scopes = ["dev"]
        "#,
        sha256_hex(RUNTIME_TOKEN),
        sha256_hex(BUILDER_TOKEN),
        sha256_hex(DEV_TOKEN)
    );
    let data = data_dir();
    let env: Vec<(&str, &str)> = env.iter().copied().chain([("TRAILS_KG_PATH", data.as_str())]).collect();
    in_process::settings_with_env(&toml, &env)
}

async fn http_server(settings: Settings) -> SocketAddr {
    in_process::serve(trails::App::new(), settings).await.addr
}

/// A client that records `tools/list_changed` notifications.
#[derive(Clone, Default)]
struct Recorder {
    list_changed: std::sync::Arc<tokio::sync::Notify>,
    meta: Option<Map<String, Value>>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.meta = self.meta.clone().map(|m| rmcp::model::RequestMetaObject(rmcp::model::MetaObject(m)));
        info
    }
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }
}

async fn http_client(addr: SocketAddr, token: Option<&str>) -> RunningService<RoleClient, Recorder> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    Recorder::default().serve(StreamableHttpClientTransport::from_config(config)).await.expect("client connects")
}

/// A 2026-07-28 client over HTTP: stateless, so its requests take the hot path.
async fn stateless_client(addr: SocketAddr, token: Option<&str>) -> RunningService<RoleClient, Recorder> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    Recorder::default()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            ClientLifecycleMode::Discover { preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover handshake")
}

async fn stdio_client(
    env: &[(&str, &str)],
    meta: Option<Map<String, Value>>,
) -> Result<RunningService<RoleClient, Recorder>, String> {
    let launch = env.iter().fold(crate::fixture(), |launch, (name, value)| launch.env(name, *value));
    let command = launch.stdio_command(std::path::Path::new(&data_dir()));
    let transport = TokioChildProcess::new(command).map_err(|e| e.to_string())?;
    Recorder { meta, ..Recorder::default() }.serve(transport).await.map_err(|e| e.to_string())
}

async fn names(client: &RunningService<RoleClient, Recorder>) -> Vec<String> {
    client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.into_owned()).collect()
}

use trails_tests::client::call;

const GATED: [&str; 5] = [
    "trails_meta_fixture_inspect",
    "trails_meta_fixture_people",
    "trails_meta_fixture_reset",
    "trails_meta_requirements_stats",
    "trails_meta_tools_enable",
];

#[tokio::test]
async fn http_anonymous_sees_runtime_tools_only_and_gated_calls_need_authentication() {
    let addr = http_server(settings("", &[])).await;
    let client = http_client(addr, None).await;
    let listed = names(&client).await;
    assert!(listed.contains(&"research_search".to_owned()) && listed.contains(&"trails_meta_ping".to_owned()));
    for gated in GATED {
        assert!(!listed.contains(&gated.to_owned()), "{gated} must be hidden from anonymous callers");
    }
    let error = call(&client, "trails_meta_fixture_reset", json!({})).await.unwrap_err();
    assert_eq!(error.code.0, -32001);
    assert_eq!(error.data.unwrap()["required_scope"], "builder");
}

#[tokio::test]
async fn golden_equals_wire_for_every_listed_tool() {
    let addr = http_server(settings("", &[])).await;
    let client = http_client(addr, Some(DEV_TOKEN)).await;
    let tools: Vec<Tool> = client.list_all_tools().await.unwrap();
    let declared = trails::registry::Registry::collect().unwrap().tools().count();
    assert_eq!(tools.len(), declared, "every fixture and example tool is listed to a dev caller");
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/mcp");
    for tool in tools {
        let wire = trails_tests::golden::to_sorted_pretty(&serde_json::to_value(&tool).unwrap());
        let golden = std::fs::read_to_string(schemas.join(format!("{}.json", tool.name))).unwrap();
        assert_eq!(wire, golden, "tools/list entry of {} differs from its golden", tool.name);
    }
}

#[tokio::test]
async fn http_valid_call_has_structured_content_and_text_mirror() {
    let addr = http_server(settings("", &[])).await;
    let client = http_client(addr, None).await;
    let result = call(&client, "research_search", json!({"query": "graph"})).await.unwrap();
    let structured = result.structured_content.expect("outputSchema tools return structuredContent");
    assert_eq!(structured["items"][0]["title"], "Provenance of knowledge graphs");
    let text = result.content[0].as_text().expect("text mirror").text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);
}

#[tokio::test]
async fn http_invalid_call_returns_every_field_error_in_one_32602() {
    let addr = http_server(settings("", &[])).await;
    let client = http_client(addr, None).await;
    let error = call(&client, "research_search", json!({"query": "", "limit": 500})).await.unwrap_err();
    assert_eq!(error.code.0, -32602);
    assert_eq!(error.message, "validation failed on 2 field(s)");
    let fields = &error.data.unwrap()["fields"];
    assert_eq!(fields[0]["field"], "query");
    assert_eq!(fields[0]["code"], "min_length");
    assert_eq!(fields[1]["field"], "limit");
    assert_eq!(fields[1]["code"], "max_value");
    assert_eq!(fields[1]["constraint"], 100);
}

/// Thirty requirements with long titles, and a search that returns them all: ~6 KB of results.
async fn search_of_thirty(client: &RunningService<RoleClient, Recorder>) -> CallToolResult {
    for n in 0..30 {
        let title = format!("{n:03} {}", "searchable title ".repeat(11));
        let requirement =
            json!({"req_id": format!("REQ-{n}"), "title": title, "status": "proposed", "priority": 1, "tags": []});
        call(client, "requirements_create", requirement).await.unwrap();
    }
    call(client, "requirements_search", json!({"text": "searchable", "limit": 100})).await.unwrap()
}

/// One call's result fits the window, whatever the tool returns. A list keeps the items that fit
/// and says how many it has and what it shows (`total`, `cut`); text is cut and says so in a
/// second block; other structured results become an `isError` result naming the size and the
/// window. Each names the call that reads on, `next_call`.
#[tokio::test]
async fn results_over_the_window_are_cut_or_refused_and_say_so() {
    const WINDOW: usize = 1024;
    let addr = http_server(settings(&format!("tool_window_chars = {WINDOW}"), &[])).await;
    let client = http_client(addr, None).await;
    let chars = |result: &CallToolResult| {
        result.content.iter().filter_map(|block| block.as_text()).map(|text| text.text.chars().count()).sum::<usize>()
    };

    let list = search_of_thirty(&client).await;
    assert!(chars(&list) <= WINDOW, "{} characters", chars(&list));
    let text = list.content[0].as_text().unwrap().text.clone();
    let structured = list.structured_content.clone().unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured, "the mirror is the cut result");
    let shown = structured["items"].as_array().unwrap().len();
    assert!((1..30).contains(&shown), "{shown} items");
    assert_eq!(structured["items"][0]["req_id"], "REQ-0", "the first items, in order");
    assert_eq!(structured["total"], 30);
    assert_eq!(structured["cut"], format!("30 items: items 0 to {} shown; next_call reads on", shown - 1));
    assert_eq!(structured["next_call"]["tool"], "trails_result_read");
    assert_ne!(list.is_error, Some(true));

    let long = "x".repeat(3 * WINDOW);
    let text = call(&client, "fixtures_assign", json!({"reviewer": "urn:p:1", "paper_title": long})).await.unwrap();
    assert!(chars(&text) <= WINDOW, "the text and its note fit: {}", chars(&text));
    let note: Value = serde_json::from_str(&text.content[1].as_text().expect("a note block").text).unwrap();
    let shown = text.content[0].as_text().unwrap().text.len();
    assert!(note["cut"].as_str().unwrap().starts_with(&format!("the first {shown} of")), "{note}");
    assert_eq!(note["next_call"]["arguments"]["offset"], shown);

    let record = json!({"handle": "abc", "code": "REQ-1", "status": "proposed", "priority": 1, "tags": ["a"],
                        "address": {"city": long, "country": "FR"}});
    let refused = call(&client, "fixtures_constraints", record).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    // Not the tool's output: a tool with an `outputSchema` says it in text alone (the TypeScript
    // SDK 1.x would check structured content against that schema and throw).
    assert!(refused.structured_content.is_none(), "{refused:?}");
    let body: Value = serde_json::from_str(&refused.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(body["window_chars"], WINDOW);
    assert!(body["result_chars"].as_u64().unwrap() > 3 * WINDOW as u64);
    assert!(body["error"].as_str().unwrap().contains("ask for less"), "{body}");
}

/// Every page from `next_call` on, each within the window; the last says there is no next.
/// Pages of instances of a keyed node type link them (`linked`), at most 32 a page.
async fn pages(
    client: &RunningService<RoleClient, Recorder>,
    mut next: Value,
    window: usize,
    linked: bool,
) -> Vec<Value> {
    let mut pages = Vec::new();
    while !next.is_null() {
        assert_eq!(next["tool"], "trails_result_read", "{next}");
        let page = call(client, "trails_result_read", next["arguments"].clone()).await.unwrap();
        assert_ne!(page.is_error, Some(true), "{page:?}");
        assert!(page.content[0].as_text().unwrap().text.chars().count() <= window, "a page fits the window");
        // A page of instances links them, as the cut result did its own.
        let items = page.structured_content.as_ref().unwrap()["items"].as_array().map_or(0, Vec::len);
        let links = page.content.iter().filter(|block| block.as_resource_link().is_some()).count();
        assert_eq!(links, if linked { items.min(32) } else { 0 }, "{page:?}");
        let page = page.structured_content.expect("a page is structured");
        next = page["next_call"].clone();
        pages.push(page);
    }
    pages
}

/// A cut result names its continuation; `trails_result_read` pages through it to the end, for
/// the caller that made the call only: a list by items, text by bytes, and a structured result
/// too large to cut by its JSON text.
#[tokio::test]
async fn a_cut_result_is_read_to_its_end_through_its_continuation() {
    const WINDOW: usize = 1024;
    let addr = http_server(settings(&format!("tool_window_chars = {WINDOW}"), &[])).await;
    let client = http_client(addr, Some(RUNTIME_TOKEN)).await;

    let list = search_of_thirty(&client).await;
    let structured = list.structured_content.clone().unwrap();
    let shown = structured["items"].as_array().unwrap().len();
    let mut ids: Vec<String> = structured["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["req_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(structured["next_call"]["arguments"]["offset"], shown);
    for page in pages(&client, structured["next_call"].clone(), WINDOW, true).await {
        ids.extend(page["items"].as_array().unwrap().iter().map(|item| item["req_id"].as_str().unwrap().to_owned()));
    }
    let mut all: Vec<String> = (0..30).map(|n| format!("REQ-{n}")).collect();
    all.sort(); // the search's order: priority, then IRI
    assert_eq!(ids, all, "every item once, in order, across the cut result and its pages");

    // Another caller (anonymous here) cannot read it: not found, as a handle that never was.
    let anonymous = http_client(addr, None).await;
    let stolen = call(&anonymous, "trails_result_read", structured["next_call"]["arguments"].clone()).await.unwrap();
    assert_eq!(stolen.is_error, Some(true));
    let body: Value = serde_json::from_str(&stolen.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(body["kind"], "not_found", "{body}");

    // Text, by bytes: the shown part and the pages are the whole text.
    let long = "é".repeat(3 * WINDOW);
    let text = call(&client, "fixtures_assign", json!({"reviewer": "urn:p:1", "paper_title": long})).await.unwrap();
    let mut whole = text.content[0].as_text().unwrap().text.clone();
    let note: Value = serde_json::from_str(&text.content[1].as_text().unwrap().text).unwrap();
    for page in pages(&client, note["next_call"].clone(), WINDOW, false).await {
        whole.push_str(page["text"].as_str().unwrap());
    }
    assert_eq!(whole, format!("urn:p:1 reviews {long} with 0 co-reviewer(s)"), "the whole text, reassembled");

    // Too large to cut: its JSON text, from the start.
    let record = json!({"handle": "abc", "code": "REQ-1", "status": "proposed", "priority": 1, "tags": ["a"],
                        "address": {"city": "x".repeat(3 * WINDOW), "country": "FR"}});
    let refused = call(&client, "fixtures_constraints", record).await.unwrap();
    let body: Value = serde_json::from_str(&refused.content[0].as_text().unwrap().text).unwrap();
    let json: String = pages(&client, body["next_call"].clone(), WINDOW, false)
        .await
        .iter()
        .map(|page| page["text"].as_str().unwrap())
        .collect();
    let output: Value = serde_json::from_str(&json).expect("the pages are the result's JSON");
    assert_eq!(output["address"]["city"], "x".repeat(3 * WINDOW));
}

/// A capability returning 10,000 instances: its result fits the default window, and its pages
/// read every instance once, in order, each page within the window too.
#[tokio::test]
async fn ten_thousand_instances_fit_the_window_and_page_to_their_end() {
    let addr = http_server(settings("", &[])).await;
    let client = http_client(addr, Some(BUILDER_TOKEN)).await;
    let window = trails::config::DEFAULT_TOOL_WINDOW_CHARS;
    let list = call(&client, "trails_meta_fixture_people", json!({"count": 10_000})).await.unwrap();
    assert!(list.content[0].as_text().unwrap().text.chars().count() <= window);
    let structured = list.structured_content.unwrap();
    assert_eq!(structured["total"], 10_000);
    let name = |item: &Value| item["name"].as_str().unwrap().to_owned();
    let mut names: Vec<String> = structured["items"].as_array().unwrap().iter().map(name).collect();
    let pages = pages(&client, structured["next_call"].clone(), window, false).await;
    assert!(pages.len() > 50, "{} pages", pages.len());
    for page in &pages {
        names.extend(page["items"].as_array().unwrap().iter().map(name));
    }
    assert_eq!(names, (0..10_000).map(|n| format!("Person {n:05}")).collect::<Vec<_>>());
    assert_eq!(pages.last().unwrap()["cut"].as_str().unwrap().rsplit("; ").next(), Some("no more"));
}

/// Results link what they return (`resource_link`, MCP 2025-06-18+): the created instance by its
/// key, a reference by its IRI; a peer of an earlier version gets none (it could not parse one).
#[tokio::test]
async fn results_link_the_instances_they_return_for_peers_that_read_links() {
    let addr = http_server(settings("", &[])).await;
    let client = http_client(addr, None).await;
    let person = json!({"name": "Ada", "email": "ada@example.org"});
    let iri = call(&client, "people_create", person).await.unwrap();
    let requirement = json!({"req_id": "REQ-1", "title": "Linked", "status": "proposed", "priority": 1, "tags": [],
                             "owner": iri.content[0].as_text().unwrap().text});
    let created = call(&client, "requirements_create", requirement).await.unwrap();
    let links: Vec<(String, String)> = created
        .content
        .iter()
        .filter_map(|block| block.as_resource_link().map(|link| (link.uri.clone(), link.name.clone())))
        .collect();
    let expected = [
        ("trails://kg/Requirement/REQ-1", "Requirement REQ-1"),
        ("trails://kg/Person/ada%40example.org", "Person ada@example.org"),
    ];
    assert_eq!(links, expected.map(|(uri, name)| (uri.to_owned(), name.to_owned())), "{created:?}");
    let iri_links: Vec<String> =
        iri.content.iter().filter_map(|block| block.as_resource_link().map(|link| link.uri.clone())).collect();
    assert_eq!(iri_links, ["trails://kg/Person/ada%40example.org"], "a returned IRI links too");
    // What a link names is there, through a tool as through resources/read.
    let read = call(&client, "trails_resources_read", json!({"uri": expected[1].0})).await.unwrap();
    assert_eq!(read.structured_content.unwrap()["content"]["https://example.org/req#name"], "Ada");

    // A 2025-03-26 peer (stateless, on the hot path) gets the same result without links.
    let addr = http_server(settings("[http]\nsessions = false", &[])).await;
    let client = http_client(addr, None).await;
    let requirement = json!({"req_id": "REQ-1", "title": "Linked", "status": "proposed", "priority": 1, "tags": []});
    call(&client, "requirements_create", requirement).await.unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "requirements_search", "arguments": {"text": "Linked"}}});
    let send = |version: &'static str| {
        reqwest::Client::new()
            .post(format!("http://{addr}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version)
            .json(&body)
            .send()
    };
    let old = send("2025-03-26").await.unwrap().text().await.unwrap();
    assert!(old.contains("REQ-1") && !old.contains("resource_link"), "{old}");
    // The same request from a 2025-06-18 peer: linked.
    let new = send("2025-06-18").await.unwrap().text().await.unwrap();
    assert!(new.contains(r#""type":"resource_link","uri":"trails://kg/Requirement/REQ-1""#), "{new}");
}

#[tokio::test]
async fn scope_matrix_over_http() {
    let addr = http_server(settings("", &[])).await;
    // (token, tool, expected outcome): Ok or the JSON-RPC code.
    let cases: [(Option<&str>, &str, Result<(), i32>); 9] = [
        (None, "trails_meta_ping", Ok(())),
        (None, "trails_meta_requirements_stats", Err(-32001)),
        (None, "trails_meta_fixture_inspect", Err(-32001)),
        (Some(RUNTIME_TOKEN), "trails_meta_ping", Ok(())),
        (Some(RUNTIME_TOKEN), "trails_meta_fixture_inspect", Err(-32004)),
        (Some(BUILDER_TOKEN), "trails_meta_requirements_stats", Ok(())),
        (Some(BUILDER_TOKEN), "trails_meta_fixture_inspect", Err(-32004)),
        (Some(DEV_TOKEN), "trails_meta_fixture_inspect", Ok(())),
        (Some(DEV_TOKEN), "trails_meta_requirements_stats", Ok(())),
    ];
    for (token, tool, expected) in cases {
        let client = http_client(addr, token).await;
        let outcome = call(&client, tool, json!({})).await.map(|_| ()).map_err(|e| e.code.0);
        assert_eq!(outcome, expected, "token {token:?} calling {tool}");
        let listed = names(&client).await.contains(&tool.to_owned());
        assert_eq!(listed, expected.is_ok(), "token {token:?}: {tool} listed iff callable");
    }
}

#[tokio::test]
async fn runtime_token_on_a_dev_tool_gets_32004_with_the_documented_data() {
    let addr = http_server(settings("", &[])).await;
    let client = http_client(addr, Some(RUNTIME_TOKEN)).await;
    let error = call(&client, "trails_meta_fixture_inspect", json!({})).await.unwrap_err();
    assert_eq!(error.code.0, -32004);
    assert!(error.message.starts_with("scope denied: trails_meta_fixture_inspect requires dev"), "{}", error.message);
    assert_eq!(
        error.data.unwrap(),
        json!({"tool": "trails_meta_fixture_inspect", "required_scope": "dev", "caller_scopes": ["runtime"]})
    );
}

#[tokio::test]
async fn production_hides_dev_tools_even_from_dev_tokens() {
    let addr = http_server(settings("", &[("TRAILS_ENV", "production")])).await;
    let client = http_client(addr, Some(DEV_TOKEN)).await;
    let listed = names(&client).await;
    assert!(!listed.contains(&"trails_meta_fixture_inspect".to_owned()));
    assert!(listed.contains(&"trails_meta_requirements_stats".to_owned()), "builder tools stay");
    let error = call(&client, "trails_meta_fixture_inspect", json!({})).await.unwrap_err();
    assert_eq!((error.code.0, error.data.unwrap()), (-32602, json!({"tool": "trails_meta_fixture_inspect"})));
}

#[tokio::test]
async fn mask_denied_makes_a_denied_tool_indistinguishable_from_an_unknown_one() {
    let addr = http_server(settings("mask_denied = true", &[])).await;
    let client = http_client(addr, Some(RUNTIME_TOKEN)).await;
    let denied = call(&client, "trails_meta_fixture_inspect", json!({})).await.unwrap_err();
    let unknown = call(&client, "trails_meta_fixture_inspectx", json!({})).await.unwrap_err();
    assert_eq!(denied.code, unknown.code);
    assert_eq!(denied.message.replace("inspect", ""), unknown.message.replace("inspectx", ""));
    assert_eq!(denied.data.unwrap()["tool"], "trails_meta_fixture_inspect");
    assert_eq!(unknown.data.unwrap()["tool"], "trails_meta_fixture_inspectx");
}

#[tokio::test]
async fn handler_failures_map_to_their_codes_without_leaking_internals() {
    let addr = http_server(settings("", &[])).await;
    let client = http_client(addr, None).await;
    let policy = call(&client, "fixtures_fail", json!({"how": "policy"})).await.unwrap_err();
    assert_eq!(policy.code.0, -32002);
    let budget = call(&client, "fixtures_fail", json!({"how": "budget"})).await.unwrap_err();
    assert_eq!(budget.code.0, -32003);
    let internal = call(&client, "fixtures_fail", json!({"how": "internal"})).await.unwrap_err();
    assert_eq!((internal.code.0, internal.message.as_ref()), (-32603, "internal error"));
    assert!(!serde_json::to_string(&internal).unwrap().contains("hunter2"), "no internals on the wire");
    assert_eq!(internal.data.unwrap()["trace_id"].as_str().unwrap().len(), 32);
    let panicked = call(&client, "fixtures_fail", json!({"how": "panic"})).await.unwrap_err();
    assert_eq!(panicked.code.0, -32603);
    // The server is still fine after a handler panic.
    assert!(call(&client, "trails_meta_ping", json!({})).await.is_ok());
    let unknown = call(&client, "no.such.tool", json!({})).await.unwrap_err();
    assert_eq!((unknown.code.0, unknown.data.unwrap()), (-32602, json!({"tool": "no.such.tool"})));
}

#[tokio::test]
async fn hostile_arguments_get_structured_errors_and_the_server_keeps_answering() {
    let addr = http_server(settings("", &[])).await;
    let client = http_client(addr, None).await;
    let mut deep = json!("leaf");
    for _ in 0..100 {
        deep = json!({ "nested": deep });
    }
    let cases = [
        json!({"query": ["not", "a", "string"]}),
        json!({"query": {"$gt": ""}}),
        json!({"query": "x", "limit": 1e308}),
        json!({"query": "x", "limit": -9223372036854775808i64}),
        json!({"query": "x", "limit": 18446744073709551615u64}),
        json!({"query": "x".repeat(1_000_000)}),
        json!({"query": "x", "extra": deep}),
        json!({}),
    ];
    for arguments in cases {
        let error = call(&client, "research_search", arguments).await.unwrap_err();
        assert_eq!(error.code.0, -32602);
        assert!(serde_json::to_string(&error).unwrap().len() < 8_192, "errors stay bounded");
    }
    // Control and bidi characters are just characters; `null` is absent for an optional field.
    let odd = call(&client, "research_search", json!({"query": "\u{0000}\u{202e}", "order": null})).await.unwrap();
    assert_eq!(odd.structured_content.unwrap()["items"], json!([]));
    let assign = call(&client, "fixtures_assign", json!({"reviewer": "javascript:alert(1) x", "paper_title": "t"}))
        .await
        .unwrap_err();
    assert_eq!(assign.data.unwrap()["fields"][0]["field"], "reviewer");
    assert!(call(&client, "trails_meta_ping", json!({"message": "still here"})).await.is_ok());
}

#[tokio::test]
async fn tool_result_mode_returns_validation_errors_as_an_is_error_result() {
    let addr = http_server(settings("validation_errors = \"tool_result\"", &[])).await;
    let client = http_client(addr, None).await;
    let result = call(&client, "research_search", json!({"query": "", "limit": 0})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(result.structured_content.is_none(), "research_search has an outputSchema: {result:?}");
    let structured: Value = serde_json::from_str(&result.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(structured["error"], "validation failed on 2 field(s)");
    assert_eq!(structured["fields"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn disabling_a_tool_notifies_sessions_and_removes_it() {
    let addr = http_server(settings("", &[])).await;
    let builder = http_client(addr, Some(BUILDER_TOKEN)).await;
    let watcher = http_client(addr, None).await;
    // The hot path's listings are cached bytes: they must follow the switch too.
    let stateless = stateless_client(addr, None).await;
    assert!(names(&stateless).await.contains(&"research_search".to_owned()));
    let notified = watcher.service().list_changed.clone();
    let switched =
        call(&builder, "trails_meta_tools_enable", json!({"tool": "research_search", "enabled": false})).await.unwrap();
    assert_eq!(switched.structured_content.unwrap()["changed"], true);
    tokio::time::timeout(std::time::Duration::from_secs(5), notified.notified())
        .await
        .expect("notifications/tools/list_changed reached the other session");
    assert!(!names(&watcher).await.contains(&"research_search".to_owned()));
    assert!(!names(&stateless).await.contains(&"research_search".to_owned()));
    let error = call(&watcher, "research_search", json!({"query": "x"})).await.unwrap_err();
    assert_eq!(error.code.0, -32602);
    assert_eq!(call(&stateless, "research_search", json!({"query": "x"})).await.unwrap_err().code.0, -32602);
    call(&builder, "trails_meta_tools_enable", json!({"tool": "research_search", "enabled": true})).await.unwrap();
    assert!(names(&watcher).await.contains(&"research_search".to_owned()));
    assert!(names(&stateless).await.contains(&"research_search".to_owned()));
    let bad = call(&builder, "trails_meta_tools_enable", json!({"tool": "nope", "enabled": true})).await.unwrap_err();
    assert_eq!(bad.data.unwrap()["fields"][0]["field"], "tool");
}

#[tokio::test]
async fn protocol_2026_07_28_works_statelessly() {
    let addr = http_server(settings("", &[])).await;
    let client = stateless_client(addr, None).await;
    assert!(names(&client).await.contains(&"research_search".to_owned()));
    let error = call(&client, "research_search", json!({"query": ""})).await.unwrap_err();
    assert_eq!(error.code.0, -32602);
    assert_eq!(error.data.unwrap()["fields"][0]["code"], "min_length");
    assert_eq!(client.peer_info().unwrap().protocol_version, rmcp::model::ProtocolVersion::V_2026_07_28);
    // What a 2026-07-28 peer receives for a policy denial, as measured against rmcp 3.9 over
    // stateless HTTP: -32002 arrives unchanged (see the error table in `runtime/guide/07-wire-contract.md`).
    let policy = call(&client, "fixtures_fail", json!({"how": "policy"})).await.unwrap_err();
    assert_eq!(policy.code.0, -32002);
    let scope = call(&client, "trails_meta_fixture_inspect", json!({})).await.unwrap_err();
    assert_eq!(scope.code.0, -32001);
    let codes = [("budget", -32003), ("internal", -32603), ("panic", -32603)];
    for (how, code) in codes {
        assert_eq!(call(&client, "fixtures_fail", json!({"how": how})).await.unwrap_err().code.0, code, "{how}");
    }
    let unknown = call(&client, "no.such.tool", json!({})).await.unwrap_err();
    assert_eq!(unknown.code.0, -32602);

    // And -32004 for an authenticated caller lacking the scope.
    let runtime_client = stateless_client(addr, Some(RUNTIME_TOKEN)).await;
    let denied = call(&runtime_client, "trails_meta_fixture_inspect", json!({})).await.unwrap_err();
    assert_eq!(denied.code.0, -32004);
}

#[tokio::test]
async fn stateless_http_without_sessions_serves_2025_clients() {
    let addr = http_server(settings("[http]\nsessions = false", &[])).await;
    let client = http_client(addr, Some(BUILDER_TOKEN)).await;
    assert!(names(&client).await.contains(&"trails_meta_requirements_stats".to_owned()));
    let result = call(&client, "research_search", json!({"query": "shapes"})).await.unwrap();
    assert_eq!(result.structured_content.unwrap()["items"][0]["year"], 2017);
    let error = call(&client, "research_search", json!({"query": 7})).await.unwrap_err();
    assert_eq!(error.data.unwrap()["fields"][0]["code"], "type");
}

#[tokio::test]
async fn stdio_without_token_serves_runtime_tools_only() {
    let client = stdio_client(&[("TRAILS_MCP_SCOPES", "dev")], None).await.unwrap();
    let listed = names(&client).await;
    assert!(listed.contains(&"research_search".to_owned()));
    assert!(!listed.contains(&"trails_meta_fixture_inspect".to_owned()));
    assert_eq!(call(&client, "trails_meta_fixture_inspect", json!({})).await.unwrap_err().code.0, -32001);
    let error = call(&client, "research_search", json!({"query": "", "order": "sideways"})).await.unwrap_err();
    assert_eq!(error.code.0, -32602);
    assert_eq!(error.data.unwrap()["fields"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn stdio_token_in_initialize_meta_unlocks_the_process_scopes() {
    let meta = json!({"authorization": "Bearer stdio-secret"}).as_object().cloned();
    let client =
        stdio_client(&[("TRAILS_MCP_SCOPES", "dev"), ("TRAILS_MCP_TOKEN", "stdio-secret")], meta).await.unwrap();
    assert!(names(&client).await.contains(&"trails_meta_fixture_inspect".to_owned()));
    let result = call(&client, "trails_meta_fixture_inspect", json!({})).await.unwrap();
    assert!(result.content[0].as_text().unwrap().text.contains("stdio"));
}

#[tokio::test]
async fn stdio_scope_matrix_and_list_changed() {
    let meta = json!({"authorization": "stdio-secret"}).as_object().cloned();
    let env = [("TRAILS_MCP_SCOPES", "builder"), ("TRAILS_MCP_TOKEN", "stdio-secret")];
    let client = stdio_client(&env, meta).await.unwrap();
    let listed = names(&client).await;
    assert!(listed.contains(&"trails_meta_requirements_stats".to_owned()), "builder tool served");
    assert!(!listed.contains(&"trails_meta_fixture_inspect".to_owned()), "dev tool not served to a builder process");
    assert!(call(&client, "trails_meta_requirements_stats", json!({})).await.is_ok());
    let denied = call(&client, "trails_meta_fixture_inspect", json!({})).await.unwrap_err();
    assert_eq!(denied.code.0, -32004);
    assert_eq!(denied.data.unwrap()["caller_scopes"], json!(["runtime", "builder"]));

    let notified = client.service().list_changed.clone();
    call(&client, "trails_meta_tools_enable", json!({"tool": "fixtures_assign", "enabled": false})).await.unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), notified.notified())
        .await
        .expect("list_changed over stdio");
    assert!(!names(&client).await.contains(&"fixtures_assign".to_owned()));
}

#[tokio::test]
async fn stdio_speaks_2026_07_28_without_initialize() {
    let command = crate::fixture().stdio_command(std::path::Path::new(&data_dir()));
    let client = Recorder::default()
        .serve_with_lifecycle(
            TokioChildProcess::new(command).unwrap(),
            ClientLifecycleMode::Discover { preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover over stdio");
    assert_eq!(client.peer_info().unwrap().protocol_version, rmcp::model::ProtocolVersion::V_2026_07_28);
    assert!(names(&client).await.contains(&"research_search".to_owned()));
    let error = call(&client, "research_search", json!({"query": "", "limit": 0})).await.unwrap_err();
    assert_eq!((error.code.0, error.data.unwrap()["fields"].as_array().unwrap().len()), (-32602, 2));
    assert_eq!(call(&client, "trails_meta_fixture_reset", json!({})).await.unwrap_err().code.0, -32001);
}

#[tokio::test]
async fn stdio_wrong_or_missing_token_fails_initialize() {
    let env = [("TRAILS_MCP_TOKEN", "stdio-secret")];
    let wrong = json!({"authorization": "Bearer guess"}).as_object().cloned();
    let error = stdio_client(&env, wrong).await.err().expect("initialize must fail");
    assert!(error.contains("-32001") || error.contains("authentication failed"), "{error}");
    assert!(!error.contains("stdio-secret") && !error.contains("guess"), "no secret echoed: {error}");
    assert!(stdio_client(&env, None).await.is_err());
}

mod hardening {
    use super::*;

    async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: String) -> reqwest::Response {
        let mut request = reqwest::Client::new()
            .post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(body).send().await.unwrap()
    }

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

    #[tokio::test]
    async fn a_bad_token_is_401_with_www_authenticate_and_no_echo() {
        let addr = http_server(settings("", &[])).await;
        let response = post(addr, &[("authorization", "Bearer not-a-real-token")], INITIALIZE.into()).await;
        assert_eq!(response.status(), 401);
        assert!(response.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
        let body = response.text().await.unwrap();
        assert!(body.contains("-32001") && !body.contains("not-a-real-token"));
    }

    #[tokio::test]
    async fn foreign_origin_is_403_and_absent_origin_is_fine() {
        let addr = http_server(settings("", &[])).await;
        let foreign = post(addr, &[("origin", "https://evil.example")], INITIALIZE.into()).await;
        assert_eq!(foreign.status(), 403);
        let local = post(addr, &[("origin", &format!("http://localhost:{}", addr.port()))], INITIALIZE.into()).await;
        assert_eq!(local.status(), 200);
        assert_eq!(post(addr, &[], INITIALIZE.into()).await.status(), 200);
    }

    #[tokio::test]
    async fn a_host_outside_the_allow_list_is_rejected() {
        let addr = http_server(settings("", &[])).await;
        let response = post(addr, &[("host", "attacker.example")], INITIALIZE.into()).await;
        assert_eq!(response.status(), 403);
    }

    #[tokio::test]
    async fn oversize_bodies_are_413() {
        let addr = http_server(settings("[http]\nmax_body_bytes = 1024", &[])).await;
        let padding = "x".repeat(4096);
        let body = INITIALIZE.replace("\"raw\"", &format!("\"{padding}\""));
        assert_eq!(post(addr, &[], body).await.status(), 413);
    }

    #[tokio::test]
    async fn an_unsupported_protocol_version_header_is_400() {
        let addr = http_server(settings("", &[])).await;
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
        let response = post(addr, &[("mcp-protocol-version", "1999-01-01")], list.into()).await;
        assert_eq!(response.status(), 400);
    }

    #[tokio::test]
    async fn get_and_delete_follow_the_negotiated_mode() {
        // Stateless: there is no stream to open and no session to end.
        let stateless = http_server(settings("[http]\nsessions = false", &[])).await;
        let client = reqwest::Client::new();
        let get =
            client.get(format!("http://{stateless}/mcp")).header("accept", "text/event-stream").send().await.unwrap();
        assert_eq!(get.status(), 405);
        let delete = client.delete(format!("http://{stateless}/mcp")).send().await.unwrap();
        assert_eq!(delete.status(), 405);
        // With sessions, a GET without a session id is refused rather than opening a stream.
        let sessions = http_server(settings("", &[])).await;
        let get =
            client.get(format!("http://{sessions}/mcp")).header("accept", "text/event-stream").send().await.unwrap();
        assert!(get.status().is_client_error(), "{}", get.status());
    }

    #[tokio::test]
    async fn sessions_are_bounded() {
        let addr = http_server(settings("[http]\nmax_sessions = 2\nmax_anonymous_sessions = 2", &[])).await;
        let first = http_client(addr, None).await;
        let _second = http_client(addr, None).await;
        let third = post(addr, &[], INITIALIZE.into()).await;
        assert_eq!(third.status(), 503, "a third session is refused");
        assert_eq!(third.headers()["retry-after"], "5");
        let body: Value = third.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32000, "a JSON-RPC error: {body}");
        // Existing sessions keep working.
        assert!(call(&first, "trails_meta_ping", json!({})).await.is_ok());
    }

    /// The cap is checked and the session created under one lock: 40 simultaneous `initialize`s
    /// against 5 slots give exactly 5 sessions, never 6.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_session_cap_holds_under_concurrent_initialize() {
        let addr = http_server(settings("[http]\nmax_sessions = 5\nmax_anonymous_sessions = 5", &[])).await;
        let attempts: Vec<_> = (0..40).map(|_| tokio::spawn(post(addr, &[], INITIALIZE.into()))).collect();
        let mut statuses = Vec::new();
        for attempt in attempts {
            statuses.push(attempt.await.unwrap().status().as_u16());
        }
        let opened = statuses.iter().filter(|s| **s == 200).count();
        let refused = statuses.iter().filter(|s| **s == 503).count();
        assert_eq!((opened, refused), (5, 35), "statuses: {statuses:?}");
    }

    /// The manifest lists what this caller may call — exactly the tools `tools/list` shows it —
    /// and nothing links to it when it is switched off.
    #[tokio::test]
    async fn the_manifest_is_json_ld_of_what_the_caller_may_call() {
        let addr = http_server(settings("", &[])).await;
        let manifest_ids = |token: Option<&'static str>| async move {
            let mut request = reqwest::Client::new().get(format!("http://{addr}/.well-known/capabilities"));
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.headers()["content-type"], "application/ld+json");
            let manifest: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
            let mut ids: Vec<String> =
                manifest["@graph"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap().to_owned()).collect();
            ids.sort();
            ids
        };
        let listed_ids = |token: Option<&'static str>| async move {
            let client = http_client(addr, token).await;
            let mut ids: Vec<String> = client
                .list_all_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.meta.unwrap().0["trails"]["id"].as_str().unwrap().to_owned())
                .collect();
            ids.sort();
            ids
        };
        for token in [None, Some(RUNTIME_TOKEN), Some(BUILDER_TOKEN), Some(DEV_TOKEN)] {
            assert_eq!(manifest_ids(token).await, listed_ids(token).await, "{token:?}");
        }
        let anonymous = manifest_ids(None).await;
        assert!(anonymous.contains(&"fixtures.fail".to_owned()), "{anonymous:?}");
        assert!(!anonymous.iter().any(|id| id.starts_with("trails.meta.gen.")), "no dev scaffolders: {anonymous:?}");
        assert!(manifest_ids(Some(DEV_TOKEN)).await.contains(&"trails.meta.gen.shape".to_owned()));

        let disabled = http_server(settings("[capability.manifest]\nenabled = false", &[])).await;
        assert_eq!(reqwest::get(format!("http://{disabled}/.well-known/capabilities")).await.unwrap().status(), 404);
        let client = http_client(disabled, None).await;
        for tool in client.list_all_tools().await.unwrap() {
            let trails = &tool.meta.as_ref().unwrap().0["trails"];
            assert!(trails.get("manifest_uri").is_none() && trails["id"].is_string(), "{}: {trails}", tool.name);
        }
        let stateless =
            http_server(settings("[capability.manifest]\nenabled = false\n[http]\nsessions = false", &[])).await;
        let stateless =
            trails_tests::client::post(stateless, None, &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
                .await;
        for tool in stateless["result"]["tools"].as_array().unwrap() {
            assert!(tool["_meta"]["trails"].get("manifest_uri").is_none(), "the hot path's bytes too: {tool}");
        }
        let openapi: Value =
            reqwest::get(format!("http://{disabled}/openapi.json")).await.unwrap().json().await.unwrap();
        assert!(!openapi.to_string().contains("x-trails-manifest-uri"));
    }
}
