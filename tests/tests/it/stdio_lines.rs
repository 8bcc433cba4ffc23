//! stdio against careless clients, on the real fixture binary: every line gets an answer (a
//! malformed one a JSON-RPC error with `"id": null`, an overlong one too, without buffering it),
//! the session goes on after each, and a closed stdout ends the process.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The fixture server on stdio, its session initialized; lines (like HTTP bodies) of at most
/// 4 KiB.
fn start() -> trails_tests::StdioApp {
    let mut server = crate::fixture()
        .config("[mcp]\nscopes = [\"runtime\"]\n\n[http]\nmax_body_bytes = 4096\n")
        .log(Some("error"))
        .stdio();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}});
    writeln!(server.stdin, "{initialize}").unwrap();
    assert_eq!(server.answer()["id"], 1);
    writeln!(server.stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    server
}

#[test]
fn every_bad_line_is_answered_and_the_session_goes_on() {
    let mut server = start();
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
        server.stdin.write_all(line).unwrap();
        server.stdin.write_all(b"\n").unwrap();
        let got = server.answer();
        let shown = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
        assert_eq!(got["error"]["code"], *code, "{shown}: {got}");
        assert_eq!(got.get("id"), Some(id), "{shown}: the id (null when unknown) is present: {got}");
    }
    // Blank lines are no messages; the session still answers.
    writeln!(server.stdin).unwrap();
    writeln!(server.stdin, r#"{{"jsonrpc":"2.0","id":4,"method":"ping"}}"#).unwrap();
    let pong = server.answer();
    assert_eq!((pong["id"].clone(), pong["result"].clone()), (json!(4), json!({})), "{pong}");
}

#[test]
fn a_closed_stdout_ends_the_process() {
    let mut server = start();
    drop(server.stdout);
    let started = Instant::now();
    // Every write of the server's now fails; it must stop rather than keep failing.
    for id in 0..50 {
        if writeln!(server.stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).is_err() {
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
