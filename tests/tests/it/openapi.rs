//! The OpenAPI projection and `POST /invoke/{id}` on the real fixture server: the document is
//! valid OpenAPI 3.1 (`openapi-spec-validator`) and lists what the caller may call; `/invoke`
//! answers like `tools/call` (the same result, the same FieldErrors) with the HTTP status of
//! each failure; and Schemathesis, driving the live server from the document, finds no server
//! error and no contract violation.

use std::path::{Path, PathBuf};
use std::process::Command;

use reqwest::StatusCode;
use serde_json::{json, Value};
use trails_tests::Served;

const DEV_TOKEN: &str = "openapi-dev-token";
const RUNTIME_TOKEN: &str = "openapi-runtime-token";

fn start() -> Served {
    let hash = |token: &str| trails::auth::sha256_hex(token);
    // Its own working directory: Schemathesis calls `trails_meta_schema_snapshot` with `write: true`.
    crate::fixture()
        .config(format!(
            "[mcp]\nscopes = [\"runtime\", \"builder\", \"dev\"]\n\n[http]\nsessions = false\n\n\
             [[http.tokens]]\nname = \"dev\"\nsha256 = \"{}\"\nscopes = [\"dev\"]\n\n\
             [[http.tokens]]\nname = \"runner\"\nsha256 = \"{}\"\nscopes = [\"runtime\"]\n",
            hash(DEV_TOKEN),
            hash(RUNTIME_TOKEN)
        ))
        .http()
}

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

async fn openapi(server: &Served, token: Option<&str>) -> Value {
    let mut request = client().get(format!("http://{}/openapi.json", server.addr));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    response.json().await.unwrap()
}

/// `POST /invoke/{id}` with a JSON body: (status, `WWW-Authenticate`, body).
async fn invoke(server: &Served, id: &str, token: Option<&str>, body: &Value) -> (StatusCode, Option<String>, Value) {
    let mut request = client().post(format!("http://{}/invoke/{id}", server.addr)).json(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let challenge = response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned());
    (status, challenge, response.json().await.unwrap())
}

/// The same call as a stateless MCP `tools/call`: its `result`, or its `error`.
async fn tools_call(server: &Served, name: &str, arguments: &Value) -> Result<Value, Value> {
    let response = client()
        .post(format!("http://{}/mcp", server.addr))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } }))
        .send()
        .await
        .unwrap();
    let mut answer: Value = response.json().await.unwrap();
    match answer.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(answer["error"].take()),
    }
}

fn venv() -> PathBuf {
    trails_tests::servers::python().unwrap_or_else(|error| panic!("{error}"))
}

