//! The knowledge graph behind MCP: a `tools/call` that would write a shape-violating instance
//! fails with the same `-32602` as the typed API; every call leaves one PROV-O activity; and a
//! requirement created over MCP survives `kill -9` of the server, with its activity.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use requirements::model::Requirement;
use rmcp::model::{CallToolRequestParams, ErrorData};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceError};
use serde_json::{json, Value};
use trails::kg::{EmbeddedStore, Kg, KgCtx, Synchronous, Term};
use trails::Error;
use trails_tests::client::{self, call};
use trails_tests::in_process;

const PROV: &str = "http://www.w3.org/ns/prov#";

async fn serve(kg: Kg) -> SocketAddr {
    serve_with(kg, "").await
}

async fn serve_with(kg: Kg, extra_toml: &str) -> SocketAddr {
    serve_toml(kg, &format!("[mcp]\nscopes = [\"dev\"]\n{extra_toml}")).await
}

async fn serve_toml(kg: Kg, toml: &str) -> SocketAddr {
    in_process::serve(trails::App::new().kg(kg), in_process::settings(toml)).await.addr
}

async fn connect(addr: SocketAddr) -> RunningService<RoleClient, ()> {
    client::connect(addr, None).await
}

fn requirement(id: &str, owner: Option<&str>) -> Value {
    let mut value =
        json!({"req_id": id, "title": "Single sign-on", "status": "proposed", "priority": 1, "tags": ["auth"]});
    if let Some(owner) = owner {
        value["owner"] = json!(owner);
    }
    value
}

/// The value bound to `name` in `row`, as text.
fn text(row: &[(String, Term)], name: &str) -> String {
    match &row.iter().find(|(v, _)| v == name).unwrap().1 {
        Term::Literal(l) => l.value().to_owned(),
        other => other.to_string(),
    }
}

/// The activities whose `prov:generated` is `iri`, as (capability, outcome).
async fn activities_generating(kg: &Kg, iri: &str) -> Vec<(String, String)> {
    let query = format!(
        "SELECT ?a ?capability ?outcome ?entity WHERE {{ GRAPH ?a {{ ?a a <{PROV}Activity> ; <{PROV}generated> ?entity ;
           <https://w3id.org/trails/capability#capability> ?capability ; <https://w3id.org/trails/capability#outcome> ?outcome }} }}"
    );
    let rows =
        kg.sparql(&query, &[("entity", Term::NamedNode(trails::kg::NamedNode::new(iri).unwrap()))]).await.unwrap();
    rows.iter().map(|row| (text(row, "capability"), text(row, "outcome"))).collect()
}

#[tokio::test]
async fn a_shape_violating_write_over_mcp_fails_with_the_same_field_errors_as_the_typed_api() {
    let kg = Kg::temporary().unwrap();
    let addr = serve(kg.clone()).await;
    let client = connect(addr).await;
    call(&client, "requirements_create", requirement("REQ-1", None)).await.unwrap();
    let dangling = "urn:trails:kg/Person/nobody%40example.org";
    for (arguments, what) in
        [(requirement("REQ-1", None), "a duplicate key"), (requirement("REQ-2", Some(dangling)), "a dangling owner")]
    {
        let over_mcp = call(&client, "requirements_create", arguments.clone()).await.unwrap_err();
        assert_eq!(over_mcp.code.0, -32602, "{what}");
        let typed: Requirement = serde_json::from_value(arguments).unwrap();
        let Err(Error::Validation { errors, total }) = kg.create(typed).await else { panic!("{what} is refused") };
        assert_eq!(over_mcp.message, format!("validation failed on {total} field(s)"), "{what}");
        assert_eq!(over_mcp.data.unwrap()["fields"], serde_json::to_value(&errors).unwrap(), "{what}");
    }
    let stored =
        requirements::model::Requirement::objects(&trails::Ctx::local().with_kg(kg.clone())).count().await.unwrap();
    assert_eq!(stored, 1, "the refused writes changed nothing");
}

