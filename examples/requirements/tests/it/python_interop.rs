//! Interop with an independent MCP client: the official Python SDK (PyPI `mcp`), installed into
//! a cached virtualenv on first use, drives this example app over stdio and Streamable HTTP.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

/// The suite's pinned Python tools (the MCP SDK and PyLD among them); `cargo xtask test` installs
/// them, and this test does when run alone.
const REQUIREMENTS: &str = "../../tests/python-requirements.txt";

fn venv_dir() -> PathBuf {
    std::env::var_os("TRAILS_PYENV").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").expect("HOME is set");
        Path::new(&home).join(".cache/trails-pyenv")
    })
}

fn run(command: &mut Command) -> bool {
    command.status().map(|s| s.success()).unwrap_or(false)
}

/// The venv's python with the SDK importable, creating the venv if needed.
fn python() -> PathBuf {
    let venv = venv_dir();
    let python = venv.join("bin/python");
    let has_sdk =
        || run(Command::new(&python).args(["-c", "import mcp, pyld, sys; sys.exit(0)"]).stderr(Stdio::null()));
    if !has_sdk() {
        assert!(
            venv.join("bin/pip").exists() || run(Command::new("python3").args(["-m", "venv"]).arg(&venv)),
            "python3 -m venv {} failed",
            venv.display()
        );
        let requirements = Path::new(env!("CARGO_MANIFEST_DIR")).join(REQUIREMENTS);
        assert!(
            run(Command::new(venv.join("bin/pip"))
                .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
                .arg(&requirements)),
            "pip install -r {} failed",
            requirements.display()
        );
        assert!(has_sdk(), "the MCP SDK is not importable after installing it");
    }
    python
}

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/python_client.py")
}

fn drive(python: &Path, args: &[&str]) -> Value {
    // Each run gets its own store, deleted afterwards.
    let data = tempfile::tempdir().unwrap();
    let mut command = Command::new(python);
    command.arg(client_script()).args(args).env("TRAILS_KG_PATH", data.path());
    trails_tests::servers::interop_report(command, "the Python client")
}

