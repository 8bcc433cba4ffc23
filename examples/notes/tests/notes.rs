//! An app without node types, over stdio as a desktop host starts it: it still has resources
//! (the manifest, the schema, stats), and its descriptors' `manifest_uri` names a resource a
//! stdio client can read.

use std::io::Write;

use serde_json::{json, Value};

/// The notes binary on stdio, initialized; `config` is its `trails.toml`.
fn start(config: &str) -> (trails_tests::StdioApp, Value) {
    let mut server = trails_tests::Launch::new(env!("CARGO_BIN_EXE_notes")).config(config).log(Some("error")).stdio();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "notes-test", "version": "0"}}});
    writeln!(server.stdin, "{initialize}").unwrap();
    let initialized = server.answer();
    writeln!(server.stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    (server, initialized["result"].clone())
}

/// Send one request; its answer (`result` or `error`).
fn ask(server: &mut trails_tests::StdioApp, method: &str, params: Value) -> Value {
    writeln!(server.stdin, "{}", json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})).unwrap();
    let answer = server.answer();
    assert_eq!(answer["id"], 1, "{answer}");
    answer
}

fn read(server: &mut trails_tests::StdioApp, uri: &str) -> Value {
    ask(server, "resources/read", json!({ "uri": uri }))
}

#[test]
fn without_a_knowledge_graph_the_manifest_schema_and_stats_are_resources() {
    let (mut server, initialized) = start("");
    // Resources, but nothing to subscribe to: nothing here changes on its own.
    let resources = &initialized["capabilities"]["resources"];
    assert!(resources.is_object(), "{initialized}");
    assert_ne!(resources["subscribe"], true, "{initialized}");

    let listed = ask(&mut server, "resources/list", json!({}));
    let uris: Vec<&str> =
        listed["result"]["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["trails://capabilities", "trails://schema", "trails://stats"], "{listed}");
    let templates = ask(&mut server, "resources/templates/list", json!({}));
    assert_eq!(templates["result"]["resourceTemplates"], json!([]), "{templates}");

    let schema = read(&mut server, "trails://schema");
    let text = schema["result"]["contents"][0]["text"].as_str().unwrap();
    let schema: Value = serde_json::from_str(text).unwrap();
    assert_eq!(schema["shapes"][0]["name"], "EchoInput", "{schema}");

    let stats = read(&mut server, "trails://stats");
    let stats: Value = serde_json::from_str(stats["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        stats["tools"], 6,
        "notes_echo, notes_length, trails_dry_run, trails_meta_ping, trails_resources_read, trails_result_read: {stats}"
    );
    assert!(stats.get("instances").is_none() && stats.get("provenance").is_none(), "{stats}");

    // The knowledge graph's resources are not there, and say so as any unknown URI does.
    for uri in ["trails://kg/types", "trails://prov/latest"] {
        let refused = read(&mut server, uri);
        assert_eq!(refused["error"]["code"], -32602, "{uri}: {refused}");
        assert!(refused["error"]["message"].as_str().unwrap().starts_with("unknown resource"), "{refused}");
    }
    let subscribe = ask(&mut server, "resources/subscribe", json!({ "uri": "trails://stats" }));
    assert_eq!(subscribe["error"]["data"]["subscribable"], false, "{subscribe}");
}

#[test]
fn over_stdio_manifest_uri_names_the_manifest_resource() {
    let (mut server, _) = start("");
    let tools = ask(&mut server, "tools/list", json!({}));
    let echo = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "notes_echo").unwrap();
    let link = echo["_meta"]["trails"]["manifest_uri"].as_str().unwrap();
    assert_eq!(link, "trails://capabilities#notes.echo");

    // The link reads as written, fragment and all: the manifest this caller sees.
    let manifest = read(&mut server, link);
    let contents = &manifest["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "application/ld+json", "{manifest}");
    let manifest: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
    let ids: Vec<&str> = manifest["@graph"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    let expected = [
        "notes.echo",
        "notes.length",
        "trails.dry_run",
        "trails.meta.ping",
        "trails.resources.read",
        "trails.result.read",
    ];
    assert_eq!(ids, expected, "what tools/list shows this caller, no more: {manifest}");
}

/// A host that cannot read resources reads them through a tool: the same documents.
#[test]
fn resources_are_read_through_a_tool_too() {
    let (mut server, _) = start("");
    fn call(server: &mut trails_tests::StdioApp, uri: &str) -> Value {
        ask(server, "tools/call", json!({"name": "trails_resources_read", "arguments": {"uri": uri}}))["result"].clone()
    }
    // A document larger than the window is not sent: the result names the call that reads its
    // JSON a page at a time, and the pages are the whole answer.
    // (The manifest: six capabilities' descriptors are well over the window.)
    let cut = call(&mut server, "trails://capabilities");
    assert_eq!(cut["isError"], true, "{cut}");
    let mut next =
        serde_json::from_str::<Value>(cut["content"][0]["text"].as_str().unwrap()).unwrap()["next_call"].clone();
    let mut text = String::new();
    while !next.is_null() {
        let page = ask(&mut server, "tools/call", json!({"name": next["tool"], "arguments": next["arguments"]}));
        text.push_str(page["result"]["structuredContent"]["text"].as_str().unwrap());
        next = page["result"]["structuredContent"]["next_call"].clone();
    }
    let schema: Value = serde_json::from_str(&text).unwrap();
    let resource = read(&mut server, "trails://capabilities");
    let document: Value = serde_json::from_str(resource["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(schema["content"], document, "{schema}");
    assert_eq!(schema["mime_type"], "application/ld+json", "{schema}");
    let stats = call(&mut server, "trails://stats");
    assert!(stats["structuredContent"]["content"].is_object(), "a small one is read whole: {stats}");
    // What the resources refuse, the tool refuses alike: a missing one is not found (a result
    // the model reads), a builder-only one is unknown to this caller.
    for uri in ["trails://kg/types", "trails://doctor"] {
        let missing = call(&mut server, uri);
        assert_eq!(missing["isError"], true, "{uri}: {missing}");
        let body: Value = serde_json::from_str(missing["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(body["kind"], "not_found", "{uri}: {missing}");
    }
}

#[test]
fn with_the_manifest_off_nothing_links_to_it() {
    let (mut server, _) = start("[capability.manifest]\nenabled = false\n");
    let tools = ask(&mut server, "tools/list", json!({}));
    let trails = &tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "notes_echo").unwrap()
        ["_meta"]["trails"];
    assert_eq!(trails["id"], "notes.echo", "{tools}");
    assert!(trails.get("manifest_uri").is_none(), "{tools}");
    let listed = ask(&mut server, "resources/list", json!({}));
    assert!(!listed.to_string().contains("trails://capabilities"), "{listed}");
    let refused = read(&mut server, "trails://capabilities");
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().starts_with("unknown resource"), "{refused}");
    let subscribe = ask(&mut server, "resources/subscribe", json!({ "uri": "trails://capabilities" }));
    assert!(subscribe["error"]["message"].as_str().unwrap().starts_with("unknown resource"), "{subscribe}");
}

/// A count is a number: structured as `{"result": n}` (structured content is an object), with
/// the `outputSchema` that says so.
#[test]
fn a_number_is_structured_as_result() {
    let (mut server, _) = start("");
    let tools = ask(&mut server, "tools/list", json!({}));
    let length = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "notes_length").unwrap();
    let schema =
        json!({"type": "object", "properties": {"result": {"type": "integer", "minimum": 0}}, "required": ["result"]});
    assert_eq!(length["outputSchema"], schema, "{length}");
    let called = ask(&mut server, "tools/call", json!({"name": "notes_length", "arguments": {"text": "héllo"}}));
    let result = &called["result"];
    assert_eq!(result["structuredContent"], json!({"result": 5}), "{called}");
    assert_eq!(result["content"][0]["text"], r#"{"result":5}"#, "{called}");
    assert_ne!(result["isError"], true, "{called}");
}