/// Each test once per store: embedded, and (ignored under plain `cargo test`) the two servers.
macro_rules! on_every_store {
    ($($name:ident),* $(,)?) => {
        mod embedded {
            $(#[tokio::test] async fn $name() { super::$name(trails::kg::Kg::temporary().unwrap()).await })*
        }
        mod oxigraph_server {
            $(
                #[tokio::test]
                #[ignore = "needs Oxigraph server (PyPI oxigraph==0.5.13): `cargo xtask test` installs it and runs these"]
                async fn $name() {
                    let server = trails_tests::servers::OxigraphServer::start();
                    super::$name(server.kg()).await
                }
            )*
        }
        mod virtuoso {
            $(
                #[tokio::test]
                #[ignore = "needs Virtuoso 7 (Debian virtuoso-opensource-7-bin): `cargo xtask test` installs it and runs these"]
                async fn $name() {
                    let server = trails_tests::servers::VirtuosoServer::start();
                    super::$name(server.kg()).await
                }
            )*
        }
    };
}

on_every_store!(every_call_leaves_one_provenance_activity, provenance_retention_is_bounded);

async fn every_call_leaves_one_provenance_activity(kg: Kg) {
    let addr = serve(kg.clone()).await;
    let client = connect(addr).await;
    call(&client, "requirements_create", requirement("REQ-7", None)).await.unwrap();
    call(&client, "requirements_search", json!({"text": "sign"})).await.unwrap();
    call(&client, "requirements_create", requirement("REQ-7", None)).await.unwrap_err();
    call(&client, "trails_meta_ping", json!({})).await.unwrap();
    // Updating what is not there is the caller's to act on (its declared precondition does not
    // hold): a result the model reads. The tool has an `outputSchema`, which the error does not
    // match: only the text carries it.
    let missing = call(&client, "requirements_update", json!({"req_id": "REQ-404", "title": "Renamed"})).await.unwrap();
    assert_eq!(missing.is_error, Some(true));
    assert!(missing.structured_content.is_none(), "{missing:?}");
    let shown: serde_json::Value = serde_json::from_str(&missing.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(
        shown,
        json!({"kind": "precondition_failed", "message": "requirements.update: 1 declared precondition does not hold: instance_exists (no Requirement `REQ-404` is stored); nothing ran", "retryable": false})
    );

    let iri = "urn:trails:kg/Requirement/REQ-7";
    assert_eq!(activities_generating(&kg, iri).await, [("requirements.create".to_owned(), "success".to_owned())]);
    let all = kg
        .sparql(
            &format!(
                "SELECT ?a ?capability ?outcome WHERE {{ GRAPH ?a {{ ?a a <{PROV}Activity> ;
                   <https://w3id.org/trails/capability#capability> ?capability ;
                   <https://w3id.org/trails/capability#outcome> ?outcome }} }}"
            ),
            &[],
        )
        .await
        .unwrap();
    let mut seen: Vec<(String, String)> =
        all.iter().map(|row| (text(row, "capability"), text(row, "outcome"))).collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("requirements.create".to_owned(), "error".to_owned()),
            ("requirements.create".to_owned(), "success".to_owned()),
            ("requirements.search".to_owned(), "success".to_owned()),
            ("requirements.update".to_owned(), "error".to_owned()),
            ("trails.meta.ping".to_owned(), "success".to_owned()),
        ]
    );
    let kinds = kg
        .sparql("SELECT ?kind WHERE { GRAPH ?a { ?a <https://w3id.org/trails/capability#errorKind> ?kind } }", &[])
        .await
        .unwrap();
    assert_eq!(kinds.iter().map(|row| text(row, "kind")).collect::<Vec<_>>(), ["precondition_failed"]);
    // The search read the requirement; the meta call is typed as such.
    let used = kg
        .sparql(
            &format!("ASK {{ GRAPH ?a {{ ?a <{PROV}used> <{iri}> ; <https://w3id.org/trails/capability#capability> \"requirements.search\" }} }}"),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(used[0][0].1.to_string(), "\"true\"^^<http://www.w3.org/2001/XMLSchema#boolean>");
    let meta =
        kg.sparql("ASK { GRAPH ?a { ?a a <https://w3id.org/trails/capability#MetaActivity> } }", &[]).await.unwrap();
    assert_eq!(meta[0][0].1.to_string(), "\"true\"^^<http://www.w3.org/2001/XMLSchema#boolean>");
}

async fn activity_count(kg: &Kg) -> usize {
    kg.sparql(&format!("SELECT ?a WHERE {{ GRAPH ?a {{ ?a a <{PROV}Activity> }} }}"), &[]).await.unwrap().len()
}

async fn provenance_retention_is_bounded(kg: Kg) {
    let addr = serve_with(kg.clone(), "[kg]\nprovenance_keep = 10").await;
    let client = connect(addr).await;
    for _ in 0..120 {
        call(&client, "trails_meta_ping", json!({})).await.unwrap();
    }
    // Each call retires the oldest activities before it answers: nothing to wait for.
    assert_eq!(activity_count(&kg).await, 10);
}

/// Found by the soak: pruning in a background pass (every 100 calls) fell behind callers, and the
/// store — the engine's memory with it — grew with the load (18,000 activities of 1,000 kept
/// after 30 s; 38,000 after 8 minutes at 1,400 calls/s). Each call now retires the oldest as it
/// records its own, so the log never runs past `keep` by more than the calls in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provenance_pruning_keeps_up_with_concurrent_callers() {
    const CALLS: usize = 3000;
    const CALLERS: usize = 32;
    let kg = Kg::temporary().unwrap();
    let addr = serve_with(kg.clone(), "[kg]\nprovenance_keep = 10").await;
    let client = connect(addr).await;
    let mut callers = tokio::task::JoinSet::new();
    for worker in 0..CALLERS {
        let peer = client.peer().clone();
        callers.spawn(async move {
            for _ in (worker..CALLS).step_by(CALLERS) {
                peer.call_tool(CallToolRequestParams::new("trails_meta_ping")).await.unwrap();
            }
        });
    }
    let mut most = 0;
    while !callers.is_empty() {
        tokio::select! {
            done = callers.join_next() => { done.unwrap().unwrap(); }
            _ = tokio::time::sleep(Duration::from_millis(20)) => most = most.max(activity_count(&kg).await),
        }
    }
    assert!(most <= 10 + CALLERS, "{most} activities kept during the load; keep is 10, {CALLERS} calls in flight");
    assert_eq!(activity_count(&kg).await, 10, "once the calls answered");
}

