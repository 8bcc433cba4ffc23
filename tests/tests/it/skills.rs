//! Skills generated from the declarations (`App::generated_skills`, the MCP Skills extension):
//! one per namespace of the runtime tools, each a `SKILL.md` read off the descriptors, listed,
//! got and read as the extension says, and declared only when served.

use serde_json::{json, Value};

/// `method` with `params` as a stateless 2026-07-28 request to `addr`: the message answered.
async fn ask(addr: std::net::SocketAddr, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if method == "resources/read" {
        request = request.header("mcp-name", params["uri"].as_str().unwrap());
    }
    let response =
        request.json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })).send().await.unwrap();
    let text = response.text().await.unwrap();
    let body = text.lines().filter_map(|line| line.strip_prefix("data:")).next_back().unwrap_or(&text);
    serde_json::from_str(body.trim()).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

async fn serve(app: trails::App) -> (trails_tests::in_process::InProcess, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let settings = trails_tests::in_process::settings(&format!("[kg]\npath = {:?}\n", dir.path().join("kg")));
    (trails_tests::in_process::serve(app, settings).await, dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_per_namespace_says_what_its_tools_do_need_change_and_ask() {
    let (served, _dir) = serve(trails::App::new().generated_skills()).await;
    let listed = ask(served.addr, "skills/list", json!({})).await;
    let skills = listed["result"]["skills"].as_array().unwrap_or_else(|| panic!("{listed}"));
    let names: Vec<&str> = skills.iter().map(|skill| skill["frontmatter"]["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"requirements") && names.contains(&"fixtures"), "{names:?}");
    assert!(!names.iter().any(|name| name.contains("meta")), "meta capabilities are not the runtime's: {names:?}");
    let requirements = skills.iter().find(|skill| skill["frontmatter"]["name"] == "requirements").unwrap();
    assert_eq!(requirements["uri"], "skill://requirements/SKILL.md");
    let file = &requirements["resources"][0];
    assert_eq!(file["uri"], requirements["uri"], "the manifest lists SKILL.md itself");

    let read = ask(served.addr, "resources/read", json!({ "uri": "skill://requirements/SKILL.md" })).await;
    let contents = &read["result"]["contents"][0];
    assert!(contents.is_object(), "{read}");
    assert_eq!(contents["mimeType"], "text/markdown");
    let text = contents["text"].as_str().unwrap();
    assert_eq!(file["size"], text.len(), "the size the manifest promises");
    assert!(text.starts_with("---\nname: requirements\n"), "{text}");
    for said in [
        "## `requirements_delete`",
        "Asks the user first**: \"Delete this requirement for good?",
        "`instance_exists(node_type = \"Requirement\", key = \"req_id\")`",
        "deletes; records provenance",
        "`req_id` (string, required; matching `^REQ-\\d+$`",
        "about 120 tokens",
        "\"name\":\"requirements_delete\"",
    ] {
        assert!(text.contains(said), "{said} is not in:\n{text}");
    }

    let got = ask(served.addr, "skills/get", json!({ "uri": "skill://requirements/SKILL.md" })).await;
    assert_eq!(got["result"]["skill"], *requirements, "skills/get answers the listed entry");
    let unknown = ask(served.addr, "skills/get", json!({ "uri": "skill://nothing/SKILL.md" })).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let resources = ask(served.addr, "resources/list", json!({})).await;
    let uris: Vec<&str> =
        resources["result"]["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert!(uris.contains(&"skill://requirements/SKILL.md"), "{uris:?}");
    let discovered = ask(served.addr, "server/discover", json!({})).await;
    assert_eq!(discovered["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"], json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_app_that_asks_for_no_skills_declares_and_serves_none() {
    let (served, _dir) = serve(trails::App::new()).await;
    let discovered = ask(served.addr, "server/discover", json!({})).await;
    let extensions = &discovered["result"]["capabilities"]["extensions"];
    assert!(extensions.get("io.modelcontextprotocol/skills").is_none(), "{discovered}");
    let listed = ask(served.addr, "skills/list", json!({})).await;
    assert_eq!(listed["error"]["code"], -32601, "{listed}");
    let read = ask(served.addr, "resources/read", json!({ "uri": "skill://requirements/SKILL.md" })).await;
    assert!(read["error"].is_object(), "{read}");
}
