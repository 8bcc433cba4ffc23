//! Interop with the official TypeScript MCP SDKs (npm `@modelcontextprotocol/sdk` 1.x for a
//! 2025-11-25 session, `@modelcontextprotocol/client` 2.x for 2026-07-28), installed with the
//! machine's Node.js and npm into a cache outside the clone on first use, driving this example
//! app over stdio and Streamable HTTP: resources, pages by `next`, `resources/subscribe`, and
//! `subscriptions/listen`, each receiving `notifications/resources/updated` after a write.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

/// The pinned SDKs (in `tests/interop/ts/package.json`, so the test measures our server, not a
/// moving client) and the client script, in the shared Node.js cache.
fn node_dir() -> PathBuf {
    trails_tests::servers::node_packages(&["ts/client.mjs"])
}

fn drive(node_dir: &Path, args: &[&str]) -> Value {
    let data = tempfile::tempdir().unwrap();
    let mut command = Command::new("node");
    command.arg(node_dir.join("client.mjs")).args(args).env("TRAILS_KG_PATH", data.path());
    trails_tests::servers::interop_report(command, "the TypeScript client")
}

fn assert_report(report: &Value, transport: &str) {
    let legacy = &report["legacy"];
    assert!(legacy["tool_count"].as_u64().unwrap() > 3, "{transport}: {legacy}");
    assert_eq!(legacy["names_hosts_refuse"], json!([]), "{transport}: every name matches ^[a-zA-Z0-9_-]{{1,64}}$");
    assert_eq!(
        legacy["precondition_failed"],
        json!({"is_error": true, "structured": null, "text": {"kind": "precondition_failed", "message": "requirements.update: 1 declared precondition does not hold: instance_exists (no Requirement `REQ-404` is stored); nothing ran", "retryable": false}}),
        "{transport}: a domain error reaches the SDK 1.x as a result"
    );
    let link =
        json!({"uri": "trails://kg/Requirement/REQ-1", "name": "Requirement REQ-1", "mime": "application/ld+json"});
    assert_eq!(legacy["create_links"], json!([link]), "{transport}: the created instance, linked");
    assert_eq!(
        legacy["link_reads"],
        json!([{"uri": "trails://kg/Requirement/REQ-1", "mime": "application/ld+json"}]),
        "{transport}: the link reads as the resource it names"
    );
    let resources = legacy["resources"].as_array().unwrap();
    assert!(resources.contains(&json!("trails://kg/Requirement")), "{transport}: {resources:?}");
    assert!(legacy["templates"].as_array().unwrap().contains(&json!("trails://kg/Requirement/{id}")));
    assert_eq!(legacy["walked"], json!(["REQ-1", "REQ-2", "REQ-3", "REQ-4", "REQ-5"]), "{transport}");
    assert_eq!(legacy["pages"], 3, "{transport}");
    assert_eq!(legacy["instance"], json!({"mime": "application/ld+json", "id": "urn:trails:kg/Requirement/REQ-1"}));
    assert_eq!(legacy["bad_where"]["code"], -32602, "{transport}");
    assert_eq!(legacy["bad_where"]["data"]["reason"], "type_mismatch", "{transport}");
    assert_eq!(
        legacy["subscribed_updates"],
        json!(["trails://kg/Requirement", "trails://kg/Requirement/REQ-8", "trails://kg/types"]),
        "{transport}: resources/subscribe, then notifications/resources/updated after the write"
    );
    assert_eq!(legacy["filter_subscribe"]["code"], -32602, "{transport}");
    assert_eq!(legacy["filter_subscribe"]["data"]["subscribable"], false, "{transport}");

    let modern = &report["modern"];
    assert_eq!(modern["protocol"], "2026-07-28", "{transport}: negotiated by server/discover");
    let watched = json!(["trails://kg/Requirement", "trails://kg/Requirement/REQ-7"]);
    assert_eq!(modern["honored"], watched, "{transport}");
    assert_eq!(modern["listen_updates"], watched, "{transport}: subscriptions/listen delivered both updates");
    assert_eq!(
        modern["create_links"],
        json!(["trails://kg/Requirement/REQ-7"]),
        "{transport}: 2026-07-28 results link too"
    );
}

#[test]
fn the_typescript_sdks_drive_the_example_app_over_stdio_and_http() {
    let node = node_dir();
    let stdio = drive(&node, &["stdio", env!("CARGO_BIN_EXE_requirements"), "serve", "--stdio"]);
    assert_report(&stdio, "stdio");
    let server = crate::example().http();
    let addr = server.addr;
    let http = drive(&node, &["http", &format!("http://{addr}/mcp")]);
    assert_report(&http, "http");
}