/// Activities left by an earlier run with a larger `keep` are read at the first call and drained
/// a few per call, oldest first, down to `keep`.
#[tokio::test]
async fn provenance_left_over_a_lowered_keep_drains_oldest_first() {
    let kg = Kg::temporary().unwrap();
    {
        let addr = serve_with(kg.clone(), "[kg]\nprovenance_keep = 100").await;
        let client = connect(addr).await;
        for _ in 0..60 {
            call(&client, "trails_meta_ping", json!({})).await.unwrap();
        }
    }
    let earlier = activities_oldest_first(&kg).await;
    assert_eq!(earlier.len(), 60);
    let addr = serve_with(kg.clone(), "[kg]\nprovenance_keep = 5").await;
    let client = connect(addr).await;
    for calls in 1..=30 {
        call(&client, "trails_meta_ping", json!({})).await.unwrap();
        let now = activities_oldest_first(&kg).await;
        let left: Vec<&String> = earlier.iter().filter(|iri| now.contains(iri)).collect();
        assert!(earlier.ends_with(&left.iter().map(|iri| (*iri).clone()).collect::<Vec<_>>()), "oldest first");
        if now.len() == 5 && calls >= 5 {
            assert!(left.is_empty(), "the newest five are this run's");
            return;
        }
        assert!(now.len() <= 60 + calls, "{} activities after {calls} calls", now.len());
    }
    panic!("60 activities of an earlier run were not drained to keep = 5 within 30 calls");
}

async fn activities_oldest_first(kg: &Kg) -> Vec<String> {
    let rows = kg
        .sparql(&format!("SELECT ?a WHERE {{ GRAPH ?a {{ ?a <{PROV}startedAtTime> ?t }} }} ORDER BY ?t ?a"), &[])
        .await
        .unwrap();
    rows.iter().map(|row| row[0].1.to_string().trim_matches(['<', '>']).to_owned()).collect()
}

#[tokio::test]
async fn a_requirement_created_over_mcp_survives_sigkill_with_its_provenance() {
    let mut server = crate::fixture().http();
    let client = connect(server.addr).await;
    call(&client, "requirements_create", requirement("REQ-42", None)).await.unwrap();
    server.kill(); // SIGKILL: no shutdown code runs
    drop(client);

    let store = EmbeddedStore::open(&server.store_path(), Synchronous::Full).unwrap();
    let kg = Kg::new(Arc::new(store), trails::kg::DEFAULT_BASE);
    let stored = kg.get::<Requirement>("REQ-42").await.unwrap().expect("the acknowledged requirement is there");
    assert_eq!(stored.value.title, "Single sign-on");
    assert_eq!(
        activities_generating(&kg, &stored.iri).await,
        [("requirements.create".to_owned(), "success".to_owned())],
        "with its provenance activity"
    );
    drop(kg);

    // And the restarted server serves it.
    server.restart();
    let client = connect(server.addr).await;
    let found = call(&client, "requirements_search", json!({"text": "sign"})).await.unwrap();
    assert_eq!(found.structured_content.unwrap()["items"][0]["req_id"], "REQ-42");
}

/// The example's search and stats are typed queries: title text (any case) and status, ordered
/// by priority then key, bounded by `limit`; a count per status.
#[tokio::test]
async fn the_examples_search_filters_and_orders_and_its_stats_count_per_status() {
    const TOKEN: &str = "kg-mcp-stats-token";
    let toml = format!(
        "[mcp]\nscopes = [\"builder\"]\n[[http.tokens]]\nname = \"builder\"\nsha256 = \"{}\"\nscopes = [\"builder\"]",
        trails::auth::sha256_hex(TOKEN)
    );
    let client = client::connect(serve_toml(Kg::temporary().unwrap(), &toml).await, Some(TOKEN)).await;
    let rows = [
        ("REQ-1", "Single sign-on", "proposed", 3),
        ("REQ-2", "SSO sign-in page", "accepted", 1),
        ("REQ-3", "Sign-up form", "proposed", 1),
        ("REQ-4", "Audit log", "proposed", 1),
        ("REQ-5", "Design sign-off", "proposed", 1),
    ];
    for (id, title, status, priority) in rows {
        let value = json!({"req_id": id, "title": title, "status": status, "priority": priority, "tags": []});
        call(&client, "requirements_create", value).await.unwrap();
    }
    let ids = |found: rmcp::model::CallToolResult| -> Vec<String> {
        let items = found.structured_content.unwrap()["items"].as_array().unwrap().clone();
        items.iter().map(|item| item["req_id"].as_str().unwrap().to_owned()).collect()
    };
    let proposed = call(&client, "requirements_search", json!({"text": "SIGN", "status": "proposed"})).await.unwrap();
    assert_eq!(ids(proposed), ["REQ-3", "REQ-5", "REQ-1"], "priority, then key; REQ-2 is accepted, REQ-4 has no sign");
    let first = call(&client, "requirements_search", json!({"limit": 2})).await.unwrap();
    assert_eq!(ids(first), ["REQ-2", "REQ-3"]);
    let stats = call(&client, "trails_meta_requirements_stats", json!({})).await.unwrap();
    assert_eq!(
        stats.structured_content.unwrap(),
        json!({"requirements": 5, "people": 0,
               "by_status": [{"status": "accepted", "count": 1}, {"status": "proposed", "count": 4}]})
    );
}

