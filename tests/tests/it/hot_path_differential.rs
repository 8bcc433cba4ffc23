//! The hot path (`[http] hot_path`, on by default) against rmcp: one corpus of requests, sent to
//! a fixture server with the hot path and to one without it (every request then goes through
//! rmcp's `StreamableHttpService`), with sessions off, with sessions on, and inside open 2025-*
//! sessions. Every answer must be the same: HTTP status, content type, SSE framing and JSON body
//! (trace ids and generated ids normalised, since each server makes its own; in a session, also
//! rmcp's priming events and event ids: the hot path's answers that are ready at once go out as
//! one event with nothing to resume, `http/hot/answers.rs`).
//!
//! The reference is rmcp behind Trails' own checks, which answer some requests before rmcp sees
//! them on both paths. Those are intended differences from *plain* rmcp (`runtime/guide/07-wire-contract.md`), and the corpus pins them here too (`trails_refusals`): invalid JSON, an
//! empty body, a batch, a wrong `id` type or `jsonrpc` → 400 with a JSON-RPC `-32700`/`-32600`
//! (rmcp: 415 with a text body); a `tools/call` whose params are not `{name, arguments?}` →
//! `-32602` with its id (rmcp: `-32601`); a foreign `Host`/`Origin` → 403 JSON (rmcp: 403 text);
//! a bad token → 401 JSON; a body over `max_body_bytes` → 413 JSON (rmcp: 413 text).
//!
//! Which requests the hot path takes is checked too: an independent model of rmcp's stateless
//! routing ([`served_statelessly`]) says which cases it must answer, and the set of ids it logged
//! must be exactly those, in both modes (a hot path that answered nothing would pass the byte
//! comparison alone).
//!
//! Not compared, and different on purpose: during shutdown's grace period rmcp answers a
//! stateless request still in flight with a 500 ("no response message received from handler")
//! while the hot path lets it finish, as the guide promises (`runtime/guide/04-serving.md`); and a panic outside a handler's own
//! guard (none is known) leaves an rmcp request hanging, while the hot path answers 500 with
//! `-32603`.

use std::net::SocketAddr;

use serde_json::{json, Value};
use trails_tests::Served;

const BUILDER_TOKEN: &str = "hot-path-builder-token";
const DEV_TOKEN: &str = "hot-path-dev-token";
/// Small, so an oversized body is cheap to send.
const MAX_BODY: usize = 65_536;

fn start(sessions: bool, hot_path: bool) -> Served {
    let toml = format!(
        "[mcp]\nscopes = [\"runtime\"]\n\n[http]\nsessions = {sessions}\nhot_path = {hot_path}\nmax_body_bytes = {MAX_BODY}\n\
         allowed_origins = [\"http://localhost:*\"]\n\n\
         [[http.tokens]]\nname = \"builder\"\nsha256 = \"{}\"\nscopes = [\"builder\"]\n\n\
         [[http.tokens]]\nname = \"dev\"\nsha256 = \"{}\"\nscopes = [\"dev\"]\n",
        trails::auth::sha256_hex(BUILDER_TOKEN),
        trails::auth::sha256_hex(DEV_TOKEN),
    );
    // The hot path logs each answer it gives at debug: the test counts them.
    crate::fixture().config(toml).log(Some("error,trails_serve::http::hot=debug")).http()
}

type Headers = Vec<(String, String)>;
/// A change to a request's headers.
type Edit = dyn Fn(&mut Headers);

/// One request of the corpus.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    headers: Headers,
    body: Vec<u8>,
    /// The case's unique id (from `FIRST_ID` on) and whether rmcp serves it with every rule
    /// passing — so the hot path must answer it — in each [`Mode`]; `None` for the cases whose
    /// id is the point of the case.
    tracked: Option<(u64, [bool; 3])>,
}

/// How the two servers are run and asked: sessions off; sessions on, each request on its own;
/// sessions on, each request in a session the test opened (anonymously).
#[derive(Clone, Copy, Debug)]
enum Mode {
    SessionsOff = 0,
    SessionsOn = 1,
    InSession = 2,
}

/// Ids of tracked cases start here (the id cases use small ones and strings).
const FIRST_ID: u64 = 1_000;

/// The methods of the method table (`runtime/serve/src/method/`) the hot path frames.
const OWNED: [&str; 6] =
    ["tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read", "completion/complete"];

