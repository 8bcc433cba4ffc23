//! The HTTP listener against careless and hostile clients, on the real fixture binary: shutdown
//! with open event streams and half-sent requests, slow and idle connections cut off, a body that
//! never finishes, connections past the cap, oversized request heads.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use trails_tests::Served;

/// The fixture server with `[http]` settings `http`.
fn start(http: &str) -> Served {
    start_with(http, Some("warn"))
}

/// The fixture server, its log filter `log` (`None`: the default).
fn start_with(http: &str, log: Option<&str>) -> Served {
    crate::fixture().config(format!("[mcp]\nscopes = [\"runtime\"]\n\n[http]\n{http}\n")).log(log).http()
}

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    stream
}

/// Everything the server sends until it closes the connection (or the read times out).
fn read_to_close(stream: &mut TcpStream) -> (String, Duration) {
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("the server kept the connection open: {e} (after {:?})", started.elapsed()),
        }
    }
    (String::from_utf8_lossy(&seen).into_owned(), started.elapsed())
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}"#;

/// One request on its own connection (`Connection: close`); the whole answer as text.
fn exchange(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> String {
    exchange_as(addr, "127.0.0.1", method, path, headers, body.as_bytes())
}

/// [`exchange`] with this `Host` and raw body bytes.
fn exchange_as(
    addr: SocketAddr,
    host: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> String {
    let mut stream = connect(addr);
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    read_to_close(&mut stream).0
}

const JSON: [(&str, &str); 2] =
    [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];

/// The value of response header `name` in `answer`.
fn header<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    answer.lines().take_while(|line| !line.is_empty()).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[test]
fn sigint_ends_open_event_streams_and_half_sent_requests_and_exits_within_the_grace_period() {
    for name in ["INT", "TERM"] {
        let mut server = start("shutdown_grace_secs = 2");
        // A 2025-06-18 session with its event stream open (what every session client keeps).
        let initialized = exchange(server.addr, "POST", "/mcp", &JSON, INITIALIZE);
        let session = header(&initialized, "mcp-session-id").expect("a session").to_owned();
        let in_session =
            [JSON[0], JSON[1], ("Mcp-Session-Id", session.as_str()), ("Mcp-Protocol-Version", "2025-06-18")];
        exchange(server.addr, "POST", "/mcp", &in_session, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let mut events = connect(server.addr);
        let get = format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             Mcp-Protocol-Version: 2025-06-18\r\n\r\n"
        );
        events.write_all(get.as_bytes()).unwrap();
        let mut head = [0u8; 12];
        events.read_exact(&mut head).unwrap();
        assert_eq!(&head, b"HTTP/1.1 200", "the event stream is open");
        // And a request whose body never finishes.
        let mut half = connect(server.addr);
        half.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\"").unwrap();
        std::thread::sleep(Duration::from_millis(200));

        server.signal(name);
        // The event stream ends at once; the half-sent request holds on to the grace period.
        let (_, ended) = read_to_close(&mut events);
        assert!(ended < Duration::from_millis(1500), "SIG{name}: the event stream ended after {ended:?}");
        let code = server.exits_within(Duration::from_secs(5));
        assert_eq!(code, Some(0), "SIG{name}: exit 0 within the grace period (2 s) plus slack");
    }
}

#[test]
fn a_request_head_that_trickles_is_cut_off_and_so_is_an_idle_connection() {
    let server = start("header_timeout_secs = 1");
    // Slowloris: a head that never ends.
    let mut slow = connect(server.addr);
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(300));
        if slow.write_all(b"X-Slow: 1\r\n").is_err() {
            break;
        }
    }
    let (_, waited) = read_to_close(&mut slow);
    assert!(waited < Duration::from_secs(3), "the trickling head was cut off (after {waited:?} more)");
    // An idle keep-alive connection, after one full exchange.
    let mut idle = connect(server.addr);
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let started = Instant::now();
    let (answer, _) = read_to_close(&mut idle);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(3), "the idle connection was closed after {elapsed:?}");
    assert!(elapsed > Duration::from_millis(700), "kept alive until idle, not closed at once: {elapsed:?}");
    // A connection that never sends a byte.
    let mut silent = connect(server.addr);
    let (_, waited) = read_to_close(&mut silent);
    assert!(waited < Duration::from_secs(3), "the silent connection was closed after {waited:?}");
}