/// Serve the example app with `toml` (and `env` for `TRAILS_*` variables), create a requirement
/// over MCP, and find it and its activity through `kg`, a handle on the same remote store.
async fn a_configured_remote_store_receives_the_write(toml: &str, env: &[(&str, &str)], kg: Kg) {
    // The app picks the remote store from configuration alone.
    let addr = in_process::serve(trails::App::new(), in_process::settings_with_env(toml, env)).await.addr;
    let client = connect(addr).await;
    call(&client, "requirements_create", requirement("REQ-5", None)).await.unwrap();

    assert!(kg.get::<Requirement>("REQ-5").await.unwrap().is_some(), "the requirement is in the remote store");
    assert_eq!(activities_generating(&kg, "urn:trails:kg/Requirement/REQ-5").await.len(), 1, "with its activity");
    // The example's search binds its text into a FILTER: found on the remote store too.
    let found = call(&client, "requirements_search", json!({"text": "SIGN-ON", "status": "proposed"})).await.unwrap();
    assert_eq!(found.structured_content.unwrap()["items"][0]["req_id"], "REQ-5");
    // The same validation as on the embedded store: a duplicate is a -32602 and changes nothing.
    let error = call(&client, "requirements_create", requirement("REQ-5", None)).await.unwrap_err();
    assert_eq!(error.code.0, -32602, "{error:?}");
}

#[tokio::test]
#[ignore = "needs Oxigraph server (PyPI oxigraph==0.5.13): `cargo xtask test` installs it and runs this"]
async fn a_server_configured_with_an_oxigraph_endpoint_writes_there() {
    let oxigraph = trails_tests::servers::OxigraphServer::start();
    let toml = format!("[kg]\nquery_url = \"{}\"\nupdate_url = \"{}\"", oxigraph.query_url(), oxigraph.update_url());
    a_configured_remote_store_receives_the_write(&toml, &[], oxigraph.kg()).await;
}

#[tokio::test]
#[ignore = "needs Virtuoso 7 (Debian virtuoso-opensource-7-bin): `cargo xtask test` installs it and runs this"]
async fn a_server_configured_with_a_virtuoso_endpoint_and_a_password_from_the_environment_writes_there() {
    let virtuoso = trails_tests::servers::VirtuosoServer::start();
    let (user, password) = virtuoso.credentials();
    let toml = format!(
        "[kg]\nquery_url = \"{}\"\nupdate_url = \"{}\"\nuser = \"{user}\"",
        virtuoso.query_url(),
        virtuoso.update_url()
    );
    a_configured_remote_store_receives_the_write(&toml, &[("TRAILS_KG_PASSWORD", &password)], virtuoso.kg()).await;
}

#[tokio::test]
#[ignore = "needs Oxigraph server (PyPI oxigraph==0.5.13): `cargo xtask test` installs it and runs this"]
async fn a_server_configured_with_an_https_endpoint_and_a_ca_file_writes_there() {
    let oxigraph = trails_tests::servers::OxigraphServer::start();
    let proxy = trails_tests::servers::TlsProxy::start(oxigraph.addr());
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, proxy.ca_pem()).unwrap();
    let toml = format!("[kg]\nquery_url = \"{}\"\nupdate_url = \"{}\"", proxy.url("/query"), proxy.url("/update"));
    let ca = ca_file.display().to_string();
    a_configured_remote_store_receives_the_write(&toml, &[("TRAILS_KG_CA_FILE", &ca)], oxigraph.kg()).await;
}

/// The text of a `resources/read`, as JSON, or the error.
async fn read(client: &RunningService<RoleClient, ()>, uri: &str) -> Result<(String, Value), ErrorData> {
    match client.read_resource(rmcp::model::ReadResourceRequestParams::new(uri)).await {
        Ok(result) => match result.contents.into_iter().next().expect("one content") {
            rmcp::model::ResourceContents::TextResourceContents { mime_type, text, .. } => {
                Ok((mime_type.unwrap_or_default(), serde_json::from_str(&text).unwrap()))
            }
            other => panic!("{uri}: expected text, got {other:?}"),
        },
        Err(ServiceError::McpError(error)) => Err(error),
        Err(other) => panic!("transport failure reading {uri}: {other}"),
    }
}