/// An independent model of when rmcp serves a well-formed, well-headed request of `method`
/// (`label` from [`calls`]) without refusing it: what the hot path must take, in each [`Mode`].
fn served_without_refusal(version: Version, label: &str, method: &str) -> [bool; 3] {
    // rmcp reads this as a custom request (no `uri`) and answers -32601. (A non-string cursor
    // still makes a typed `tools/list`.)
    let typed = label != "read without a uri";
    // A call asking for progress is answered as a stream its notifications go on first: rmcp's.
    if !OWNED.contains(&method) || !typed || label == "call asking for progress" {
        return [false, false, false];
    }
    let supported = |v: &str| ["2025-06-18", "2025-11-25", "2026-07-28"].contains(&v);
    let known = |v: &str| ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"].contains(&v);
    let off = match (version.meta, version.header) {
        (None, None) => true,
        (None, Some(header)) => known(header) && header < "2026-07-28",
        (Some(meta), Some(header)) => {
            meta == header && supported(meta) && (meta < "2026-07-28" || version.capabilities)
        }
        (Some(_), None) => false,
    };
    // With sessions, only requests naming their version in `_meta` with capabilities go without one.
    let on = matches!((version.meta, version.header), (Some(meta), Some(header))
        if meta == header && supported(meta) && version.capabilities);
    // The others go to their session: the hot path takes those that name no version in `_meta`
    // (with a 2025-* header rmcp knows, if any).
    let in_session = version.meta.is_none() && version.header.is_none_or(|h| known(h) && h < "2026-07-28");
    [off, on, on || in_session]
}

/// How a request names its protocol version: the `MCP-Protocol-Version` header, `_meta`'s
/// version, whether `_meta` carries client capabilities.
#[derive(Clone, Copy, Debug)]
struct Version {
    header: Option<&'static str>,
    meta: Option<&'static str>,
    capabilities: bool,
}

const VERSIONS: &[Version] = &[
    Version { header: None, meta: None, capabilities: false },
    Version { header: Some("2024-11-05"), meta: None, capabilities: false },
    Version { header: Some("2025-03-26"), meta: None, capabilities: false },
    Version { header: Some("2025-06-18"), meta: None, capabilities: false },
    Version { header: Some("2025-11-25"), meta: None, capabilities: false },
    Version { header: Some("2099-01-01"), meta: None, capabilities: false },
    Version { header: Some("2026-07-28"), meta: None, capabilities: false },
    Version { header: Some("2025-06-18"), meta: Some("2025-06-18"), capabilities: true },
    Version { header: Some("2025-11-25"), meta: Some("2025-11-25"), capabilities: false },
    Version { header: Some("2025-11-25"), meta: Some("2025-11-25"), capabilities: true },
    Version { header: Some("2026-07-28"), meta: Some("2026-07-28"), capabilities: true },
    Version { header: Some("2026-07-28"), meta: Some("2026-07-28"), capabilities: false },
    Version { header: None, meta: Some("2026-07-28"), capabilities: true },
    Version { header: Some("2025-06-18"), meta: Some("2026-07-28"), capabilities: true },
    Version { header: Some("2025-03-26"), meta: Some("2025-03-26"), capabilities: true },
    Version { header: Some("2099-01-01"), meta: Some("2099-01-01"), capabilities: true },
];

