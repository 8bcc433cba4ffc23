//! The official Python and TypeScript MCP SDKs drive the fixture app: a tool that asks the user,
//! the client's model and its roots, a tool reporting progress and prompts, over Streamable HTTP
//! (2026-07-28, and a 2025 session) and stdio (`tests/interop/python_asks.py`,
//! `tests/interop/ts/asks.mjs`); and its task tools, polled by the Python SDK
//! (`tests/interop/python_tasks.py`).

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The fixture app's process, stopped when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The fixture app over HTTP, keeping what it keeps (its tasks' records) in `data`.
fn serve_http(data: &Path) -> (Served, String) {
    let address = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["serve", "--http", &address.to_string()])
        .current_dir(std::env::temp_dir())
        .env("TRAILS_LOG", "warn")
        .env("TRAILS_KG_PATH", data)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(address).is_err() {
        assert!(Instant::now() < deadline, "the fixture app did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    (Served(child), format!("http://{address}/mcp"))
}

/// The report of the interop script `command` runs, away from any `trails.toml` (the stdio
/// servers it starts keep what they keep in a directory of their own).
fn report(mut command: Command, what: &str) -> Value {
    let data = tempfile::tempdir().unwrap();
    command.current_dir(std::env::temp_dir()).env("TRAILS_KG_PATH", data.path());
    trails_tests::servers::interop_report(command, what)
}

/// The Python SDK.
fn drive(args: &[&str]) -> Value {
    let venv = trails_tests::servers::python().expect("the Python tools");
    let mut command = Command::new(venv.join("bin/python"));
    command.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/python_asks.py")).args(args);
    report(command, &format!("the Python client ({args:?})"))
}

/// What every transport shows the same way: progress before the answer, the prompt's text.
fn assert_common(report: &Value, how: &str) {
    let steps: Vec<f64> = report["progress"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
    assert_eq!(steps, [0.0, 50.0, 100.0], "{how}: {report}");
    assert_eq!(report["progress"][1][1], 100.0, "{how}: the total");
    assert_eq!(report["prompt"], json!(["Prompt with arguments: arg1='one', arg2='two'"]), "{how}");
}

/// 2026-07-28: the SDK answers the input-required rounds with its callbacks and calls again.
fn assert_current(report: &Value, how: &str) {
    assert_eq!(report["protocol"], "2026-07-28", "{how}: {report}");
    assert_eq!(report["asked_is_error"], false, "{how}: {report}");
    assert_eq!(report["asked_result"], json!(["Hello Ada (1 roots)"]), "{how}: the three answers reached the tool");
    let asked: Vec<&str> = report["asked"].as_array().unwrap().iter().map(|a| a["method"].as_str().unwrap()).collect();
    for method in ["elicitation/create", "sampling/createMessage", "roots/list"] {
        assert!(asked.contains(&method), "{how}: {method} not asked: {asked:?}");
    }
    assert_eq!(report["asking_prompt"], json!(["Write about release notes."]), "{how}: a prompt asks too");
    assert_common(report, how);
}

/// A 2025 session: the same questions as requests to the client.
fn assert_legacy(report: &Value, how: &str) {
    assert_eq!(report["protocol"], "2025-11-25", "{how}: {report}");
    let result = report["asked_result"][0].as_str().unwrap();
    assert!(result.starts_with("User response: action=accept"), "{how}: {result}");
    assert!(result.contains("ada@example.org"), "{how}: {result}");
    assert_eq!(report["asked"], json!([{ "method": "elicitation/create", "message": "Who are you?" }]), "{how}");
    assert_common(report, how);
}

#[test]
fn the_python_sdk_answers_what_the_fixture_asks_over_http_and_stdio() {
    let data = tempfile::tempdir().unwrap();
    let (_served, url) = serve_http(data.path());
    assert_current(&drive(&["auto", "http", &url]), "HTTP, 2026-07-28");
    assert_legacy(&drive(&["legacy", "http", &url]), "HTTP, a 2025 session");
    let binary = env!("CARGO_BIN_EXE_conformance");
    assert_current(&drive(&["auto", "stdio", binary, "serve", "--stdio"]), "stdio, 2026-07-28");
    assert_legacy(&drive(&["legacy", "stdio", binary, "serve", "--stdio"]), "stdio, 2025");
}

/// The Python SDK at 2026-07-28 with a Tasks extension of its own (`tests/interop/python_tasks.py`:
/// the SDK's `ClientExtension` claiming `resultType: "task"`): a fast tool answers at once, a slow
/// one and one that asks become tasks the SDK polls to their results, answering the question the
/// task asks through `tasks/update`.
#[test]
fn the_python_sdk_polls_the_fixtures_tasks_to_their_results() {
    let data = tempfile::tempdir().unwrap();
    let (_served, url) = serve_http(data.path());
    let venv = trails_tests::servers::python().expect("the Python tools");
    let mut command = Command::new(venv.join("bin/python"));
    command.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/python_tasks.py")).arg(&url);
    let report = report(command, "the Python client's tasks");
    assert_eq!(report["protocol"], "2026-07-28", "{report}");
    assert_eq!(report["greet"], json!(["Hello, Ada!"]), "a sync tool is no task: {report}");
    assert_eq!(report["slow"], json!(["python done after 2 s"]), "{report}");
    assert_eq!(report["statuses"]["slow_compute"], json!(["working", "completed"]), "{report}");
    assert_eq!(report["statuses"]["confirm_delete"], json!(["working", "input_required", "completed"]), "{report}");
    assert_eq!(report["asked"], json!([["confirm", "elicitation/create", "Delete notes.txt?"]]), "{report}");
    assert_eq!(report["acks"], json!([{ "resultType": "complete" }]), "{report}");
    assert_eq!(report["confirmed"], json!(["Deleted notes.txt"]), "{report}");
    assert!(report.get("elicited_directly").is_none(), "a task asks through tasks/get: {report}");
}

/// The TypeScript SDKs: `@modelcontextprotocol/client` 2.x at 2026-07-28, `@modelcontextprotocol/sdk`
/// 1.x as a 2025 session.
fn drive_typescript(args: &[&str]) -> Value {
    let dir = trails_tests::servers::node_packages(&["ts/asks.mjs"]);
    let mut command = Command::new("node");
    command.arg(dir.join("asks.mjs")).args(args);
    report(command, &format!("the TypeScript client ({args:?})"))
}

fn assert_typescript(report: &Value, how: &str) {
    let modern = &report["modern"];
    assert_eq!(modern["protocol"], "2026-07-28", "{how}: {modern}");
    assert_eq!(modern["asked_result"], json!(["Hello Ada (1 roots)"]), "{how}: the SDK answered the rounds");
    let asked = modern["asked"].as_array().unwrap();
    for method in ["elicitation/create", "sampling/createMessage", "roots/list"] {
        assert!(asked.contains(&json!(method)), "{how}: {method} not asked: {asked:?}");
    }
    assert_eq!(modern["asking_prompt"], json!(["Write about release notes."]), "{how}");
    let legacy = &report["legacy"];
    assert!(legacy["asked_result"][0].as_str().unwrap().contains("ada@example.org"), "{how}: {legacy}");
    assert_eq!(legacy["asked"], json!(["Who are you?"]), "{how}");
    for side in [modern, legacy] {
        let steps: Vec<f64> = side["progress"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
        assert_eq!(steps, [0.0, 50.0, 100.0], "{how}: {side}");
        assert_eq!(side["prompt"], json!(["Prompt with arguments: arg1='one', arg2='two'"]), "{how}");
    }
}

#[test]
fn the_typescript_sdks_answer_what_the_fixture_asks_over_http_and_stdio() {
    let data = tempfile::tempdir().unwrap();
    let (_served, url) = serve_http(data.path());
    assert_typescript(&drive_typescript(&["http", &url]), "HTTP");
    assert_typescript(&drive_typescript(&["stdio", env!("CARGO_BIN_EXE_conformance"), "serve", "--stdio"]), "stdio");
}
