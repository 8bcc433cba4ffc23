//! The authoring catalogue's scaffolders on the real fixture server: with
//! `dev` scope, `tools/call trails_meta_gen_*` returns a FileDiff whose text is byte for byte what
//! the app's `meta gen.*` command prints; a bad spec is refused with FieldErrors that name the
//! place; the diff is made against what the path holds; nothing is written; callers without `dev`
//! do not see the tools. (`tests/tests/it/ui.rs` compiles what they generate.) And
//! `trails_meta_schema_snapshot` reports, and with `write: true` writes, exactly the goldens
//! `cargo xtask snapshot` keeps in this repository's `schemas/`.

use std::path::Path;

use serde_json::{json, Value};
use trails_tests::Served;

const DEV_TOKEN: &str = "gen-dev-token";

fn config() -> String {
    format!(
        "[mcp]\nscopes = [\"dev\"]\n\n[http]\nsessions = false\n\n\
         [[http.tokens]]\nname = \"dev\"\nsha256 = \"{}\"\nscopes = [\"dev\"]\n",
        trails::auth::sha256_hex(DEV_TOKEN)
    )
}

/// The fixture server, its working directory a fresh app directory.
fn start() -> Served {
    crate::fixture().config(config()).http()
}

async fn post(server: &Served, token: Option<&str>, body: Value) -> Value {
    trails_tests::client::post(server.addr, token, &body).await
}

async fn call(server: &Served, tool: &str, arguments: Value) -> Value {
    trails_tests::client::call_tool(server.addr, Some(DEV_TOKEN), tool, arguments).await
}