/// A method call: (label, method, params without `_meta`, the `Mcp-Name` it implies).
fn calls() -> Vec<(&'static str, &'static str, Value, Option<String>)> {
    let tool = |label, name: &str, arguments: Value| {
        (label, "tools/call", json!({ "name": name, "arguments": arguments }), Some(name.to_owned()))
    };
    let read = |label, uri: &str| (label, "resources/read", json!({ "uri": uri }), Some(uri.to_owned()));
    vec![
        ("tools/list", "tools/list", json!({}), None),
        ("tools/list with a cursor", "tools/list", json!({ "cursor": "abc" }), None),
        ("tools/list with a bad cursor", "tools/list", json!({ "cursor": 5 }), None),
        tool("call search", "research_search", json!({ "query": "graph", "limit": 2 })),
        tool("call search, bad arguments", "research_search", json!({ "query": "", "limit": 0, "extra": 1 })),
        tool("call an unknown tool", "no_such_tool", json!({})),
        (
            "call asking for progress",
            "tools/call",
            json!({ "name": "research_search", "arguments": { "query": "graph" }, "_meta": { "progressToken": 7 } }),
            Some("research_search".to_owned()),
        ),
        tool("call a dev tool", "trails_meta_fixture_inspect", json!({})),
        tool("call policy failure", "fixtures_fail", json!({ "how": "policy" })),
        tool("call budget failure", "fixtures_fail", json!({ "how": "budget" })),
        tool("call internal failure", "fixtures_fail", json!({ "how": "internal" })),
        tool("call a panicking handler", "fixtures_fail", json!({ "how": "panic" })),
        // A stored instance (`compare` stores it): linked (`resource_link`) for 2025-06-18 and
        // later only.
        tool("get an instance", "trails_kg_get", json!({ "node_type": "Note", "id": "differential" })),
        ("resources/list", "resources/list", json!({}), None),
        ("resources/templates/list", "resources/templates/list", json!({}), None),
        read("read stats", "trails://stats"),
        read("read an unknown resource", "trails://no/such/thing"),
        read("read a builder resource", "trails://doctor"),
        ("read without a uri", "resources/read", json!({}), None),
        ("complete a key", "completion/complete", complete("trails://kg/Note/{id}", "id", "diff"), None),
        ("complete an unknown template", "completion/complete", complete("trails://nothing/{id}", "id", ""), None),
        (
            "complete a prompt",
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "p" },
            "argument": { "name": "a", "value": "" } }),
            None,
        ),
        ("ping", "ping", json!({}), None),
    ]
}

/// `completion/complete` params for variable `name` of template `uri`.
fn complete(uri: &str, name: &str, value: &str) -> Value {
    json!({ "ref": { "type": "ref/resource", "uri": uri }, "argument": { "name": name, "value": value } })
}

fn message(id: Value, method: &str, mut params: Value, version: Version) -> Vec<u8> {
    if let Some(meta) = version.meta {
        let mut object = json!({
            "io.modelcontextprotocol/protocolVersion": meta,
            "io.modelcontextprotocol/clientInfo": { "name": "differential", "version": "0" },
        });
        if version.capabilities {
            object["io.modelcontextprotocol/clientCapabilities"] = json!({});
        }
        if let Some(Value::Object(given)) = params.get("_meta") {
            for (key, value) in given {
                object[key] = value.clone();
            }
        }
        params["_meta"] = object;
    }
    serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).unwrap()
}

/// The headers a well-behaved client sends for `version`, `method` and `name`.
fn headers_for(version: Version, method: &str, name: Option<&str>) -> Headers {
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
    ];
    if let Some(header) = version.header {
        headers.push(("mcp-protocol-version".into(), header.into()));
        headers.push(("mcp-method".into(), method.into()));
        if let Some(name) = name {
            headers.push(("mcp-name".into(), name.into()));
        }
    }
    headers
}

