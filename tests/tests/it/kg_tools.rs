//! The PDPP rule (`runtime/guide/03-knowledge-graph.md`): a host that shows the model only tool
//! results — no resources — still reaches all of the knowledge graph through `trails.kg.list`, `trails.kg.get` and
//! `trails.kg.read_field`, never seeing more than the window in one result, following only the
//! `next_call` each result gives. Over Streamable HTTP (5,000 requirements and a 1 MB field,
//! the default window) and stdio (the fixture server, a 1,024-character window).

use std::collections::BTreeSet;
use std::sync::Arc;

use requirements::model::Requirement;
use rmcp::model::ErrorData;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use trails::kg::{EmbeddedStore, Kg, Synchronous};
use trails_tests::{in_process, Note};

type Client = RunningService<RoleClient, ()>;

/// A tool result as a content-only host sees it: the text of `content[]`, which must be the
/// JSON of `structuredContent` and fit `window`.
async fn call(client: &Client, tool: &str, arguments: &Value, window: usize) -> Result<Value, ErrorData> {
    let result = trails_tests::client::call(client, tool, arguments.clone()).await?;
    let text = result.content[0].as_text().expect("a text block").text.clone();
    assert!(
        text.chars().count() <= window,
        "{tool} returned {} characters; the window is {window}",
        text.chars().count()
    );
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(Some(&parsed), result.structured_content.as_ref(), "structuredContent mirrors the text");
    Ok(parsed)
}

/// A call that must succeed, whatever it answers.
async fn setup(client: &Client, tool: &str, arguments: Value) {
    trails_tests::client::call(client, tool, arguments).await.unwrap_or_else(|e| panic!("{tool}: {e:?}"));
}

/// Follow `next_call` from `first` until there is none; every result in order.
async fn follow(client: &Client, tool: &str, first: &Value, window: usize) -> Vec<Value> {
    let mut results = vec![call(client, tool, first, window).await.unwrap()];
    while let Some(next) = results.last().unwrap().get("next_call").filter(|c| !c.is_null()).cloned() {
        assert_eq!(next["tool"], tool);
        results.push(call(client, tool, &next["arguments"], window).await.unwrap());
        assert!(results.len() < 100_000, "next_call never ends");
    }
    results
}

/// A text that escapes in JSON (quotes, backslashes, line breaks) and has multi-byte characters.
fn long_text(chars: usize) -> String {
    let unit = "Line \"quoted\" with a back\\slash, a tab\tand ünïcödé — ✓ 🦀\n";
    unit.chars().cycle().take(chars).collect()
}