#[test]
fn a_body_that_never_finishes_is_answered_408_with_a_json_rpc_error() {
    let server = start("body_timeout_secs = 1\nheader_timeout_secs = 10");
    let mut slow = connect(server.addr);
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 400\r\n\r\n{\"jsonrpc\":").unwrap();
    let (answer, waited) = read_to_close(&mut slow);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"jsonrpc\":\"2.0\"") && answer.contains("-32600"), "{answer}");
    assert!(waited < Duration::from_secs(4), "answered after {waited:?}");
}

#[test]
fn connections_past_the_cap_are_refused_with_503_and_served_again_once_others_close() {
    let server = start("max_connections = 4\nheader_timeout_secs = 30");
    // Let the server see start()'s probe connection close (it holds a slot until then).
    std::thread::sleep(Duration::from_millis(500));
    let held: Vec<TcpStream> = (0..4).map(|_| connect(server.addr)).collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut fifth = connect(server.addr);
    fifth.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let (answer, _) = read_to_close(&mut fifth);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after:"), "{answer}");
    assert!(answer.contains("-32000") || answer.contains("\"error\""), "a JSON-RPC error body: {answer}");
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !exchange(server.addr, "GET", "/healthz", &[], "").starts_with("HTTP/1.1 200") {
        assert!(Instant::now() < deadline, "slots came back once the held connections closed");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_oversized_request_head_is_refused_431_without_buffering_it() {
    let server = start("max_header_bytes = 16384");
    let mut big = connect(server.addr);
    // Past the bound, yet small enough to sit in the socket buffers whole: the answer is read.
    let header = format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\n\r\n", "a".repeat(40_000));
    big.write_all(header.as_bytes()).unwrap();
    let (answer, _) = read_to_close(&mut big);
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    // Far past it: refused without being buffered (a failed write is part of the refusal).
    let mut huge = connect(server.addr);
    let header = format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\n\r\n", "a".repeat(4_000_000));
    let _ = huge.write_all(header.as_bytes());
    let (answer, _) = read_to_close(&mut huge);
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 431"), "{answer}");
    let ok = exchange(server.addr, "GET", "/healthz", &[], "");
    assert!(ok.starts_with("HTTP/1.1 200"), "an ordinary request still passes: {ok}");
}

#[test]
fn a_second_signal_ends_the_grace_period_at_once() {
    let mut server = start("shutdown_grace_secs = 60\nbody_timeout_secs = 120");
    let mut half = connect(server.addr);
    half.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    server.signal("INT");
    assert_eq!(server.exits_within(Duration::from_millis(800)), None, "the grace period holds");
    server.signal("INT");
    assert_eq!(server.exits_within(Duration::from_secs(3)), Some(0), "the second signal ends it");
}

#[test]
fn every_route_refuses_a_foreign_host_or_origin_with_403() {
    let server = start("");
    for path in ["/healthz", "/.well-known/capabilities", "/mcp"] {
        let answer = exchange_as(server.addr, "evil.example", "GET", path, &[], b"");
        assert!(answer.starts_with("HTTP/1.1 403"), "{path}: {answer}");
        assert!(answer.contains("-32600") && answer.contains("Host"), "{path}: {answer}");
        let answer = exchange(server.addr, "GET", path, &[("Origin", "https://evil.example")], "");
        assert!(answer.starts_with("HTTP/1.1 403") && answer.contains("Origin"), "{path}: {answer}");
    }
    let answer = exchange(server.addr, "GET", "/healthz", &[("Origin", "http://localhost:5173")], "");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let answer = exchange_as(server.addr, &format!("localhost:{}", server.addr.port()), "GET", "/healthz", &[], b"");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn malformed_messages_get_400_with_a_json_rpc_error_and_bad_tool_params_get_32602() {
    let server = start("");
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let cases: [(&[u8], &str, i32); 11] = [
        (b"{not json", "400", -32700),
        (b"", "400", -32700),
        (b"\xff\xfe{}", "400", -32700),
        (deep.as_bytes(), "400", -32700),
        (br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, "400", -32600),
        (br#""ping""#, "400", -32600),
        (br#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, "400", -32600),
        (br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, "400", -32600),
        (br#"{"jsonrpc":"2.0","id":5,"method":"ping","result":{}}"#, "400", -32600),
        (br#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#, "200", -32602),
        (
            br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"trails_meta_ping","arguments":"x"}}"#,
            "200",
            -32602,
        ),
    ];
    for (body, status, code) in cases {
        let answer = exchange_as(server.addr, "127.0.0.1", "POST", "/mcp", &JSON, body);
        let shown = String::from_utf8_lossy(&body[..body.len().min(60)]).into_owned();
        assert!(answer.starts_with(&format!("HTTP/1.1 {status}")), "{shown}: {answer}");
        assert!(
            header(&answer, "content-type").is_some_and(|t| t.starts_with("application/json")),
            "{shown}: {answer}"
        );
        let json: serde_json::Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(json["error"]["code"], code, "{shown}: {answer}");
        if status == "200" {
            assert_ne!(json["id"], serde_json::Value::Null, "{shown}: answered with the request's id");
        }
    }
}

#[test]
fn hostile_names_are_echoed_cut_and_per_request_noise_stays_out_of_the_default_log() {
    let server = start_with("", None);
    let started = std::fs::metadata(server.dir.path().join("stderr.log")).unwrap().len();
    // Big enough to show, small enough for the `Mcp-Name` header under the 16 KiB head bound.
    let huge = "x".repeat(12_000);
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"probe","version":"0"}}"#;
    let v2026 = [JSON[0], JSON[1], ("Mcp-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call")];
    for n in 0..50 {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"{huge}","arguments":{{}},{meta}}}}}"#
        );
        let mut headers = v2026.to_vec();
        headers.push(("Mcp-Name", &huge));
        let answer = exchange_as(server.addr, "127.0.0.1", "POST", "/mcp", &headers, call.as_bytes());
        assert!(answer.len() < 4_096, "a 12 kB tool name is echoed cut: the answer is {} bytes", answer.len());
        assert!(!answer.contains(&huge[..1000]), "{}", &answer[..answer.len().min(300)]);
        assert!(
            answer.contains("unknown tool") && answer.contains("(12000 bytes)"),
            "{}",
            &answer[..answer.len().min(600)]
        );
        let bad_field = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"research_search","arguments":{{"{huge}":1}},{meta}}}}}"#
        );
        let mut headers = v2026.to_vec();
        headers.push(("Mcp-Name", "research_search"));
        let answer = exchange_as(server.addr, "127.0.0.1", "POST", "/mcp", &headers, bad_field.as_bytes());
        assert!(answer.len() < 8_192, "an unknown 12 kB field name is echoed cut: {} bytes", answer.len());
        assert!(answer.contains("unknown_field"), "{}", &answer[..answer.len().min(600)]);
        let bad_token = exchange(server.addr, "GET", "/healthz", &[("Authorization", "Bearer wrong")], "");
        assert!(bad_token.starts_with("HTTP/1.1 401"), "{bad_token}");
    }
    std::thread::sleep(Duration::from_millis(200));
    let logged = std::fs::metadata(server.dir.path().join("stderr.log")).unwrap().len() - started;
    let log = std::fs::read_to_string(server.dir.path().join("stderr.log")).unwrap();
    assert!(logged < 2_048, "150 hostile requests wrote {logged} bytes of log at the default level:\n{log}");
}