fn corpus() -> Vec<Case> {
    let mut cases = Vec::new();
    let next_id = std::cell::Cell::new(FIRST_ID);
    let id = || {
        next_id.set(next_id.get() + 1);
        next_id.get()
    };
    // Every owned (and a few unowned) method under every way of naming a version.
    for version in VERSIONS {
        for (label, method, params, name) in calls() {
            let id = id();
            cases.push(Case {
                name: format!("{label} / {version:?}"),
                headers: headers_for(*version, method, name.as_deref()),
                body: message(json!(id), method, params, *version),
                tracked: Some((id, served_without_refusal(*version, label, method))),
            });
        }
    }
    let current = VERSIONS[10];
    let search = json!({ "name": "research_search", "arguments": { "query": "graph" } });
    // In a session (opened anonymously), a token makes it another caller's: 404 either way.
    let with = |name: &str, change: &Edit, method: &str, params: Value, hot: bool| {
        let call_name = params.get("name").or(params.get("uri")).and_then(Value::as_str).map(str::to_owned);
        let mut headers = headers_for(current, method, call_name.as_deref());
        change(&mut headers);
        let id = id();
        let in_session = hot && !headers.iter().any(|(k, _)| k == "authorization" || k == "mcp-session-id");
        Case {
            name: name.into(),
            headers,
            body: message(json!(id), method, params, current),
            tracked: Some((id, [hot, hot, in_session])),
        }
    };
    let set = |key: &'static str, value: &'static str| {
        move |headers: &mut Headers| {
            headers.retain(|(k, _)| k != key);
            headers.push((key.into(), value.into()));
        }
    };
    let remove = |key: &'static str| move |headers: &mut Headers| headers.retain(|(k, _)| k != key);
    let add =
        |key: &'static str, value: &'static str| move |headers: &mut Headers| headers.push((key.into(), value.into()));
    let list = json!({});
    for (name, change) in [
        ("no Mcp-Method", &remove("mcp-method") as &Edit),
        ("wrong Mcp-Method", &set("mcp-method", "tools/list")),
        ("two Mcp-Method", &add("mcp-method", "tools/call")),
        ("no Mcp-Name", &remove("mcp-name")),
        ("wrong Mcp-Name", &set("mcp-name", "fixtures_fail")),
        ("base64 Mcp-Name", &set("mcp-name", "=?base64?cmVzZWFyY2hfc2VhcmNo?=")),
        ("bad base64 Mcp-Name", &set("mcp-name", "=?base64?!!!?=")),
        ("Accept */*", &set("accept", "*/*")),
        ("Accept JSON only", &set("accept", "application/json")),
        ("Accept with a zero weight", &set("accept", "application/json;q=0, text/event-stream")),
        ("Accept in two headers", &|h: &mut Headers| {
            h.retain(|(k, _)| k != "accept");
            h.push(("accept".into(), "text/event-stream".into()));
            h.push(("accept".into(), "application/json".into()));
        }),
        ("Content-Type text", &set("content-type", "text/plain")),
        ("Content-Type with charset", &set("content-type", "application/json; charset=utf-8")),
        ("no Content-Type", &remove("content-type")),
        ("allowed Origin", &add("origin", "http://localhost:3000")),
        ("foreign Origin", &add("origin", "https://evil.example")),
        ("foreign Host", &add("host", "evil.example")),
        ("builder token", &add("authorization", "Bearer hot-path-builder-token")),
        ("dev token", &add("authorization", "Bearer hot-path-dev-token")),
        ("bad token", &add("authorization", "Bearer wrong")),
        ("unknown session id", &add("mcp-session-id", "no-such-session")),
        ("unknown protocol header", &set("mcp-protocol-version", "2030-01-01")),
    ] {
        // Harmless to rmcp: these it serves (a list has no `Mcp-Name` to check).
        let harmless = ["Content-Type with charset", "Accept in two headers", "builder token", "dev token"];
        let harmless_to_a_call = harmless.contains(&name) || name == "base64 Mcp-Name";
        // ("wrong Mcp-Method" is `tools/list`: right for a list.)
        let harmless_to_a_list = harmless.contains(&name) || name.ends_with("Mcp-Name") || name == "wrong Mcp-Method";
        cases.push(with(&format!("call: {name}"), change, "tools/call", search.clone(), harmless_to_a_call));
        cases.push(with(&format!("list: {name}"), change, "tools/list", list.clone(), harmless_to_a_list));
    }
    for token in ["Bearer hot-path-builder-token", "Bearer hot-path-dev-token"] {
        for (label, method, params, name) in calls() {
            let mut headers = headers_for(current, method, name.as_deref());
            headers.push(("authorization".into(), token.into()));
            let id = id();
            cases.push(Case {
                name: format!("{label} with {token}"),
                headers,
                body: message(json!(id), method, params, current),
                tracked: Some((id, {
                    let [off, on, _] = served_without_refusal(current, label, method);
                    [off, on, false]
                })),
            });
        }
    }
    // Ids of every accepted kind come back as rmcp writes them.
    for id in [json!(0), json!(-42), json!(i64::MAX), json!(u64::MAX), json!("x"), json!("é\u{1}\"\\/"), json!("")] {
        cases.push(Case {
            name: format!("id {id}"),
            headers: headers_for(current, "tools/list", None),
            body: message(id, "tools/list", json!({}), current),
            tracked: None,
        });
    }
    cases.push(Case {
        name: "id written with escapes".into(),
        headers: headers_for(current, "tools/list", None),
        body: br#"{"jsonrpc":"2.0","id":"\u0041\/b","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_vec(),
        tracked: None,
    });
    // Notifications and responses the client posts; initialize.
    let plain = headers_for(current, "notifications/initialized", None);
    cases.push(Case {
        name: "notification".into(),
        headers: plain.clone(),
        body: br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
        tracked: None,
    });
    cases.push(Case {
        name: "a response".into(),
        headers: plain.clone(),
        body: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(),
        tracked: None,
    });
    cases.push(Case {
        name: "initialize".into(),
        headers: headers_for(VERSIONS[3], "initialize", None),
        body: br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"d","version":"0"}}}"#.to_vec(),
        tracked: None,
    });
    cases.extend(trails_refusals());
    cases
}