#[tokio::test]
async fn node_types_are_resources_a_filtered_page_equals_the_typed_api_and_next_walks_every_page() {
    let kg = Kg::temporary().unwrap();
    let addr = serve(kg.clone()).await;
    let client = connect(addr).await;
    for n in 0..7 {
        let mut value = requirement(&format!("REQ-{n}"), None);
        value["status"] = json!(if n % 2 == 0 { "proposed" } else { "accepted" });
        call(&client, "requirements_create", value).await.unwrap();
    }

    let listed: Vec<String> = client.list_resources(None).await.unwrap().resources.into_iter().map(|r| r.uri).collect();
    assert!(listed.contains(&"trails://kg/Requirement".to_owned()) && listed.contains(&"trails://kg/types".to_owned()));
    let templates: Vec<String> = client
        .list_resource_templates(None)
        .await
        .unwrap()
        .resource_templates
        .into_iter()
        .map(|t| t.uri_template)
        .collect();
    assert!(templates.contains(&"trails://kg/Requirement{?where,limit,offset}".to_owned()), "{templates:?}");
    assert!(templates.contains(&"trails://kg/Requirement/{id}".to_owned()));

    // The criterion: the filtered resource equals the typed API, page by page.
    let ctx = trails::Ctx::local().with_kg(kg.clone());
    let typed = Requirement::objects(&ctx).where_eq(Requirement::FIELDS.status, "proposed").all().await.unwrap();
    let mut uri = Some("trails://kg/Requirement?where=status=proposed&limit=3".to_owned());
    let mut seen = Vec::new();
    while let Some(next) = uri {
        let (mime, page) = read(&client, &next).await.unwrap();
        assert_eq!(mime, "application/json");
        assert_eq!(page["total"], 4);
        seen.extend(page["items"].as_array().unwrap().iter().map(|item| item["iri"].as_str().unwrap().to_owned()));
        uri = page["next"].as_str().map(str::to_owned);
    }
    assert_eq!(seen, typed.iter().map(|stored| stored.iri.clone()).collect::<Vec<_>>());

    // Each list item names its instance resource.
    let (_, first) = read(&client, "trails://kg/Requirement?limit=1").await.unwrap();
    let item_uri = first["items"][0]["uri"].as_str().unwrap().to_owned();
    let (_, via_item) = read(&client, &item_uri).await.unwrap();
    assert_eq!(via_item["@id"], first["items"][0]["iri"]);
    // One instance, as JSON-LD keyed by predicate IRI.
    let (mime, document) = read(&client, "trails://kg/Requirement/REQ-2").await.unwrap();
    assert_eq!(mime, "application/ld+json");
    assert_eq!(document["@id"], "urn:trails:kg/Requirement/REQ-2");
    assert_eq!(document["https://example.org/req#status"], "proposed");
    assert_eq!(document["@type"], json!(["https://example.org/req#Requirement"]));
    let (_, types) = read(&client, "trails://kg/types").await.unwrap();
    assert!(types["types"].as_array().unwrap().iter().any(|t| t["label"] == "Requirement" && t["instances"] == 7));

    // Errors: unknown resources, the grammar, and a value of the wrong datatype.
    for unknown in ["trails://kg/Requirement/REQ-99", "trails://kg/Nope", "trails://schemaless"] {
        let error = read(&client, unknown).await.unwrap_err();
        assert_eq!((error.code.0, error.data.unwrap()["uri"].clone()), (-32602, json!(unknown)));
    }
    let operator = read(&client, "trails://kg/Requirement?where=priority>1").await.unwrap_err();
    assert!(operator.message.contains("exactly one clause"), "{}", operator.message);
    let mismatch = read(&client, "trails://kg/Requirement?where=priority=high").await.unwrap_err();
    assert_eq!(
        mismatch.data.unwrap(),
        json!({"uri": "trails://kg/Requirement?where=priority=high", "field": "priority", "reason": "type_mismatch", "expected_datatype": "xsd:integer"})
    );
    let (_, clamped) = read(&client, "trails://kg/Requirement?limit=5000").await.unwrap();
    assert_eq!(clamped["limit"], 1000);
    assert!(clamped["clamped"].as_str().unwrap().contains("5000"));

    // The fixed resources.
    let (_, stats) = read(&client, "trails://stats").await.unwrap();
    assert_eq!(stats["instances"]["Requirement"], 7);
    // What other callers do is not an anonymous caller's to watch: the bounds, not the activity.
    assert!(stats["provenance"]["activities"].is_null() && stats["budgets"].is_null(), "{stats}");
    assert!(stats["subscriptions"].is_null() && stats["continuations"].is_null(), "{stats}");
    assert_eq!(stats["provenance"]["keep"], 100_000, "{stats}");
    assert!(stats["activity"].as_str().unwrap().contains("callers with a token"), "{stats}");
    let (_, schema) = read(&client, "trails://schema").await.unwrap();
    let requirement = schema["shapes"].as_array().unwrap().iter().find(|s| s["name"] == "Requirement").unwrap();
    assert_eq!(requirement["schema"]["type"], "object");
    let status =
        &requirement["node_type"]["predicates"].as_array().unwrap().iter().find(|p| p["field"] == "status").unwrap();
    assert_eq!(status["iri"], "https://example.org/req#status");
    assert!(!listed.contains(&"trails://doctor".to_owned()), "anonymous callers are runtime callers");
}

#[tokio::test]
async fn a_builder_reads_the_store_health_and_the_latest_provenance() {
    const TOKEN: &str = "kg-mcp-builder-token";
    let kg = Kg::temporary().unwrap();
    let toml = format!(
        "[mcp]\nscopes = [\"dev\"]\n[[http.tokens]]\nname = \"builder\"\nsha256 = \"{}\"\nscopes = [\"builder\"]",
        trails::auth::sha256_hex(TOKEN)
    );
    let addr = serve_toml(kg, &toml).await;
    let client = client::connect(addr, Some(TOKEN)).await;
    for id in ["REQ-1", "REQ-2"] {
        call(&client, "requirements_create", requirement(id, None)).await.unwrap();
    }
    let listed: Vec<String> = client.list_resources(None).await.unwrap().resources.into_iter().map(|r| r.uri).collect();
    assert!(listed.contains(&"trails://doctor".to_owned()) && listed.contains(&"trails://prov/latest".to_owned()));
    let (_, doctor) = read(&client, "trails://doctor").await.unwrap();
    assert_eq!(doctor["ok"], true, "{doctor}");
    assert_eq!(doctor["checks"][0]["check"], "store");
    let (_, latest) = read(&client, "trails://prov/latest").await.unwrap();
    let activities = latest["activities"].as_array().unwrap();
    assert_eq!(activities.len(), 2);
    assert_eq!(activities[0]["capability"], "requirements.create");
    assert_eq!(activities[0]["agent"], "urn:trails:kg/agent/builder");
    assert!(activities[0]["started"].as_str() >= activities[1]["started"].as_str(), "newest first");
}