/// What the criteria need: every requirement reached by paging, the filter equal to the typed
/// API, a long note read to its end through the cut `trails.kg.get` names, and the errors.
async fn a_content_only_host_reaches_everything(client: Client, window: usize, requirements: usize, note: &str) {
    // Every requirement, page by page, by `next_call` alone.
    let pages = follow(&client, "trails_kg_list", &json!({"node_type": "Requirement"}), window).await;
    let ids: Vec<String> = pages
        .iter()
        .flat_map(|p| p["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_owned()))
        .collect();
    let unique: BTreeSet<&String> = ids.iter().collect();
    assert_eq!((ids.len(), unique.len()), (requirements, requirements), "every instance once");
    assert!(pages.iter().all(|p| p["total"] == requirements));
    assert!(pages.len() > 1);

    // A filter, as the resources and the typed API read it.
    let proposed = follow(
        &client,
        "trails_kg_list",
        &json!({"node_type": "Requirement", "filter": "status=proposed", "limit": 1000}),
        window,
    )
    .await;
    let count: usize = proposed.iter().map(|p| p["items"].as_array().unwrap().len()).sum();
    assert_eq!(count, requirements.div_ceil(2));

    // One requirement; then the note, whose body does not fit.
    let got =
        call(&client, "trails_kg_get", &json!({"node_type": "Requirement", "id": "REQ-1"}), window).await.unwrap();
    assert_eq!((got["fields"]["req_id"].as_str(), got["cut_fields"].as_array().unwrap().len()), (Some("REQ-1"), 0));
    assert!(got.get("cut").is_none(), "nothing cut, nothing said: {got}");
    let got = call(&client, "trails_kg_get", &json!({"node_type": "Note", "id": "long"}), window).await.unwrap();
    let cut = &got["cut_fields"][0];
    assert_eq!(got["next_call"], cut["next_call"], "the first cut field reads on: {got}");
    assert!(got["cut"].as_str().unwrap().starts_with("fields cut to fit the window: body"), "{got}");
    assert_eq!((cut["field"].as_str(), cut["total_chars"].as_u64()), (Some("body"), Some(note.chars().count() as u64)));
    let shown = got["fields"]["body"].as_str().unwrap_or_default().to_owned();
    assert_eq!(shown.chars().count() as u64, cut["shown_chars"].as_u64().unwrap());
    let reads = follow(&client, "trails_kg_read_field", &cut["next_call"]["arguments"], window).await;
    let mut read = shown;
    for (n, part) in reads.iter().enumerate() {
        assert_eq!(
            part["offset"].as_u64().unwrap() as usize,
            read.chars().count(),
            "read {n} starts where the last ended"
        );
        read.push_str(part["text"].as_str().unwrap());
    }
    assert!(read == note, "the field read to its end equals what was stored ({} reads)", reads.len());
    assert!(reads.last().unwrap()["next_offset"].is_null());

    // Bad arguments: structured, naming the argument.
    let fields = |error: ErrorData| error.data.unwrap()["fields"][0].clone();
    let unknown = call(&client, "trails_kg_list", &json!({"node_type": "Nope"}), window).await.unwrap_err();
    assert_eq!((unknown.code.0, fields(unknown.clone())["field"].as_str()), (-32602, Some("node_type")));
    assert!(unknown.message.contains("validation failed"));
    let mismatch =
        call(&client, "trails_kg_list", &json!({"node_type": "Requirement", "filter": "priority=high"}), window).await;
    let mismatch = fields(mismatch.unwrap_err());
    assert_eq!((mismatch["field"].as_str(), mismatch["code"].as_str()), (Some("filter"), Some("type_mismatch")));
    let operator =
        call(&client, "trails_kg_list", &json!({"node_type": "Requirement", "filter": "priority>1"}), window).await;
    assert!(fields(operator.unwrap_err())["message"].as_str().unwrap().contains("exactly one clause"));
    // A well-formed request for what is not stored: not found, a result the model reads.
    let missing = trails_tests::client::call(&client, "trails_kg_get", json!({"node_type": "Note", "id": "absent"}))
        .await
        .unwrap();
    assert_eq!(missing.is_error, Some(true));
    let shown: Value = serde_json::from_str(&missing.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(shown["kind"], "not_found", "{shown}");
    let field =
        call(&client, "trails_kg_read_field", &json!({"node_type": "Note", "id": "long", "field": "nope"}), window)
            .await;
    assert_eq!(fields(field.unwrap_err())["field"], "field");
    // Another node type's field is in the published enum: not found, naming this type's fields.
    let other = json!({"node_type": "Note", "id": "long", "field": "title"});
    let other = trails_tests::client::call(&client, "trails_kg_read_field", other).await.unwrap();
    let shown: Value = serde_json::from_str(&other.content[0].as_text().unwrap().text).unwrap();
    assert_eq!((other.is_error, shown["kind"].as_str()), (Some(true), Some("not_found")), "{shown}");
    assert!(shown["message"].as_str().unwrap().contains("its fields: slug, body"), "{shown}");
    let past = json!({"node_type": "Note", "id": "long", "field": "body", "offset": note.chars().count() + 1});
    assert_eq!(fields(call(&client, "trails_kg_read_field", &past, window).await.unwrap_err())["field"], "offset");
    let limit = json!({"node_type": "Note", "id": "long", "field": "body", "limit_chars": 16385});
    assert_eq!(fields(call(&client, "trails_kg_read_field", &limit, window).await.unwrap_err())["code"], "max_value");
}

fn requirement(n: usize) -> Requirement {
    serde_json::from_value(json!({
        "req_id": format!("REQ-{n}"), "title": format!("Requirement number {n}"),
        "status": if n.is_multiple_of(2) { "proposed" } else { "accepted" }, "priority": 1 + n % 5, "tags": ["pdpp"],
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_content_only_host_pages_5000_requirements_and_reads_a_1mb_field_to_its_end() {
    const REQUIREMENTS: usize = 5_000;
    trails_tests::link();
    let dir = tempfile::tempdir().unwrap();
    // The 1 MB note is four times the default instance bound: this app raises it.
    let kg = Kg::new(Arc::new(EmbeddedStore::open(dir.path(), Synchronous::Normal).unwrap()), trails::kg::DEFAULT_BASE)
        .with_max_instance_bytes(2 << 20);
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let kg = kg.clone();
            tokio::spawn(async move {
                for n in (w..REQUIREMENTS).step_by(8) {
                    kg.create(requirement(n)).await.unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let note = long_text(1_000_000);
    kg.create(Note { slug: "long".into(), body: note.clone() }).await.unwrap();

    let settings = in_process::settings("");
    let window = settings.mcp.tool_window_chars;
    let addr = in_process::serve(trails::App::new().kg(kg), settings).await.addr;
    let client = trails_tests::client::connect(addr, None).await;
    a_content_only_host_reaches_everything(client, window, REQUIREMENTS, &note).await;
}

#[tokio::test]
async fn over_stdio_a_content_only_host_pages_and_reads_to_the_end_in_a_small_window() {
    const REQUIREMENTS: usize = 240;
    const WINDOW: usize = 1024;
    let dir = tempfile::tempdir().unwrap();
    let command = crate::fixture().config(format!("[mcp]\ntool_window_chars = {WINDOW}\n")).stdio_command(dir.path());
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    for n in 0..REQUIREMENTS {
        let arguments = serde_json::to_value(requirement(n)).unwrap();
        setup(&client, "requirements_create", arguments).await;
    }
    let note = long_text(30_000);
    setup(&client, "fixtures_note_create", json!({"slug": "long", "body": note})).await;
    a_content_only_host_reaches_everything(client, WINDOW, REQUIREMENTS, &note).await;
}

/// An independent client that fills the `trails_kg_*` arguments from their published schemas
/// (every `node_type` and `field` the enums offer, ids that do not exist) gets answers — pages,
/// or *not found* results — and never a `-32602`; the OpenAPI operations publish the same enums.
#[tokio::test]
async fn arguments_taken_from_the_published_schemas_are_never_invalid() {
    let app = trails::App::new().kg(Kg::temporary().unwrap());
    let addr = in_process::serve(app, in_process::settings("")).await.addr;
    let client = trails_tests::client::connect(addr, None).await;
    let tools = client.list_all_tools().await.unwrap();
    let schema = |name: &str| {
        let tool = tools.iter().find(|tool| tool.name == name).unwrap_or_else(|| panic!("{name} is listed"));
        Value::Object(tool.input_schema.as_ref().clone())
    };
    let strings = |value: &Value| -> Vec<String> {
        value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
    };
    let labels = strings(&schema("trails_kg_list")["properties"]["node_type"]["enum"]);
    let registry = trails::registry::Registry::collect().unwrap();
    let types: BTreeSet<String> = registry.node_types().map(|node| node.label.to_owned()).collect();
    assert_eq!(labels.iter().cloned().collect::<BTreeSet<_>>(), types, "every node type, no other");
    for tool in ["trails_kg_get", "trails_kg_read_field"] {
        assert_eq!(strings(&schema(tool)["properties"]["node_type"]["enum"]), labels, "{tool}");
    }
    let fields = strings(&schema("trails_kg_read_field")["properties"]["field"]["enum"]);
    assert!(fields.iter().any(|f| f == "req_id") && fields.iter().any(|f| f == "body"), "{fields:?}");

    let not_found = |result: rmcp::model::CallToolResult| {
        let shown: Value = serde_json::from_str(&result.content[0].as_text().unwrap().text).unwrap();
        assert_eq!((result.is_error, shown["kind"].as_str()), (Some(true), Some("not_found")), "{shown}");
    };
    for label in &labels {
        let page = trails_tests::client::call(&client, "trails_kg_list", json!({ "node_type": label })).await;
        assert_eq!(page.unwrap().structured_content.unwrap()["node_type"], json!(label));
        let get = json!({ "node_type": label, "id": "absent" });
        not_found(trails_tests::client::call(&client, "trails_kg_get", get).await.unwrap());
        for field in &fields {
            let read = json!({ "node_type": label, "id": "absent", "field": field });
            not_found(trails_tests::client::call(&client, "trails_kg_read_field", read).await.unwrap());
        }
    }

    // What the enums leave out is refused with every other fault of the call, all at once.
    let both = trails_tests::client::call(&client, "trails_kg_get", json!({ "node_type": "Nope", "id": "" })).await;
    let data = both.unwrap_err().data.unwrap();
    let faults: BTreeSet<(String, String)> = data["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["field"].as_str().unwrap().to_owned(), f["code"].as_str().unwrap().to_owned()))
        .collect();
    let expected = [("id", "min_length"), ("node_type", "one_of")].map(|(f, c)| (f.to_owned(), c.to_owned()));
    assert_eq!(faults, BTreeSet::from(expected), "{data}");
    // A value its declared constraints refuse already is reported once.
    let empty = trails_tests::client::call(&client, "trails_kg_get", json!({ "node_type": "", "id": "x" })).await;
    let empty = empty.unwrap_err().data.unwrap();
    assert_eq!(empty["fields"].as_array().unwrap().len(), 1, "{empty}");
    assert_eq!(empty["fields"][0]["code"], "min_length", "{empty}");
    let enum_of = data["fields"].as_array().unwrap().iter().find(|f| f["field"] == "node_type").unwrap();
    assert_eq!(enum_of["constraint"], json!(labels), "the allowed values are the published enum: {enum_of}");

    // The HTTP projection publishes what the MCP one does.
    let openapi: Value = reqwest::get(format!("http://{addr}/openapi.json")).await.unwrap().json().await.unwrap();
    let body = &openapi["paths"]["/invoke/trails.kg.read_field"]["post"]["requestBody"];
    let published = body["content"]["application/json"]["schema"]["properties"].clone();
    assert_eq!(published["node_type"]["enum"], json!(labels), "{published}");
    assert_eq!(published["field"]["enum"], json!(fields), "{published}");
}

/// `completion/complete` on the resource templates: instance keys that start with what was
/// typed, from the store, at most 100 with `hasMore`; the fields of a `where` clause.
#[tokio::test]
async fn template_variables_complete_from_the_store() {
    trails_tests::link();
    let kg = Kg::temporary().unwrap();
    for n in 0..120 {
        kg.create(requirement(n)).await.unwrap();
    }
    let addr = in_process::serve(trails::App::new().kg(kg), in_process::settings("")).await.addr;
    let client = trails_tests::client::connect(addr, None).await;
    assert!(client.peer_info().unwrap().capabilities.completions.is_some(), "announced");

    let instance = "trails://kg/Requirement/{id}";
    let keys = client.complete_resource_argument(instance, "id", "REQ-11", None).await.unwrap();
    let expected: Vec<String> = [
        "REQ-11", "REQ-110", "REQ-111", "REQ-112", "REQ-113", "REQ-114", "REQ-115", "REQ-116", "REQ-117", "REQ-118",
        "REQ-119",
    ]
    .map(str::to_owned)
    .into();
    assert_eq!((keys.values, keys.has_more), (expected, Some(false)));
    let all = client.complete_resource_argument(instance, "id", "REQ-", None).await.unwrap();
    assert_eq!((all.values.len(), all.has_more), (100, Some(true)), "bounded, and says there are more");
    let none = client.complete_resource_argument(instance, "id", "NOPE", None).await.unwrap();
    assert!(none.values.is_empty());

    let page = "trails://kg/Requirement{?where,limit,offset}";
    let fields = client.complete_resource_argument(page, "where", "st", None).await.unwrap();
    assert_eq!(fields.values, ["status="]);

    // What is not one of this server's templates says so.
    let unknown = client.complete_resource_argument("trails://kg/Nope/{id}", "id", "", None).await.unwrap_err();
    assert!(unknown.to_string().contains("not one of this server's resource templates"), "{unknown}");
    let prompt = client.complete_prompt_argument("summarise", "topic", "", None).await.unwrap_err();
    assert!(prompt.to_string().contains("unknown prompt: summarise"), "{prompt}");
}

/// Bounded evidence (PDPP): a listed instance is an evidence card built from the fields its type
/// gives a display role, and from nothing else — the title as label, a bounded excerpt of the
/// body, the status — the same through `trails_kg_list` and the umbrella resource; the roles are
/// published in `trails://schema`, SHACL and the manifest.
#[tokio::test(flavor = "multi_thread")]
async fn list_items_are_evidence_cards_built_from_declared_roles_only() {
    use trails::testing::Client;
    trails_tests::link();
    let kg = Kg::temporary().unwrap();
    kg.create(requirement(7)).await.unwrap();
    let body = long_text(1000);
    kg.create(Note { slug: "long".into(), body: body.clone() }).await.unwrap();
    kg.create(Note { slug: "short".into(), body: "Two lines.".into() }).await.unwrap();
    // A window large enough for `trails://schema` whole, read through `trails_resources_read`.
    let settings = in_process::settings("[mcp]\ntool_window_chars = 65536\nmax_result_bytes = 1048576\n");
    let server = trails::App::new().kg(kg).build(settings).unwrap();
    let client = Client::anonymous(&server);
    let structured = |result: Value| result["structuredContent"].clone();
    let list = |node_type: &'static str| {
        let client = &client;
        async move { structured(client.call("trails_kg_list", json!({"node_type": node_type})).await.unwrap()) }
    };

    // Requirement: `title` and `status` have roles; `priority`, `tags` (and the key) do not.
    let requirements = list("Requirement").await;
    let item = &requirements["items"][0];
    assert_eq!(
        item,
        &json!({"iri": item["iri"], "uri": "trails://kg/Requirement/REQ-7", "id": "REQ-7",
                "label": "Requirement number 7", "status": "accepted"}),
        "nothing but the roles: no field is guessed at by its name"
    );
    // Note: a body and no title: the key is the label, the body a bounded excerpt.
    let notes = list("Note").await;
    let [long, short] = [&notes["items"][0], &notes["items"][1]];
    assert_eq!((&long["id"], &long["label"]), (&json!("long"), &json!("long")));
    let excerpt = long["excerpt"].as_str().unwrap();
    assert_eq!(excerpt.chars().count(), 281, "280 characters and the ellipsis");
    assert!(body.starts_with(excerpt.trim_end_matches('…')) && excerpt.ends_with('…'));
    assert_eq!(short["excerpt"], "Two lines.", "a short body whole, without an ellipsis");
    // `id` is what `trails_kg_get` takes.
    let got = structured(client.call("trails_kg_get", json!({"node_type": "Note", "id": long["id"]})).await.unwrap());
    assert_eq!(got["iri"], long["iri"]);

    // The umbrella resource shows the same cards.
    let read = |uri: &'static str| {
        let client = &client;
        async move {
            structured(client.call("trails_resources_read", json!({"uri": uri})).await.unwrap())["content"].clone()
        }
    };
    assert_eq!(read("trails://kg/Note").await["items"], notes["items"]);

    // Published: `trails://schema`, SHACL, and the manifest of the capabilities returning the type.
    let schema = read("trails://schema").await;
    let requirement = schema["shapes"].as_array().unwrap().iter().find(|s| s["name"] == "Requirement").unwrap();
    let roles: Vec<(&str, &str)> = requirement["node_type"]["predicates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| Some((p["field"].as_str()?, p["role"].as_str()?)))
        .collect();
    assert_eq!(roles, [("title", "title"), ("status", "status")]);
    let shacl = trails::registry::Registry::collect().unwrap().shacl();
    assert!(shacl.contains("<https://w3id.org/trails/capability#displayRole> \"body\""), "{shacl}");
    let manifest = read("trails://capabilities").await;
    let search = manifest["@graph"].as_array().unwrap().iter().find(|c| c["id"] == "requirements.search").unwrap();
    assert_eq!(search["display_roles"], json!({"title": "title", "status": "status"}));
    let papers = manifest["@graph"].as_array().unwrap().iter().find(|c| c["id"] == "research.search").unwrap();
    assert!(papers.get("display_roles").is_none(), "a plain shape's output has no roles");
}