#[test]
fn sessions_belong_to_their_caller_and_anonymous_callers_cannot_take_every_slot() {
    let token = "session-test-token";
    let http = format!(
        "max_sessions = 4\nmax_anonymous_sessions = 2\nsession_init_secs = 3\n\n[[http.tokens]]\nname = \"ci\"\nsha256 = \"{}\"\nscopes = [\"runtime\"]",
        trails::auth::sha256_hex(token)
    );
    let server = start(&http);
    let bearer = format!("Bearer {token}");
    let with_token = [JSON[0], JSON[1], ("Authorization", bearer.as_str())];
    let session_of = |answer: &str| header(answer, "mcp-session-id").map(str::to_owned);
    // Anonymous callers fill their pool with sessions they never initialize.
    let mut half_opened = Vec::new();
    for _ in 0..2 {
        let answer = exchange(server.addr, "POST", "/mcp", &JSON, INITIALIZE);
        half_opened.push(session_of(&answer).unwrap_or_else(|| panic!("{answer}")));
    }
    let refused = exchange(server.addr, "POST", "/mcp", &JSON, INITIALIZE);
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert_eq!(header(&refused, "retry-after"), Some("5"));
    assert!(refused.contains("-32000") && refused.contains("present a token"), "{refused}");
    // A caller with a token still gets one, and it is theirs alone.
    let mine = session_of(&exchange(server.addr, "POST", "/mcp", &with_token, INITIALIZE)).expect("a session");
    let in_mine = [
        JSON[0],
        JSON[1],
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", mine.as_str()),
        ("Mcp-Protocol-Version", "2025-06-18"),
    ];
    exchange(server.addr, "POST", "/mcp", &in_mine, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    let as_anonymous = [JSON[0], JSON[1], ("Mcp-Session-Id", mine.as_str()), ("Mcp-Protocol-Version", "2025-06-18")];
    let stolen = exchange(server.addr, "POST", "/mcp", &as_anonymous, ping);
    assert!(stolen.starts_with("HTTP/1.1 404") && stolen.contains("-32600"), "{stolen}");
    let deleted = exchange(server.addr, "DELETE", "/mcp", &as_anonymous, "");
    assert!(deleted.starts_with("HTTP/1.1 404"), "another caller cannot end it: {deleted}");
    let used = exchange(server.addr, "POST", "/mcp", &in_mine, ping);
    assert!(used.starts_with("HTTP/1.1 200"), "still the owner's: {used}");
    let unknown = [("Mcp-Session-Id", "no-such-session"), ("Mcp-Protocol-Version", "2025-06-18")];
    let deleted = exchange(server.addr, "DELETE", "/mcp", &unknown, "");
    assert!(deleted.starts_with("HTTP/1.1 404") && deleted.contains("Session not found"), "{deleted}");
    // Half-opened sessions are closed (on a timer: no `initialize` has come to sweep them) and
    // the anonymous pool has room again.
    std::thread::sleep(Duration::from_millis(5000));
    let in_half_opened =
        [JSON[0], JSON[1], ("Mcp-Session-Id", half_opened[0].as_str()), ("Mcp-Protocol-Version", "2025-06-18")];
    let gone = exchange(server.addr, "POST", "/mcp", &in_half_opened, ping);
    assert!(gone.starts_with("HTTP/1.1 404") && gone.contains("Session not found"), "{gone}");
    let answer = exchange(server.addr, "POST", "/mcp", &JSON, INITIALIZE);
    assert!(session_of(&answer).is_some(), "{answer}");
    let deleted = exchange(server.addr, "DELETE", "/mcp", &in_mine, "");
    // 204, as the official SDKs expect (the Python SDK warns on rmcp's 202).
    assert!(deleted.starts_with("HTTP/1.1 204"), "the owner can end it: {deleted}");
}

/// A session's requests answered on the hot path (which rmcp's session worker never sees) keep
/// it open past `session_idle_secs`; once its client sends nothing for that long, it is closed.
#[test]
fn a_session_in_use_stays_open_and_an_idle_one_is_closed() {
    let server =
        start_with("session_idle_secs = 2\nsession_init_secs = 1", Some("error,trails_serve::http::hot=debug"));
    let answer = exchange(server.addr, "POST", "/mcp", &JSON, INITIALIZE);
    let session = header(&answer, "mcp-session-id").unwrap_or_else(|| panic!("{answer}")).to_owned();
    let in_session = [JSON[0], JSON[1], ("Mcp-Session-Id", session.as_str())];
    exchange(server.addr, "POST", "/mcp", &in_session, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // Its version was agreed once: a second handshake in it is refused, under its id.
    let again = exchange(server.addr, "POST", "/mcp", &in_session, INITIALIZE);
    assert!(again.starts_with("HTTP/1.1 400") && again.contains("already initialized"), "{again}");
    assert!(again.contains(r#""id":1"#), "{again}");
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"research_search","arguments":{"query":"graph"}}}"#;
    let started = Instant::now();
    let mut calls = 0;
    while started.elapsed() < Duration::from_millis(4_500) {
        let answer = exchange(server.addr, "POST", "/mcp", &in_session, call);
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.contains(r#""isError":false"#),
            "after {:?}: {answer}",
            started.elapsed()
        );
        calls += 1;
        std::thread::sleep(Duration::from_millis(250));
    }
    let hot = server.stderr().lines().filter(|line| line.contains("answered on the hot path")).count();
    assert_eq!(hot, calls, "every call in the session was the hot path's");
    std::thread::sleep(Duration::from_millis(3_500));
    let gone = exchange(server.addr, "POST", "/mcp", &in_session, call);
    assert!(gone.starts_with("HTTP/1.1 404") && gone.contains("Session not found"), "{gone}");
    assert!(gone.contains(r#""id":7"#), "the client can tell which request was refused: {gone}");
    // A response's id is the server's numbering: its refusal names no request of the client's.
    let answer = exchange(server.addr, "POST", "/mcp", &in_session, r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
    assert!(answer.starts_with("HTTP/1.1 404") && answer.contains(r#""id":null"#), "{answer}");
}

#[test]
fn a_client_that_sends_one_byte_holds_no_slot_and_http2_prior_knowledge_is_refused() {
    let server = start("header_timeout_secs = 1");
    // One byte of the HTTP/2 preface, then silence.
    let mut stalled = connect(server.addr);
    stalled.write_all(b"P").unwrap();
    let (_, waited) = read_to_close(&mut stalled);
    assert!(waited < Duration::from_secs(3), "a one-byte client was closed after {waited:?}");
    // The HTTP/2 preface is not a request this server takes.
    let mut h2 = connect(server.addr);
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    let (answer, waited) = read_to_close(&mut h2);
    assert!(waited < Duration::from_secs(3), "closed after {waited:?}: {answer}");
    assert!(!answer.contains("HTTP/2"), "{answer}");
}

/// A container binds every interface (`0.0.0.0`): without the names clients use, the server
/// would answer 403 to everything, so it says which setting to write and does not start.
#[test]
fn binding_every_interface_without_allowed_hosts_refuses_to_start_and_names_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let output = crate::fixture().cli(dir.path(), &["serve", "--http", "0.0.0.0:0"]);
    assert_eq!(output.status.code(), Some(2), "configuration to fix");
    let stderr = String::from_utf8_lossy(&output.stderr);
    for needle in ["0.0.0.0", "[http] allowed_hosts", "TRAILS_HTTP_ALLOWED_HOSTS", r#"["*"]"#] {
        assert!(stderr.contains(needle), "names {needle}: {stderr}");
    }
}

/// A token sent to a server that has none configured is refused saying so, not with a bare
/// "authentication failed" that sends the operator looking at the token.
#[tokio::test]
async fn a_token_sent_to_a_server_without_tokens_is_told_there_are_none() {
    let server = crate::fixture().http();
    let call = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    let answer = trails_tests::client::post(server.addr, Some("s3cret"), &call).await;
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("no tokens configured") && message.contains("[[http.tokens]]"), "{message}");
}

/// A refused token is answered before the body is read; the connection then cannot carry another
/// request, and the answer says so (a keep-alive client would otherwise send its next request
/// into a closed connection and see a transport error instead of the 401).
#[test]
fn a_request_refused_before_its_body_is_read_says_the_connection_closes() {
    let server = crate::fixture().http();
    let mut stream = connect(server.addr);
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer not-a-token\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 64\r\n\r\n";
    stream.write_all(head.as_bytes()).unwrap();
    let (answer, _) = read_to_close(&mut stream);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert_eq!(header(&answer, "connection"), Some("close"), "{answer}");
}