fn assert_report(report: &Value, transport: &str) {
    let tools: Vec<&str> = report["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert!(tools.contains(&"requirements_search"), "{transport}: {tools:?}");
    assert_eq!(report["names_hosts_refuse"], json!([]), "{transport}: every name matches ^[a-zA-Z0-9_-]{{1,64}}$");
    assert_eq!(report["search_meta"]["id"], "requirements.search", "{transport}: the canonical id rides in _meta");
    assert!(!tools.contains(&"trails_meta_requirements_stats"), "{transport}: builder tool hidden without a token");
    assert_eq!(report["search_meta"]["kind"], "runtime", "{transport}: _meta.trails survives the SDK's models");
    assert_eq!(report["search_input"]["properties"]["limit"]["maximum"], 100);
    assert_eq!(report["search_annotations"]["readOnlyHint"], true);
    assert_eq!(report["create_is_error"], false);
    // The created instance and its attachment come as `resource_link` blocks the SDK parses, and
    // each reads back as the resource it names, of the type it announced.
    let links = report["create_links"].as_array().unwrap();
    assert_eq!(links.len(), 2, "{transport}: {links:?}");
    assert_eq!(
        links[0],
        json!({"uri": "trails://kg/Requirement/REQ-1", "name": "Requirement REQ-1", "mime": "application/ld+json"}),
        "{transport}"
    );
    assert!(links[1]["uri"].as_str().unwrap().starts_with("trails://blob/"), "{transport}: {links:?}");
    assert_eq!(links[1]["mime"], "text/plain", "{transport}");
    let reads: Vec<Value> = links.iter().map(|link| json!({"uri": link["uri"], "mime": link["mime"]})).collect();
    assert_eq!(report["link_reads"], json!(reads), "{transport}");
    assert_eq!(report["search_structured"]["items"][0]["req_id"], "REQ-1", "{transport}: structured output accepted");
    assert_eq!(report["invalid"]["code"], -32602, "{transport}");
    assert_eq!(report["invalid"]["message"], "validation failed on 2 field(s)");
    let fields: Vec<(&str, &str)> = report["invalid"]["data"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["field"].as_str().unwrap(), f["code"].as_str().unwrap()))
        .collect();
    assert_eq!(fields, [("text", "min_length"), ("limit", "max_value")], "{transport}");
    assert_eq!(report["gated"]["code"], json!(-32001), "{transport}");
    assert_eq!(
        report["precondition_failed"],
        json!({"is_error": true, "structured": null, "text": {"kind": "precondition_failed", "message": "requirements.update: 1 declared precondition does not hold: instance_exists (no Requirement `REQ-404` is stored); nothing ran", "retryable": false}}),
        "{transport}: a domain error is a result"
    );
    // A dry run of the same call names the precondition, both ways.
    let verdict = json!({ "would_run": false, "reasons": [{ "kind": "precondition", "message": "no Requirement `REQ-404` is stored",
        "blocking": true, "precondition": "instance_exists", "parameters": { "node_type": "Requirement", "key": "req_id" } }] });
    assert_eq!(report["dry_run_meta"], json!({ "is_error": true, "text": verdict }), "{transport}");
    assert_eq!(report["dry_run_tool"], verdict, "{transport}");
    // Resources, as the SDK's models read them.
    let resources = report["resources"].as_array().unwrap();
    assert!(resources.contains(&json!("trails://kg/Requirement")) && resources.contains(&json!("trails://stats")));
    assert!(!resources.contains(&json!("trails://doctor")), "{transport}: builder resources hidden without a token");
    assert!(report["templates"].as_array().unwrap().contains(&json!("trails://kg/Requirement{?where,limit,offset}")));
    assert_eq!(
        report["walked"],
        json!(["REQ-1", "REQ-2", "REQ-3", "REQ-4", "REQ-5"]),
        "{transport}: next walks every page"
    );
    assert_eq!(report["pages"], 3);
    assert_eq!(report["instance"]["mime"], "application/ld+json");
    assert_eq!(report["instance"]["document"]["@id"], "urn:trails:kg/Requirement/REQ-1");
    let terms = report["instance"]["terms"].as_array().unwrap();
    assert!(terms.len() >= 5, "{transport}: {terms:?}");
    assert_eq!(
        report["instance"]["expanded_terms"], report["instance"]["terms"],
        "{transport}: expansion drops no term"
    );
    assert_eq!(
        report["instance"]["expanded"]["https://example.org/req#priority"][0],
        json!({"@value": 1, "@type": "http://www.w3.org/2001/XMLSchema#integer"}),
        "{transport}: typed by the context"
    );
    // A blob: the model-visible document has its metadata; the bytes come back as blob contents.
    let shown = &report["attachment"]["shown"];
    assert_eq!((shown["media_type"].as_str(), shown["size"].as_u64()), (Some("text/plain"), Some(1024)), "{transport}");
    assert!(shown.get("base64").is_none(), "{transport}: no bytes in the document");
    assert_eq!(report["attachment"]["mime"], "text/plain", "{transport}");
    assert_eq!(report["attachment"]["bytes_match"], true, "{transport}: the SDK decodes the fetched bytes");
    assert!(
        !report["create_structured"].to_string().contains("base64"),
        "{transport}: no bytes in the result: {}",
        report["create_structured"]
    );
    assert_eq!(report["bad_where"]["code"], -32602);
    assert_eq!(report["bad_where"]["data"]["reason"], "type_mismatch", "{transport}");
    // Subscriptions: a 2026-07-28 listen, and a 2025-11-25 session's resources/subscribe.
    let watched = json!(["trails://kg/Requirement", "trails://kg/Requirement/REQ-7"]);
    assert_eq!(report["listen_honored"], watched, "{transport}: the filtered page is not honoured");
    assert_eq!(report["listen_updates"], watched, "{transport}: the listen delivered both updates");
    let legacy = &report["legacy"];
    assert_eq!(
        legacy["subscribed_updates"],
        json!(["trails://kg/Requirement", "trails://kg/Requirement/REQ-8", "trails://kg/types"]),
        "{transport}: notifications/resources/updated after the write"
    );
    assert_eq!(legacy["filter_subscribe"]["code"], -32602, "{transport}");
    assert_eq!(legacy["filter_subscribe"]["data"]["subscribable"], false, "{transport}");
}

#[test]
fn the_python_sdk_drives_the_example_app_over_stdio_and_http() {
    let python = python();
    let stdio = drive(&python, &["stdio", env!("CARGO_BIN_EXE_requirements"), "serve", "--stdio"]);
    assert_report(&stdio, "stdio");
    let server = crate::example().http();
    let addr = server.addr;
    let http = drive(&python, &["http", &format!("http://{addr}/mcp")]);
    assert_report(&http, "http");
}