#[tokio::test]
async fn builder_resources_are_unknown_to_a_runtime_caller() {
    let kg = Kg::temporary().unwrap();
    let client = connect(serve_toml(kg, "").await).await;
    let listed: Vec<String> = client.list_resources(None).await.unwrap().resources.into_iter().map(|r| r.uri).collect();
    assert!(listed.contains(&"trails://stats".to_owned()));
    for builder_only in ["trails://doctor", "trails://prov/latest", "trails://doctor?probe=1"] {
        assert!(!listed.contains(&builder_only.to_owned()), "{builder_only} listed to a runtime caller");
        let error = read(&client, builder_only).await.unwrap_err();
        assert_eq!((error.code.0, error.data.unwrap()), (-32602, json!({ "uri": builder_only })));
    }
}

#[tokio::test]
async fn next_never_repeats_or_skips_an_instance_while_writes_land_between_pages() {
    let kg = Kg::temporary().unwrap();
    let addr = serve(kg.clone()).await;
    let client = connect(addr).await;
    let create = |id: String| {
        let kg = kg.clone();
        async move {
            let value: Requirement = serde_json::from_value(requirement(&id, None)).unwrap();
            kg.create(value).await.unwrap();
        }
    };
    let at_start: Vec<String> = (10..30).map(|n| format!("REQ-{n}")).collect();
    for id in &at_start {
        create(id.clone()).await;
    }
    let mut uri = Some("trails://kg/Requirement?limit=4".to_owned());
    let (mut seen, mut page_number) = (Vec::<String>::new(), 0);
    while let Some(next) = uri {
        let (_, page) = read(&client, &next).await.unwrap();
        for item in page["items"].as_array().unwrap() {
            let id = item["id"].as_str().unwrap().to_owned();
            assert!(!seen.contains(&id), "{id} served twice");
            seen.push(id);
        }
        uri = page["next"].as_str().map(str::to_owned);
        // Between pages, instances appear before and after the cursor (an offset would now
        // repeat one page's last items or skip the next page's first).
        create(format!("REQ-0{page_number}")).await;
        create(format!("REQ-9{page_number}")).await;
        page_number += 1;
    }
    for id in &at_start {
        assert!(seen.contains(id), "{id} was skipped");
    }
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(seen, sorted, "pages come in IRI order");
}