/// What Trails answers before rmcp on both paths (the intended differences from plain rmcp).
fn trails_refusals() -> Vec<Case> {
    let headers = headers_for(VERSIONS[10], "tools/list", None);
    let raw = |name: &str, body: &[u8]| Case {
        name: name.into(),
        headers: headers.clone(),
        body: body.to_vec(),
        tracked: None,
    };
    vec![
        raw("invalid JSON", b"{\"jsonrpc\":"),
        raw("empty body", b""),
        raw("invalid UTF-8", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}"),
        raw("a batch", br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#),
        raw("a float id", br#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#),
        raw("a null id", br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#),
        raw("jsonrpc 1.0", br#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#),
        raw("no method", br#"{"jsonrpc":"2.0","id":1}"#),
        raw("tools/call without params", br#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#),
        raw(
            "tools/call with array arguments",
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":[]}}"#,
        ),
        raw("a body over max_body_bytes", &vec![b' '; MAX_BODY + 1]),
    ]
}

/// What the test compares of an answer.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    content_type: Option<String>,
    cache_control: Option<String>,
    session: bool,
    body: String,
}

/// Send `case` (in `session`, unless it names one itself).
async fn send(client: &reqwest::Client, addr: SocketAddr, case: &Case, session: Option<&str>) -> Answer {
    let mut request = client.post(format!("http://{addr}/mcp")).body(case.body.clone());
    let mut host = false;
    for (name, value) in &case.headers {
        host |= name == "host";
        request = request.header(name.as_str(), value.as_str());
    }
    let in_session = session.is_some();
    if let Some(session) = session.filter(|_| !case.headers.iter().any(|(name, _)| name == "mcp-session-id")) {
        request = request.header("mcp-session-id", session);
    }
    if !host {
        request = request.header("host", addr.to_string());
    }
    let response = request.send().await.unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    let (status, content_type, cache_control) =
        (response.status().as_u16(), header("content-type"), header("cache-control"));
    let session = response.headers().contains_key("mcp-session-id");
    let body = response.text().await.unwrap();
    Answer { status, content_type, cache_control, session, body: normalise(&body, in_session) }
}

/// Open a session at protocol `version` on the server at `addr`, initialized; its id.
async fn open_session(client: &reqwest::Client, addr: SocketAddr, version: &str) -> String {
    let post = |body: String| {
        client
            .post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
    };
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "differential", "version": "0" } } });
    let opened = post(initialize.to_string()).send().await.unwrap();
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    opened.text().await.unwrap();
    let initialized = post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into());
    let initialized = initialized.header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(initialized.status(), 202);
    session
}

/// Trace ids, uuids and timestamps differ between two servers; nothing else may. In a session,
/// rmcp primes every answer's stream and numbers its events for resumption; the hot path does
/// so only for an answer not ready at once (with ids of its own): both are left out.
fn normalise(body: &str, in_session: bool) -> String {
    let mut body = body.to_owned();
    if in_session {
        let priming = regex::Regex::new(r"(?m)^data: \nid: [^\n]*\nretry: \d+\n\n").unwrap();
        let event_id = regex::Regex::new(r"(?m)^id: [^\n]*\n").unwrap();
        body = event_id.replace_all(&priming.replace_all(&body, ""), "").into_owned();
    }
    let hex = regex::Regex::new(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
        .unwrap();
    let time = regex::Regex::new(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})").unwrap();
    let body = hex.replace_all(&body, "<id>");
    time.replace_all(&body, "<time>").into_owned()
}

