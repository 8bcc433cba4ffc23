//! OpenTelemetry (`[telemetry]`): what the app exports over OTLP/HTTP, received by a collector
//! stand-in the test starts (`tests/interop/otlp_receiver.py`) that decodes it with the official
//! OTLP protobuf definitions — not with the exporter's own code.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fixture;

const TOKEN: &str = "telemetry-builder-token";
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// The receiver, killed when dropped; what arrived is in `out`, a JSON line per export.
struct Receiver {
    child: Child,
    _stdout: std::io::BufReader<std::process::ChildStdout>,
    out: std::path::PathBuf,
    _dir: tempfile::TempDir,
    port: u16,
}

impl Receiver {
    fn start() -> Receiver {
        let python = trails_tests::servers::python().expect("the Python test environment").join("bin/python");
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/otlp_receiver.py");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("received.jsonl");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = Command::new(python)
            .arg(script)
            .arg(port.to_string())
            .arg(&out)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python runs");
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        assert_eq!(line.trim(), "listening", "the OTLP receiver did not start");
        Receiver { child, _stdout: stdout, out, _dir: dir, port }
    }

    /// Every export of `signal` received so far.
    fn received(&self, signal: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|export| export["signal"] == signal)
            .map(|export| export["request"].clone())
            .collect()
    }

    /// Every span received, each with its resource's attributes beside it.
    fn spans(&self) -> Vec<(Value, Value)> {
        let mut spans = Vec::new();
        for request in self.received("traces") {
            for resource in request["resource_spans"].as_array().into_iter().flatten() {
                for scope in resource["scope_spans"].as_array().into_iter().flatten() {
                    for span in scope["spans"].as_array().into_iter().flatten() {
                        spans.push((span.clone(), resource["resource"].clone()));
                    }
                }
            }
        }
        spans
    }

    /// Wait (up to 15 s) until `ready` holds of what arrived.
    fn wait_for<T>(&self, what: &str, ready: impl Fn(&Receiver) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(found) = ready(self) {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "{what} never arrived; received:\n{}",
                std::fs::read_to_string(&self.out).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A span attribute's value, as text.
fn attribute(span: &Value, key: &str) -> Option<String> {
    let found = span["attributes"].as_array()?.iter().find(|a| a["key"] == key)?;
    let value = &found["value"];
    value["string_value"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| value["int_value"].as_str().map(str::to_owned))
        .or_else(|| value.get("int_value").map(Value::to_string))
}

async fn post(addr: std::net::SocketAddr, headers: &[(&str, &str)], body: Value) -> Value {
    trails_tests::client::post_with(addr, Some(TOKEN), headers, &body).await.answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traced_tools_call_arrives_as_one_trace_under_the_clients_traceparent() {
    let receiver = Receiver::start();
    let served = fixture()
        .config(format!(
            "[mcp]\nscopes = [\"builder\"]\n[http]\nsessions = false\n\
             [[http.tokens]]\nname = \"builder\"\nsha256 = \"{}\"\nscopes = [\"builder\"]\n\
             [telemetry]\notlp_endpoint = \"http://127.0.0.1:{}\"\nservice_name = \"fixture-under-test\"\n",
            trails::auth::sha256_hex(TOKEN),
            receiver.port
        ))
        // Export at once rather than every few seconds.
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "300")
        // The default filter: what an operator sees.
        .log(None)
        .http();
    let addr = served.addr;

    // The client's trace context in `_meta` (MCP 2026-07-28's place for it).
    let traceparent = format!("00-{TRACE}-{CLIENT_SPAN}-01");
    let created = post(
        addr,
        &[],
        json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {
            "name": "requirements_create",
            "arguments": {"req_id": "REQ-71", "title": "Traced", "status": "proposed", "priority": 1, "tags": []},
            "_meta": {"traceparent": traceparent, "tracestate": "vendor=1"}}}),
    )
    .await;
    assert!(created["result"].is_object(), "{created}");
    // Another trace in the HTTP headers, for a call that fails validation.
    let other = "0af7651916cd43dd8448eb211c80319c";
    let refused = post(
        addr,
        &[("traceparent", &format!("00-{other}-b7ad6b7169203331-01"))],
        json!({"jsonrpc": "2.0", "id": "r-2", "method": "tools/call", "params": {
            "name": "requirements_create", "arguments": {"req_id": 7}}}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    // The call's server span: a child of the client's span, named and attributed per the MCP
    // semantic conventions.
    let (server, resource) = receiver.wait_for("the tools/call span", |r| {
        r.spans()
            .into_iter()
            .find(|(span, _)| span["trace_id"] == TRACE && span["name"] == "tools/call requirements_create")
    });
    assert_eq!(server["parent_span_id"], CLIENT_SPAN, "{server}");
    assert_eq!(server["kind"], "SPAN_KIND_SERVER", "{server}");
    for (key, expected) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "requirements_create"),
        ("gen_ai.operation.name", "execute_tool"),
        ("jsonrpc.request.id", "41"),
        ("mcp.protocol.version", "2025-06-18"),
    ] {
        assert_eq!(attribute(&server, key).as_deref(), Some(expected), "{key} in {server}");
    }
    assert_eq!(attribute(&server, "error.type"), None, "{server}");
    let service = resource["attributes"].as_array().unwrap().iter().find(|a| a["key"] == "service.name").cloned();
    assert_eq!(service.unwrap()["value"]["string_value"], "fixture-under-test");

    // One trace: the pipeline, validation, the handler and the store's write are its
    // descendants (each span's parent is in the trace, up to the server span).
    // Two store writes: the instance, and the call's provenance activity.
    let wanted = ["pipeline", "validate", "handler requirements_create", "kg.write"];
    let trace = receiver.wait_for("the call's child spans", |r| {
        let trace: Vec<Value> = r.spans().into_iter().map(|(s, _)| s).filter(|s| s["trace_id"] == TRACE).collect();
        let writes = trace.iter().filter(|s| s["name"] == "kg.write").count();
        (wanted.iter().all(|name| trace.iter().any(|s| s["name"] == *name)) && writes >= 2).then_some(trace)
    });
    let provenance = |span: &Value| attribute(span, "graph").is_some_and(|graph| graph.contains("/prov"));
    assert!(trace.iter().any(provenance), "the provenance write is in the call's trace");
    let ids: Vec<&Value> = trace.iter().map(|s| &s["span_id"]).collect();
    for span in &trace {
        if span["span_id"] != server["span_id"] {
            assert!(ids.contains(&&span["parent_span_id"]), "{} has a parent outside the trace", span["name"]);
        }
    }

    // The refused call: its own trace (from the header), `error.type` the JSON-RPC code.
    let (failed, _) = receiver.wait_for("the refused call's span", |r| {
        r.spans()
            .into_iter()
            .find(|(span, _)| span["trace_id"] == other && span["name"] == "tools/call requirements_create")
    });
    assert_eq!(attribute(&failed, "error.type").as_deref(), Some("-32602"), "{failed}");
    assert_eq!(attribute(&failed, "jsonrpc.request.id").as_deref(), Some("r-2"), "{failed}");
    assert_eq!(failed["status"]["code"], "STATUS_CODE_ERROR", "{failed}");

    // The operation duration histogram, in seconds, with the method and the tool.
    let metric = receiver.wait_for("mcp.server.operation.duration", |r| {
        r.received("metrics").into_iter().find_map(|request| {
            let metrics = request["resource_metrics"][0]["scope_metrics"]
                .as_array()?
                .iter()
                .flat_map(|s| s["metrics"].as_array().cloned().unwrap_or_default())
                .collect::<Vec<_>>();
            metrics.into_iter().find(|m| m["name"] == "mcp.server.operation.duration")
        })
    });
    assert_eq!(metric["unit"], "s", "{metric}");
    let points = metric["histogram"]["data_points"].as_array().unwrap();
    assert!(
        points.iter().any(|p| attribute(p, "gen_ai.tool.name").as_deref() == Some("requirements_create")),
        "{metric}"
    );

    // Provenance carries the trace the call was part of.
    let reader = "5b8aa5a2d2c872e8321cf37308d69df2";
    let read = post(
        addr,
        &[("traceparent", &format!("00-{reader}-{CLIENT_SPAN}-01"))],
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "trails://prov/latest"}}),
    )
    .await;
    let latest: Value = serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    let activity = latest["activities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["capability"] == "requirements.create" && a["outcome"] == "success")
        .cloned();
    assert_eq!(activity.unwrap()["trace_id"], TRACE, "{latest}");

    // A resource read is an operation of its own: `resources/read {uri}`, with the URI.
    let (read_span, _) = receiver
        .wait_for("the resources/read span", |r| r.spans().into_iter().find(|(span, _)| span["trace_id"] == reader));
    assert_eq!(read_span["name"], "resources/read trails://prov/latest", "{read_span}");
    assert_eq!(attribute(&read_span, "mcp.resource.uri").as_deref(), Some("trails://prov/latest"));
    assert_eq!(attribute(&read_span, "mcp.method.name").as_deref(), Some("resources/read"));
    // No store write is a trace of its own.
    let roots: Vec<Value> = receiver
        .spans()
        .into_iter()
        .map(|(span, _)| span)
        .filter(|span| span["name"] == "kg.write" && span["parent_span_id"].as_str().unwrap_or_default().is_empty())
        .collect();
    assert!(roots.is_empty(), "store writes outside any call's trace: {roots:?}");

    // The log says where export goes, and when the collector goes away.
    assert!(served.stderr().contains("exporting spans and metrics over OTLP/HTTP"), "{}", served.stderr());
    drop(receiver);
    let _ = post(addr, &[], json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while !served.stderr().contains("OTLP export failed") {
        assert!(Instant::now() < deadline, "an unreachable collector went unreported:\n{}", served.stderr());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Configured by the standard variables alone, a session client's calls carry the session id;
/// a call whose handler fails is `error.type = tool_error`; a session that ends records its
/// duration; `tracestate` goes on with the trace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_otel_variables_alone_export_a_sessions_calls_and_its_duration() {
    let receiver = Receiver::start();
    let served = fixture()
        .config("[http]\nsessions = true\n")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{}", receiver.port))
        .env("OTEL_SERVICE_NAME", "named-by-the-environment")
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "300")
        .http();
    let client = trails_tests::client::connect(served.addr, None).await;
    let mut arguments = serde_json::Map::new();
    arguments.insert("how".into(), json!("conflict"));
    let meta = json!({"traceparent": format!("00-{TRACE}-{CLIENT_SPAN}-01"), "tracestate": "vendor=7"});
    let mut params = rmcp::model::CallToolRequestParams::new("fixtures_fail").with_arguments(arguments);
    let meta = rmcp::model::MetaObject(meta.as_object().unwrap().clone());
    params.meta = Some(rmcp::model::RequestMetaObject(meta));
    let failed = client.call_tool(params).await.unwrap();
    assert_eq!(failed.is_error, Some(true), "{failed:?}");
    client.cancel().await.unwrap();

    let (span, resource) = receiver.wait_for("the session's tools/call span", |r| {
        r.spans().into_iter().find(|(span, _)| span["name"] == "tools/call fixtures_fail")
    });
    assert_eq!((span["trace_id"].as_str(), span["parent_span_id"].as_str()), (Some(TRACE), Some(CLIENT_SPAN)));
    assert_eq!(span["trace_state"], "vendor=7", "{span}");
    assert_eq!(attribute(&span, "error.type").as_deref(), Some("tool_error"), "{span}");
    assert!(attribute(&span, "mcp.session.id").is_some_and(|id| !id.is_empty()), "{span}");
    let service = resource["attributes"].as_array().unwrap().iter().find(|a| a["key"] == "service.name").cloned();
    assert_eq!(service.unwrap()["value"]["string_value"], "named-by-the-environment");
    receiver.wait_for("mcp.server.session.duration", |r| {
        r.received("metrics").into_iter().find_map(|request| {
            let scopes = request["resource_metrics"][0]["scope_metrics"].as_array()?.clone();
            let metrics: Vec<Value> =
                scopes.iter().flat_map(|s| s["metrics"].as_array().cloned().unwrap_or_default()).collect();
            metrics.into_iter().find(|m| m["name"] == "mcp.server.session.duration")
        })
    });
}