/// `<app> meta <op> '<json>'` in the server's directory (its store elsewhere: the server holds
/// its own): (exit code, stdout, stderr).
fn cli(server: &Served, op: &str, arguments: &Value) -> (i32, String, String) {
    let dir = server.dir.path();
    let launch = crate::fixture().config(config()).env("TRAILS_KG_PATH", dir.join("kg-cli").display().to_string());
    let output = launch.cli(dir, &["meta", op, &arguments.to_string()]);
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

fn shape_spec() -> Value {
    json!({ "name": "SearchInput", "iri": "https://example.org/app#SearchInput", "description": "What to look for.",
            "fields": [
                { "name": "query", "kind": "string", "min_length": 1, "max_length": 200, "description": "Free text." },
                { "name": "code", "kind": "string", "pattern": r"^REQ-\d+$", "optional": true },
                { "name": "limit", "kind": "integer", "min_value": 1, "max_value": 100, "optional": true }
            ] })
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_call_and_the_cli_answer_the_same_bytes() {
    let server = start();
    for (tool, op, spec) in [
        ("trails_meta_gen_shape", "gen.shape", shape_spec()),
        (
            "trails_meta_gen_nodetype",
            "gen.nodetype",
            json!({ "name": "Ticket", "iri": "https://example.org/app#Ticket", "key": "code", "unique": ["code"],
                    "fields": [{ "name": "code", "kind": "string", "role": "identifier" },
                               { "name": "opened", "kind": "datetime", "role": "timestamp" }] }),
        ),
        (
            "trails_meta_gen_capability",
            "gen.capability",
            json!({ "id": "tickets.open", "description": "Open a ticket.", "handler": "open_ticket", "read_only": false,
                    "params": [{ "name": "title", "kind": "string", "min_length": 3 }] }),
        ),
    ] {
        let answer = call(&server, tool, spec.clone()).await;
        let result = &answer["result"];
        assert_eq!(result["isError"], false, "{tool}: {answer}");
        let text = result["content"][0]["text"].as_str().unwrap();
        let (code, stdout, stderr) = cli(&server, op, &spec);
        assert_eq!(code, 0, "{op}: {stderr}");
        assert_eq!(stdout, format!("{text}\n"), "{op}: the CLI prints the tool's text, byte for byte");
        let diff: Value = serde_json::from_str(text).unwrap();
        assert_eq!(diff, result["structuredContent"]);
        assert_eq!(diff["created"], true);
        let content = diff["content"].as_str().unwrap();
        assert!(diff["diff"].as_str().unwrap().lines().filter(|l| l.starts_with('+')).count() > 3, "{diff}");
        match op {
            "gen.shape" => {
                assert_eq!(diff["path"], "src/search_input.rs");
                assert!(content.contains("#[shape(iri = \"https://example.org/app#SearchInput\")]"), "{content}");
                assert!(content.contains(r#"#[predicate(pattern = r"^REQ-\d+$")]"#), "{content}");
                assert!(content.contains("#[predicate(min_length = 1, max_length = 200)]"), "{content}");
                assert!(content.starts_with("use trails::shape;\n\n"), "{content}");
                assert!(content.contains("pub limit: Option<i64>,"), "{content}");
                assert!(content.contains("/// Free text."), "{content}");
            }
            "gen.nodetype" => {
                assert!(content.contains("#[node_type(") && content.contains("key = \"code\""), "{content}");
                assert!(content.contains("#[predicate(role = \"timestamp\")]"), "{content}");
            }
            _ => assert!(
                content.contains("pub async fn open_ticket(") && content.contains("not implemented yet"),
                "{content}"
            ),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_diff_is_against_what_the_path_holds_and_bad_specs_name_their_faults() {
    let server = start();
    std::fs::create_dir_all(server.dir.path().join("src")).unwrap();
    std::fs::write(server.dir.path().join("src/search_input.rs"), "// an older draft\n").unwrap();
    let answer = call(&server, "trails_meta_gen_shape", shape_spec()).await;
    let diff = &answer["result"]["structuredContent"];
    assert_eq!(diff["created"], false, "{answer}");
    let unified = diff["diff"].as_str().unwrap();
    assert!(unified.starts_with("--- a/src/search_input.rs\n+++ b/src/search_input.rs\n"), "{unified}");
    assert!(unified.contains("\n-// an older draft\n"), "{unified}");
    assert_eq!(std::fs::read_to_string(server.dir.path().join("src/search_input.rs")).unwrap(), "// an older draft\n");

    let mut bad = shape_spec();
    bad["name"] = json!("Self");
    bad["fields"][1]["pattern"] = json!("(?=lookahead)");
    bad["fields"][2]["kind"] = json!("ref");
    let answer = call(&server, "trails_meta_gen_shape", bad).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let fields: Vec<&str> =
        answer["error"]["data"]["fields"].as_array().unwrap().iter().map(|f| f["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["name", "fields/1/pattern", "fields/2/target"], "{answer}");

    // A constraint on the wrong type, a minimum over its maximum: the macro's own checks answer,
    // as they would at build time, each on the field and key at fault.
    let mut wrong = shape_spec();
    wrong["fields"][2]["min_length"] = json!(2);
    wrong["fields"][0]["min_length"] = json!(300);
    let answer = call(&server, "trails_meta_gen_shape", wrong).await;
    let faults = answer["error"]["data"]["fields"].as_array().unwrap();
    let at: Vec<&str> = faults.iter().map(|f| f["field"].as_str().unwrap()).collect();
    assert_eq!(at, ["fields/0/min_length", "fields/2/min_length"], "{answer}");
    assert!(faults[1]["message"].as_str().unwrap().contains("applies to strings"), "{answer}");
    // A display role that does not fit the field's type, on the field and key at fault.
    let mut role = shape_spec();
    role["fields"][2]["role"] = json!("title");
    let answer = call(&server, "trails_meta_gen_nodetype", role).await;
    let fault = &answer["error"]["data"]["fields"][0];
    assert_eq!(fault["field"], "fields/2/role", "{answer}");
    assert!(fault["message"].as_str().unwrap().contains("needs a `String`"), "{answer}");
    // A capability's parameters are its `params`.
    let capability = json!({ "id": "tickets.open", "description": "Open a ticket.", "handler": "open_ticket",
                             "params": [{ "name": "title", "kind": "string", "min_value": 3 }] });
    let answer = call(&server, "trails_meta_gen_capability", capability).await;
    assert_eq!(answer["error"]["data"]["fields"][0]["field"], "params/0/min_value", "{answer}");

    // A symbolic link on the way could lead out of the app's directory.
    std::os::unix::fs::symlink("/etc", server.dir.path().join("etc")).unwrap();
    for path in ["../escape.rs", "/etc/passwd.rs", "src/notes.txt", "etc/x.rs", "src/a.rs\n+++ b/evil.rs"] {
        let mut spec = shape_spec();
        spec["path"] = json!(path);
        let answer = call(&server, "trails_meta_gen_shape", spec).await;
        assert_eq!(answer["error"]["data"]["fields"][0]["field"], "path", "{path}: {answer}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn only_dev_callers_see_the_scaffolders() {
    let server = start();
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    let names = |answer: &Value| -> Vec<String> {
        answer["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    let anonymous = names(&post(&server, None, list.clone()).await);
    let dev = names(&post(&server, Some(DEV_TOKEN), list).await);
    for tool in [
        "trails_meta_gen_shape",
        "trails_meta_gen_nodetype",
        "trails_meta_gen_capability",
        "trails_meta_schema_snapshot",
    ] {
        assert!(dev.contains(&tool.to_owned()) && !anonymous.contains(&tool.to_owned()), "{tool}");
    }
    let body = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": { "name": "trails_meta_gen_shape", "arguments": shape_spec() } });
    let answer = post(&server, None, body).await;
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
}

/// Every file under `dir`, by path relative to it.
fn tree(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.insert(path.strip_prefix(dir).unwrap().to_owned(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[tokio::test(flavor = "multi_thread")]
async fn schema_snapshot_reports_and_writes_what_xtask_snapshot_keeps() {
    let server = start();
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let golden = tree(&repository);
    let schemas = server.dir.path().join("schemas");
    for (relative, bytes) in &golden {
        std::fs::create_dir_all(schemas.join(relative).parent().unwrap()).unwrap();
        std::fs::write(schemas.join(relative), bytes).unwrap();
    }

    // The repository's goldens are what this app's declarations imply (the goldens test says so).
    let answer = call(&server, "trails_meta_schema_snapshot", json!({})).await;
    let report = &answer["result"]["structuredContent"];
    assert_eq!(report["up_to_date"], true, "{answer}");
    assert_eq!(report["total"], 0);
    let goldens = golden.keys().filter(|p| p.starts_with("mcp") && !p.starts_with("mcp/prompts")).count();
    assert_eq!(report["tools"], goldens, "one golden per tool");

    // A changed golden, a missing one and a stale one, reported a page at a time in path order.
    let search = schemas.join("mcp/research_search.json");
    let changed =
        String::from_utf8(golden[Path::new("mcp/research_search.json")].clone()).unwrap().replace("1.2.0", "1.1.0");
    std::fs::write(&search, changed).unwrap();
    std::fs::remove_file(schemas.join("shapes.ttl")).unwrap();
    std::fs::write(schemas.join("mcp/retired_tool.json"), "{}\n").unwrap();
    let answer = call(&server, "trails_meta_schema_snapshot", json!({ "limit": 2 })).await;
    let report = &answer["result"]["structuredContent"];
    assert_eq!((report["up_to_date"].clone(), report["total"].clone()), (json!(false), json!(3)), "{answer}");
    let files = report["files"].as_array().unwrap();
    let listed: Vec<(&str, &str)> =
        files.iter().map(|f| (f["path"].as_str().unwrap(), f["change"].as_str().unwrap())).collect();
    assert_eq!(listed, [("mcp/research_search.json", "changed"), ("mcp/retired_tool.json", "removed")]);
    let diff = files[0]["diff"].as_str().unwrap();
    assert!(diff.starts_with("--- a/mcp/research_search.json\n+++ b/mcp/research_search.json\n"), "{diff}");
    assert!(diff.lines().any(|l| l.starts_with('-') && l.contains("1.1.0")), "{diff}");
    assert!(diff.lines().any(|l| l.starts_with('+') && l.contains("1.2.0")), "{diff}");
    assert_eq!(report["cursor"], "mcp/retired_tool.json");
    let answer =
        call(&server, "trails_meta_schema_snapshot", json!({ "limit": 2, "cursor": "mcp/retired_tool.json" })).await;
    let report = &answer["result"]["structuredContent"];
    assert_eq!(report["files"][0]["path"], "shapes.ttl", "{answer}");
    assert_eq!(report["files"][0]["change"], "added");
    assert!(report["files"][0]["diff_chars"].as_u64().unwrap() > 2000, "the whole Turtle graph is new");
    assert_eq!(report["files"][0]["diff"].as_str().unwrap().chars().count(), 2000, "cut to the preview");
    assert_eq!(report["cursor"], Value::Null);
    assert!(std::fs::read_to_string(&search).unwrap().contains("1.1.0"), "a report writes nothing");
    assert!(!schemas.join("shapes.ttl").exists(), "a report writes nothing");

    // The CLI prints the same report.
    let (code, stdout, stderr) = cli(&server, "schema.snapshot", &json!({ "limit": 2 }));
    assert_eq!(code, 0, "{stderr}");
    let again = call(&server, "trails_meta_schema_snapshot", json!({ "limit": 2 })).await;
    assert_eq!(stdout, format!("{}\n", again["result"]["content"][0]["text"].as_str().unwrap()));

    // `write: true` makes the directory exactly the repository's goldens.
    let answer = call(&server, "trails_meta_schema_snapshot", json!({ "write": true })).await;
    let report = &answer["result"]["structuredContent"];
    assert_eq!((report["written"].clone(), report["total"].clone()), (json!(true), json!(3)), "{answer}");
    assert_eq!(tree(&schemas), golden, "the files `cargo xtask snapshot` keeps, byte for byte");
    let answer = call(&server, "trails_meta_schema_snapshot", json!({ "write": true })).await;
    assert_eq!(answer["result"]["structuredContent"]["written"], false, "nothing left to write: {answer}");

    // A cursor means a report; writing takes none.
    let answer = call(&server, "trails_meta_schema_snapshot", json!({ "write": true, "cursor": "mcp" })).await;
    assert_eq!(answer["error"]["data"]["fields"][0]["field"], "cursor", "{answer}");

    // A golden that is a symbolic link is refused, never followed, and then nothing is written.
    let outside = server.dir.path().join("outside.json");
    std::fs::write(&outside, "{}\n").unwrap();
    std::fs::remove_file(&search).unwrap();
    std::os::unix::fs::symlink(&outside, &search).unwrap();
    std::fs::remove_file(schemas.join("shapes.ttl")).unwrap();
    let answer = call(&server, "trails_meta_schema_snapshot", json!({ "write": true })).await;
    let report = &answer["result"]["structuredContent"];
    assert_eq!(report["written"], false, "{answer}");
    let listed: Vec<(&str, &str)> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["change"].as_str().unwrap()))
        .collect();
    assert_eq!(listed, [("mcp/research_search.json", "refused")], "what stopped the write: {answer}");
    assert_eq!(report["total"], 2, "the refused link and the missing shapes.ttl: {answer}");
    let diff = report["files"][0]["diff"].as_str().unwrap();
    assert!(diff.starts_with("schemas/mcp/research_search.json is not a regular file"), "{diff}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "{}\n", "never written through");
    assert!(!schemas.join("shapes.ttl").exists(), "nothing is written while a path is refused");
}