/// (requests sent, how many the hot path answered).
async fn compare(mode: Mode) -> (usize, usize) {
    let sessions = !matches!(mode, Mode::SessionsOff);
    let (hot, reference) = (start(sessions, true), start(sessions, false));
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    // In sessions opened asking 2025-03-26 (which this server does not speak: it agrees on
    // 2025-11-25, and a request without a header must read that) and 2025-11-25.
    let mut in_sessions = Vec::new();
    if let Mode::InSession = mode {
        for version in ["2025-03-26", "2025-11-25"] {
            let opened =
                (open_session(&client, hot.addr, version).await, open_session(&client, reference.addr, version).await);
            in_sessions.push(opened);
        }
    }
    // The instance "get an instance" reads.
    let note = json!({ "name": "fixtures_note_create", "arguments": { "slug": "differential", "body": "A note." } });
    let store = Case {
        name: "store a note".into(),
        headers: headers_for(VERSIONS[10], "tools/call", Some("fixtures_note_create")),
        body: message(json!(1), "tools/call", note, VERSIONS[10]),
        tracked: None,
    };
    for server in [&hot, &reference] {
        let stored = send(&client, server.addr, &store, None).await;
        assert!(stored.status == 200 && stored.body.contains(r#""isError":false"#), "{stored:?}");
    }
    let cases = corpus();
    let mut differences = Vec::new();
    // Each case once per session (or once, without).
    let sessions: Vec<(Option<&str>, Option<&str>)> = match in_sessions.is_empty() {
        true => vec![(None, None)],
        false => in_sessions.iter().map(|(hot, reference)| (Some(hot.as_str()), Some(reference.as_str()))).collect(),
    };
    for case in &cases {
        for (n, (hot_session, reference_session)) in sessions.iter().enumerate() {
            let fast = send(&client, hot.addr, case, *hot_session).await;
            let slow = send(&client, reference.addr, case, *reference_session).await;
            if fast != slow {
                let name = &case.name;
                differences.push(format!("{name} ({mode:?} {n}):\n  hot path: {fast:?}\n  rmcp:     {slow:?}"));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} answers differ:\n{}",
        differences.len(),
        cases.len(),
        differences.join("\n")
    );
    // Which tracked cases each server answered on its hot path (it logs each id at debug).
    let answered_by = |server: &Served| -> std::collections::BTreeSet<u64> {
        let log = server.stderr();
        log.lines()
            .filter(|line| line.contains("answered on the hot path"))
            .filter_map(|line| line.rsplit_once("id=")?.1.trim().parse().ok())
            // The id cases use small ids, strings and `i64::MAX`.
            .filter(|id| (FIRST_ID..FIRST_ID + 100_000).contains(id))
            .collect()
    };
    assert!(answered_by(&reference).is_empty(), "the reference server has the hot path off");
    let index = mode as usize;
    let expected: std::collections::BTreeSet<u64> =
        cases.iter().filter_map(|c| c.tracked.filter(|(_, hot)| hot[index]).map(|(id, _)| id)).collect();
    let answered = answered_by(&hot);
    let name = |id: &u64| {
        let case = cases.iter().find(|c| c.tracked.is_some_and(|(i, _)| i == *id));
        case.map_or_else(|| format!("id {id}, in no case"), |case| case.name.clone())
    };
    let missed: Vec<String> = expected.difference(&answered).map(name).collect();
    let taken: Vec<String> = answered.difference(&expected).map(name).collect();
    assert!(
        missed.is_empty() && taken.is_empty(),
        "{mode:?}: the hot path left to rmcp what it should answer: {missed:#?}\nand answered what rmcp should: {taken:#?}"
    );
    (cases.len(), answered.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hot_path_answers_exactly_as_rmcp_with_sessions_off() {
    let (sent, answered) = compare(Mode::SessionsOff).await;
    assert!(sent >= 150, "the corpus has {sent} requests");
    assert!(answered >= 150, "the hot path answered {answered} of {sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hot_path_answers_exactly_as_rmcp_with_sessions_on() {
    let (sent, answered) = compare(Mode::SessionsOn).await;
    // With sessions on, only requests that name their version in `_meta`.
    assert!(answered >= 80, "the hot path answered {answered} of {sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hot_path_answers_exactly_as_rmcp_inside_sessions() {
    let (sent, answered) = compare(Mode::InSession).await;
    assert!(answered >= 120, "the hot path answered {answered} of {sent}");
}