/// The criterion over stdio: the fixture server as a child process writes and serves the
/// pages; once it has exited, the typed API reads its store — and finds the same instances.
#[tokio::test]
async fn over_stdio_a_filtered_page_walk_equals_the_typed_api() {
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;
    let dir = tempfile::tempdir().unwrap();
    let command = crate::fixture().stdio_command(dir.path());
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    for n in 0..9 {
        let mut value = requirement(&format!("REQ-{n}"), None);
        value["status"] = json!(if n % 3 == 0 { "accepted" } else { "proposed" });
        call(&client, "requirements_create", value).await.unwrap();
    }
    let mut uri = Some("trails://kg/Requirement?where=status=proposed&limit=4".to_owned());
    let (mut served, mut pages) = (Vec::new(), 0);
    while let Some(next) = uri {
        let (_, page) = read(&client, &next).await.unwrap();
        assert_eq!(page["total"], 6);
        served.extend(page["items"].as_array().unwrap().iter().map(|item| item["iri"].as_str().unwrap().to_owned()));
        uri = page["next"].as_str().map(str::to_owned);
        pages += 1;
    }
    assert_eq!(pages, 2);
    client.cancel().await.unwrap();

    // The server exits on end of input; until then it holds the store's lock.
    let deadline = Instant::now() + Duration::from_secs(20);
    let store = loop {
        match EmbeddedStore::open(&dir.path().join("kg"), Synchronous::Full) {
            Ok(store) => break store,
            Err(error) => assert!(Instant::now() < deadline, "the store stays locked: {error}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let kg = Kg::new(Arc::new(store), trails::kg::DEFAULT_BASE);
    let ctx = trails::Ctx::local().with_kg(kg);
    let typed = Requirement::objects(&ctx).where_eq(Requirement::FIELDS.status, "proposed").all().await.unwrap();
    assert_eq!(served, typed.iter().map(|stored| stored.iri.clone()).collect::<Vec<_>>());
}

/// A blob as a client sends it.
fn sent_blob(media_type: &str, bytes: &[u8]) -> Value {
    use base64::Engine as _;
    json!({ "media_type": media_type, "base64": base64::engine::general_purpose::STANDARD.encode(bytes) })
}

#[tokio::test]
async fn a_blob_is_sent_as_base64_shown_to_models_as_metadata_and_fetched_by_its_sha256() {
    use base64::Engine as _;
    let kg = Kg::temporary().unwrap();
    let addr = serve(kg.clone()).await;
    let client = connect(addr).await;
    // Bytes no text decoder would pass through: every byte value, NULs included.
    let file: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let preview = b"\x89PNG\r\n\x1a\n preview".to_vec();
    let encoded_file = base64::engine::general_purpose::STANDARD.encode(&file);
    let arguments = json!({
        "name": "manual",
        "file": sent_blob("application/pdf", &file),
        "previews": [sent_blob("image/png", &preview)],
    });
    let created = call(&client, "fixtures_attachment_create", arguments).await.unwrap();
    let shown = created.structured_content.clone().expect("structured");
    let sha = trails::Blob::new("application/pdf", file.clone()).unwrap().sha256();
    assert_eq!(
        shown["file"],
        json!({"media_type": "application/pdf", "size": 50_000, "sha256": sha, "uri": format!("trails://blob/{sha}")}),
        "the result shows the blob's metadata"
    );
    let text = serde_json::to_string(&created.content).unwrap();
    assert!(!text.contains(&encoded_file[..64]) && !text.contains("base64"), "no bytes in content[]");
    assert!(!serde_json::to_string(&shown).unwrap().contains("base64"), "no bytes in structuredContent");

    // The model-controlled read and the JSON-LD resource show the same metadata, no bytes.
    let got = call(&client, "trails_kg_get", json!({"node_type": "Attachment", "id": "manual"})).await.unwrap();
    let got = got.structured_content.unwrap();
    assert_eq!(got["fields"]["file"], shown["file"]);
    assert_eq!(got["fields"]["previews"], shown["previews"]);
    let (mime, document) = read(&client, "trails://kg/Attachment/manual").await.unwrap();
    assert_eq!(mime, "application/ld+json");
    assert_eq!(document["https://example.org/files#file"], shown["file"]);
    assert!(!document.to_string().contains(&encoded_file[..64]));

    // A host that reads resources fetches the bytes at the blob's URI.
    let uri = format!("trails://blob/{sha}");
    let fetched = client.read_resource(rmcp::model::ReadResourceRequestParams::new(&uri)).await.unwrap();
    match fetched.contents.as_slice() {
        [rmcp::model::ResourceContents::BlobResourceContents { uri: at, mime_type, blob, .. }] => {
            assert_eq!((at.as_str(), mime_type.as_deref()), (uri.as_str(), Some("application/pdf")));
            assert_eq!(base64::engine::general_purpose::STANDARD.decode(blob).unwrap(), file);
        }
        other => panic!("expected one blob content, got {other:?}"),
    }
    // A digest nothing holds is unknown; a malformed one says what a blob URI is; none is
    // subscribable (a blob never changes).
    let absent = read(&client, &format!("trails://blob/{}", "0".repeat(64))).await.unwrap_err();
    assert!(absent.message.contains("unknown resource"), "{absent:?}");
    let malformed = read(&client, "trails://blob/ABC").await.unwrap_err();
    assert!(malformed.message.contains("64 lowercase hex digits"), "{malformed:?}");
    // The 2025-* request (what this client's session speaks).
    #[allow(deprecated)]
    let subscribed = client.subscribe(rmcp::model::SubscribeRequestParams::new(&uri)).await;
    let Err(ServiceError::McpError(refused)) = subscribed else { panic!("a blob is not subscribable: {subscribed:?}") };
    assert_eq!(refused.data.unwrap()["subscribable"], false);

    // What a client gets wrong is a FieldError at the blob's member, and nothing is stored.
    let bad = json!({
        "name": "broken",
        "file": {"media_type": "pdf", "base64": "not base64!"},
        "previews": [shown["file"].clone()],
    });
    let error = call(&client, "fixtures_attachment_create", bad).await.unwrap_err();
    assert_eq!(error.code.0, -32602);
    let fields: Vec<(String, String)> = error.data.unwrap()["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["field"].as_str().unwrap().to_owned(), e["code"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(
        fields,
        [
            ("file/media_type".to_owned(), "pattern".to_owned()),
            ("file/base64".to_owned(), "pattern".to_owned()),
            ("previews/0/base64".to_owned(), "required".to_owned()),
        ],
        "a blob shown in a result cannot be sent back without its bytes"
    );
    assert!(kg.get::<trails_tests::Attachment>("broken").await.unwrap().is_none());
}

/// Follow `trails_meta_kg_validate` from `arguments` to the end: (instances checked, violations
/// as (id, [(field, code)]), answers). Every answer fits the test server's 1024-character window.
async fn walk(
    client: &RunningService<RoleClient, ()>,
    kg: &Kg,
    mut arguments: Value,
) -> (u64, Vec<(String, Vec<(String, String)>)>, usize) {
    let (mut checked, mut found, mut pages) = (0, Vec::new(), 0);
    loop {
        pages += 1;
        assert!(pages < 20, "the walk ends");
        let result = call(client, "trails_meta_kg_validate", arguments.clone()).await.unwrap();
        let answer = result.structured_content.clone().unwrap();
        let text = result.content[0].as_text().unwrap().text.clone();
        assert!(text.chars().count() <= 1024, "the answer fits the window: {text}");
        checked += answer["checked"].as_u64().unwrap();
        for violation in answer["violations"].as_array().unwrap() {
            let fields = violation["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| (f["field"].as_str().unwrap().to_owned(), f["code"].as_str().unwrap().to_owned()))
                .collect();
            assert_eq!(violation["iri"], kg.iri::<Requirement>(violation["id"].as_str().unwrap()));
            found.push((violation["id"].as_str().unwrap().to_owned(), fields));
        }
        if answer["next_call"].is_null() {
            return (checked, found, pages);
        }
        assert_eq!(answer["next_call"]["tool"], "trails_meta_kg_validate");
        arguments = answer["next_call"]["arguments"].clone();
    }
}

/// Rewrite what the store holds for requirement `id` with `edit`, around Trails (as another
/// writer of a shared store could): no validation, only the store's own atomic write.
async fn rewrite_around_trails(
    store: &Arc<EmbeddedStore>,
    kg: &Kg,
    id: &str,
    edit: impl FnOnce(&mut Vec<(trails::kg::NamedNode, Term)>),
) {
    use trails::kg::{Check, NamedNode, Store, Write};
    let graph = NamedNode::new(format!("{}/graph/Requirement", kg.base())).unwrap();
    let subject = NamedNode::new(kg.iri::<Requirement>(id)).unwrap();
    let mut triples = store.describe(graph.clone(), subject.clone()).await.unwrap();
    assert!(!triples.is_empty(), "{id} is stored");
    edit(&mut triples);
    let checks = vec![Check::Present { field: "req_id".into(), value: json!(id) }];
    store.write(Write { graph, subject, triples, checks, blobs: Vec::new() }).await.unwrap();
}

#[tokio::test]
async fn kg_validate_reports_what_stored_instances_break_per_iri_a_window_at_a_time() {
    use trails::kg::{Literal, NamedNode};
    const TOKEN: &str = "kg-validate-builder-token";
    let store = Arc::new(EmbeddedStore::temporary().unwrap());
    let kg = Kg::new(store.clone(), trails::kg::DEFAULT_BASE);
    // The smallest window, so the walk must stop early and continue.
    let toml = format!(
        "[mcp]\nscopes = [\"dev\"]\ntool_window_chars = 1024\n\
         [[http.tokens]]\nname = \"builder\"\nsha256 = \"{}\"\nscopes = [\"builder\"]",
        trails::auth::sha256_hex(TOKEN)
    );
    let addr = serve_toml(kg.clone(), &toml).await;
    let client = client::connect(addr, Some(TOKEN)).await;
    for n in 1..=5 {
        call(&client, "requirements_create", requirement(&format!("REQ-{n}"), None)).await.unwrap();
    }
    let req = |name: &str| NamedNode::new(format!("https://example.org/req#{name}")).unwrap();
    let xsd_integer = NamedNode::new("http://www.w3.org/2001/XMLSchema#integer").unwrap();
    // REQ-2: a title too short, a status outside the list, and a second priority.
    rewrite_around_trails(&store, &kg, "REQ-2", |triples| {
        for (predicate, object) in triples.iter_mut() {
            if *predicate == req("title") {
                *object = Literal::new_simple_literal("ab").into();
            } else if *predicate == req("status") {
                *object = Literal::new_simple_literal("shipped").into();
            }
        }
        triples.push((req("priority"), Literal::new_typed_literal("4", xsd_integer.clone()).into()));
    })
    .await;
    // REQ-4: a priority that is not an integer.
    rewrite_around_trails(&store, &kg, "REQ-4", |triples| {
        for (predicate, object) in triples.iter_mut() {
            if *predicate == req("priority") {
                *object = Literal::new_simple_literal("high").into();
            }
        }
    })
    .await;

    let (checked, found, pages) = walk(&client, &kg, json!({ "node_type": "Requirement" })).await;
    assert_eq!(checked, 5, "every instance checked once");
    assert!(pages > 1, "both violations do not fit 1024 characters: the walk continued");
    let ids: Vec<&str> = found.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["REQ-2", "REQ-4"], "{found:?}");
    let codes = |fields: &[(String, String)]| {
        let mut codes: Vec<(String, String)> = fields.to_vec();
        codes.sort();
        codes
    };
    let pair = |field: &str, code: &str| (field.to_owned(), code.to_owned());
    assert_eq!(
        codes(&found[0].1),
        [pair("priority", "max_count"), pair("status", "one_of"), pair("title", "min_length")],
        "{found:?}"
    );
    assert_eq!(codes(&found[1].1), [pair("priority", "required"), pair("priority", "type_mismatch")], "{found:?}");

    // Every node type in turn: the example's people (none stored) and requirements.
    let (all, everywhere, _) = walk(&client, &kg, json!({ "limit": 1000 })).await;
    assert_eq!(all, 5, "no other node type has instances");
    assert_eq!(everywhere, found, "the same violations");

    let error = call(&client, "trails_meta_kg_validate", json!({ "node_type": "Nope" })).await.unwrap_err();
    assert_eq!(error.data.unwrap()["fields"][0]["field"], "node_type");
    let error = call(&client, "trails_meta_kg_validate", json!({ "cursor": "garbage" })).await.unwrap_err();
    assert_eq!(error.data.unwrap()["fields"][0]["field"], "cursor");
}
