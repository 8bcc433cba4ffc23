//! stdio against careless clients, on the real fixture binary: every line gets an answer (a
//! malformed one a JSON-RPC error with `"id": null`, an overlong one too, without buffering it),
//! the session goes on after each, and a closed stdout ends the process.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

struct Server {
    child: trails_tests::KilledOnDrop,
    _dir: tempfile::TempDir,
}

fn start() -> (Server, ChildStdin, BufReader<ChildStdout>) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("trails.toml");
    // Lines (like HTTP bodies) of at most 4 KiB.
    std::fs::write(&config, "[mcp]\nscopes = [\"runtime\"]\n\n[http]\nmax_body_bytes = 4096\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_trails-fixture-server"))
        .args(["serve", "--stdio", "--config"])
        .arg(&config)
        .env("TRAILS_KG_PATH", dir.path().join("kg"))
        .env("TRAILS_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (Server { child: trails_tests::KilledOnDrop(child), _dir: dir }, stdin, stdout)
}

fn answer(stdout: &mut BufReader<ChildStdout>) -> Value {
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
}

#[test]
fn every_bad_line_is_answered_and_the_session_goes_on() {
    let (_server, mut stdin, mut stdout) = start();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}});
    writeln!(stdin, "{initialize}").unwrap();
    assert_eq!(answer(&mut stdout)["id"], 1);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    let long = format!(r#"{{"jsonrpc":"2.0","id":99,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(100_000));
    let bad: [(&[u8], i32, Value); 8] = [
        (b"\xff\xfe not utf-8", -32700, Value::Null),
        (b"{not json", -32700, Value::Null),
        (br#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#, -32600, Value::Null),
        (b"42", -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#, -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":5,"method":"ping","result":{}}"#, -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#, -32602, json!(3)),
        (long.as_bytes(), -32700, Value::Null),
    ];
    for (line, code, id) in &bad {
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        let got = answer(&mut stdout);
        let shown = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
        assert_eq!(got["error"]["code"], *code, "{shown}: {got}");
        assert_eq!(got.get("id"), Some(id), "{shown}: the id (null when unknown) is present: {got}");
    }
    // Blank lines are no messages; the session still answers.
    writeln!(stdin).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":4,"method":"ping"}}"#).unwrap();
    let pong = answer(&mut stdout);
    assert_eq!((pong["id"].clone(), pong["result"].clone()), (json!(4), json!({})), "{pong}");
}

#[test]
fn a_closed_stdout_ends_the_process() {
    let (mut server, mut stdin, mut stdout) = start();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}});
    writeln!(stdin, "{initialize}").unwrap();
    assert_eq!(answer(&mut stdout)["id"], 1);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    drop(stdout);
    let started = Instant::now();
    // Every write of the server's now fails; it must stop rather than keep failing.
    for id in 0..50 {
        if writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    while started.elapsed() < Duration::from_secs(10) {
        if server.child.0.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the server kept running with its stdout closed");
}