fn operation_ids(document: &Value) -> Vec<String> {
    document["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|path| path["post"]["operationId"].as_str().unwrap().to_owned())
        .collect()
}

fn validate(document: &Value, dir: &Path, name: &str) {
    let file = dir.join(name);
    std::fs::write(&file, document.to_string()).unwrap();
    let output = Command::new(venv().join("bin/openapi-spec-validator")).arg(&file).output().unwrap();
    assert!(
        output.status.success(),
        "{name} is not valid OpenAPI:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_document_is_valid_openapi_and_lists_what_the_caller_may_call() {
    let server = start();
    let anonymous = openapi(&server, None).await;
    let dev = openapi(&server, Some(DEV_TOKEN)).await;
    assert_eq!(anonymous["openapi"], "3.1.0");
    assert_eq!(anonymous["info"]["title"], "trails-fixture-server");
    validate(&anonymous, server.dir.path(), "anonymous.json");
    validate(&dev, server.dir.path(), "dev.json");
    let (anonymous_ids, dev_ids) = (operation_ids(&anonymous), operation_ids(&dev));
    assert!(anonymous_ids.contains(&"requirements.search".to_owned()), "{anonymous_ids:?}");
    assert!(!anonymous_ids.contains(&"trails.meta.tools.enable".to_owned()), "{anonymous_ids:?}");
    assert!(dev_ids.contains(&"trails.meta.tools.enable".to_owned()), "{dev_ids:?}");

    // Each operation carries the canonical descriptor as `x-trails-*`, and its input schema.
    let search = &dev["paths"]["/invoke/requirements.search"]["post"];
    assert_eq!(search["x-trails-tool"], "requirements_search");
    assert_eq!(search["x-trails-idempotent"], true);
    assert_eq!(search["x-trails-manifest-uri"], "/.well-known/capabilities#requirements.search");
    assert!(search["x-trails-cost"].is_object() && search["x-trails-side-effects"].is_object(), "{search}");
    let enable = &dev["paths"]["/invoke/trails.meta.tools.enable"]["post"];
    assert_eq!(enable["security"], json!([{ "bearer": [] }]));
    assert_eq!(enable["x-trails-scope"], "builder");

    // A disabled capability leaves the document (its cached copy included) until enabled again.
    let switch = |enabled: bool| json!({ "tool": "requirements_search", "enabled": enabled });
    let (status, _, _) = invoke(&server, "trails.meta.tools.enable", Some(DEV_TOKEN), &switch(false)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!operation_ids(&openapi(&server, None).await).contains(&"requirements.search".to_owned()));
    let (status, _, body) = invoke(&server, "requirements.search", None, &json!({})).await;
    assert_eq!((status, &body["error"]["code"]), (StatusCode::NOT_FOUND, &json!(-32602)), "{body}");
    invoke(&server, "trails.meta.tools.enable", Some(DEV_TOKEN), &switch(true)).await;
    assert!(operation_ids(&openapi(&server, None).await).contains(&"requirements.search".to_owned()));
}

#[tokio::test(flavor = "multi_thread")]
async fn invoke_answers_like_tools_call_with_the_status_of_each_failure() {
    let server = start();
    // The same result as `tools/call`.
    let arguments = json!({ "text": "x", "limit": 5 });
    let (status, _, body) = invoke(&server, "requirements.search", None, &arguments).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mcp = tools_call(&server, "requirements_search", &arguments).await.unwrap();
    assert_eq!(body["structuredContent"], mcp["structuredContent"]);
    assert_eq!(body["structuredContent"], json!({ "items": [] }));
    // A `bool` is `{"result": …}` on both, and the document's response schema says so.
    let (status, _, body) = invoke(&server, "fixtures.even", None, &json!({ "n": 4 })).await;
    assert_eq!((status, &body["structuredContent"]), (StatusCode::OK, &json!({ "result": true })), "{body}");
    let mcp = tools_call(&server, "fixtures_even", &json!({ "n": 3 })).await.unwrap();
    assert_eq!(mcp["structuredContent"], json!({ "result": false }), "{mcp}");
    let document = openapi(&server, None).await;
    let ok = &document["paths"]["/invoke/fixtures.even"]["post"]["responses"]["200"];
    let declared = ok["content"]["application/json"]["schema"].to_string();
    assert!(declared.contains(r#""result":{"type":"boolean"}"#), "{declared}");

    // The same FieldErrors, every one of them, with 422.
    let bad = json!({ "handle": "x", "tier": 9, "colour": "red" });
    let (status, _, body) = invoke(&server, "fixtures.constraints", None, &bad).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let mcp = tools_call(&server, "fixtures_constraints", &bad).await.unwrap_err();
    assert_eq!(body["error"], mcp, "the error object is the JSON-RPC one");
    assert!(body["error"]["data"]["fields"].as_array().unwrap().len() >= 3, "{body}");

    // A unique value another instance has: the arguments are fine, the stored data conflicts.
    let person = json!({ "name": "Ada", "email": "ada@example.org" });
    assert_eq!(invoke(&server, "people.create", None, &person).await.0, StatusCode::OK);
    let (status, _, body) = invoke(&server, "people.create", None, &person).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["data"]["fields"][0]["code"], "unique", "{body}");

    // Who may call it comes before what the body says.
    let (status, challenge, body) =
        invoke(&server, "trails.meta.tools.enable", None, &json!("not even an object")).await;
    assert_eq!((status, body["error"]["code"].clone()), (StatusCode::UNAUTHORIZED, json!(-32001)), "{body}");
    assert_eq!(challenge.as_deref(), Some(r#"Bearer realm="trails""#));
    let (status, _, body) = invoke(&server, "trails.meta.tools.enable", Some(RUNTIME_TOKEN), &json!({})).await;
    assert_eq!((status, body["error"]["code"].clone()), (StatusCode::FORBIDDEN, json!(-32004)), "{body}");
    assert_eq!(body["error"]["data"]["required_scope"], "builder");
    let (status, challenge, body) = invoke(&server, "requirements.search", Some("wrong"), &json!({})).await;
    assert_eq!((status, challenge.is_some()), (StatusCode::UNAUTHORIZED, true));
    assert_eq!(
        body,
        json!({ "error": { "code": -32001, "message": "authentication failed" } }),
        "no JSON-RPC envelope"
    );

    // Unknown capability; a body that is not a JSON object, or not JSON; not JSON at all.
    let (status, _, body) = invoke(&server, "no.such.capability", None, &json!({})).await;
    assert_eq!((status, body["error"]["data"]["tool"].clone()), (StatusCode::NOT_FOUND, json!("no.such.capability")));
    let (status, _, body) = invoke(&server, "requirements.search", None, &json!([1])).await;
    assert_eq!((status, body["error"]["code"].clone()), (StatusCode::BAD_REQUEST, json!(-32602)), "{body}");
    let raw = |content_type: &'static str, body: &'static str| {
        client()
            .post(format!("http://{}/invoke/requirements.search", server.addr))
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let response = raw("application/json", "{\"text\":").await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(response.json::<Value>().await.unwrap()["error"]["code"], -32700);
    let response = raw("text/plain", "{}").await.unwrap();
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let response = client().get(format!("http://{}/invoke/requirements.search", server.addr)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);

    // A failing handler: 500 with the trace id, never the cause.
    let (status, _, body) = invoke(&server, "fixtures.fail", None, &json!({ "how": "internal" })).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(body["error"]["data"]["trace_id"].is_string() && !body.to_string().contains("hunter2"), "{body}");
}

#[test]
fn schemathesis_finds_no_server_error_and_no_contract_violation() {
    let server = start();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/schemathesis.toml");
    let runs: [(&str, &[&str]); 2] = [
        // As an anonymous caller: the runtime capabilities.
        ("anonymous", &[]),
        // With a dev token: every capability but the two that change what the others answer
        // (`tools.enable` disables them; `fixture.reset` empties the graph mid-run).
        (
            "dev",
            &[
                "--exclude-operation-id",
                "trails.meta.tools.enable",
                "--exclude-operation-id",
                "trails.meta.fixture.reset",
            ],
        ),
    ];
    for (who, extra) in runs {
        let mut command = Command::new(venv().join("bin/schemathesis"));
        command
            .current_dir(server.dir.path())
            .arg("--config-file")
            .arg(&config)
            .args(["run", &format!("http://{}/openapi.json", server.addr)])
            .args(["--checks", "all", "--max-examples", "25", "--seed", "20261123", "--workers", "1"])
            // `fixtures.fail` fails on purpose (500 and a panic), to pin the error codes.
            .args(["--exclude-operation-id", "fixtures.fail"])
            // `fixtures.note.sneak` and `.touch` write what they did not declare, on purpose (the
            // store refuses it: a 500).
            .args(["--exclude-operation-id", "fixtures.note.sneak"])
            .args(["--exclude-operation-id", "fixtures.note.touch"])
            // `fixtures.count` and `fixtures.crunch` wait on purpose (seconds, for the cancellation
            // and task tests).
            .args(["--exclude-operation-id", "fixtures.count"])
            .args(["--exclude-operation-id", "fixtures.crunch"])
            .args(extra)
            .env("SCHEMATHESIS_TELEMETRY", "false")
            .env("NO_COLOR", "1");
        if who == "dev" {
            command.args(["--header", &format!("Authorization: Bearer {DEV_TOKEN}")]);
        }
        let output = command.output().unwrap();
        assert!(
            output.status.success(),
            "schemathesis ({who}) found failures:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn invoke_and_shapes_can_each_be_switched_off_and_mcp_stays() {
    let server = crate::fixture().config("[http]\nsessions = false\ninvoke = false\nshapes = false\n").http();
    let client = reqwest::Client::new();
    let base = format!("http://{}", server.addr);
    for (method, path) in [
        ("GET", "/openapi.json"),
        ("POST", "/invoke/research.search"),
        ("GET", "/shapes.ttl"),
        ("GET", "/shapes/Requirement"),
    ] {
        let request = client.request(method.parse().unwrap(), format!("{base}{path}")).json(&json!({ "query": "x" }));
        assert_eq!(request.send().await.unwrap().status(), StatusCode::NOT_FOUND, "{method} {path}");
    }
    assert_eq!(client.get(format!("{base}/.well-known/capabilities")).send().await.unwrap().status(), StatusCode::OK);
    let answer =
        trails_tests::client::call_tool(server.addr, None, "research_search", json!({ "query": "graphs" })).await;
    assert!(answer["result"]["structuredContent"].is_object(), "{answer}");

    // Switched on (the default), the same paths answer.
    let server = crate::fixture().config("[http]\nsessions = false\n").http();
    let base = format!("http://{}", server.addr);
    assert_eq!(client.get(format!("{base}/openapi.json")).send().await.unwrap().status(), StatusCode::OK);
    assert_eq!(client.get(format!("{base}/shapes.ttl")).send().await.unwrap().status(), StatusCode::OK);
}
