//! An app's own part, written against the trait the built-in parts implement: its own
//! `trails.toml` section, a route behind the server's checks, a background task that holds a
//! handle on the running server and stops with it; and the sections no part reads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use trails::part::axum::{routing::get, Extension, Json};
use trails::part::{Assembly, Part, Running};
use trails::BuildError;
use trails_tests::in_process;

const TOKEN: &str = "parts-builder-token";

/// `[greeter]`: answers `GET /greeting` with its greeting and the caller's name, and once
/// the server runs, switches off the tool its section names.
struct Greeter {
    stopped: Arc<AtomicBool>,
    /// Where it serves (`/greeting`; the tests try others).
    path: &'static str,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GreeterSection {
    greeting: String,
    quiet_tool: Option<String>,
}

impl Part for Greeter {
    fn name(&self) -> &'static str {
        "greeter"
    }

    fn section(&self) -> Option<&'static str> {
        Some("greeter")
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let Some(section) = assembly.section::<GreeterSection>()? else { return Ok(()) };
        // The environment the settings were resolved with overrides the file, as `TRAILS_*` do.
        let greeting = assembly.env("GREETER_GREETING").unwrap_or(section.greeting);
        let greet = get(move |Extension(caller): Extension<trails::auth::Caller>| async move {
            Json(json!({ "greeting": greeting, "caller": caller.name }))
        });
        assembly.route(self.path, greet);
        let (quiet, stopped) = (section.quiet_tool, self.stopped);
        assembly.background(move |running: Running| async move {
            if let Some(tool) = quiet {
                running.control().set_tool_enabled(&tool, false).await.expect("the tool exists");
            }
            running.stopping().await;
            stopped.store(true, Ordering::SeqCst);
        });
        Ok(())
    }
}

fn toml(section: &str) -> String {
    format!(
        "[mcp]\nscopes = [\"builder\"]\n\n[http]\nsessions = false\n\n\
         [[http.tokens]]\nname = \"builder\"\nsha256 = \"{}\"\nscopes = [\"builder\"]\n\n{section}",
        trails::auth::sha256_hex(TOKEN)
    )
}

fn app(stopped: &Arc<AtomicBool>) -> trails::App {
    trails::App::new()
        .kg(trails::kg::Kg::temporary().unwrap())
        .part(Greeter { stopped: stopped.clone(), path: "/greeting" })
}

async fn get_greeting(addr: std::net::SocketAddr, token: Option<&str>, host: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new().get(format!("http://{addr}/greeting"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(host) = host {
        request = request.header("host", host);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_part_of_the_apps_own_reads_its_section_serves_a_route_and_runs_beside_the_server() {
    let stopped = Arc::new(AtomicBool::new(false));
    let section = "[greeter]\ngreeting = \"hello from the file\"\nquiet_tool = \"research_search\"\n";
    let settings = in_process::settings_with_env(&toml(section), &[("GREETER_GREETING", "hello")]);
    let served = in_process::serve(app(&stopped), settings).await;

    // The route is behind the server's own checks: the caller its token names, a foreign Host
    // refused. Its greeting is the environment's.
    let (status, body) = get_greeting(served.addr, Some(TOKEN), None).await;
    assert_eq!((status, &body), (200, &json!({ "greeting": "hello", "caller": "builder" })));
    assert_eq!(get_greeting(served.addr, None, None).await.1["caller"], Value::Null);
    assert_eq!(get_greeting(served.addr, Some("wrong"), None).await.0, 401);
    assert_eq!(get_greeting(served.addr, Some(TOKEN), Some("evil.example")).await.0, 403);

    // The background task holds the running server: it switched the tool off once serving started.
    let listed = || async {
        let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {} });
        let answer = trails_tests::client::post(served.addr, Some(TOKEN), &list).await;
        answer["result"]["tools"].as_array().unwrap().iter().any(|tool| tool["name"] == "research_search")
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while listed().await {
        assert!(tokio::time::Instant::now() < deadline, "the part's task never switched the tool off");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!stopped.load(Ordering::SeqCst), "the task runs while the server serves");
}

/// A server served some other way starts its parts' tasks itself, and stops them by dropping
/// what it got.
#[tokio::test(flavor = "multi_thread")]
async fn background_tasks_stop_when_their_server_stops() {
    let stopped = Arc::new(AtomicBool::new(false));
    let server = app(&stopped).build(in_process::settings(&toml("[greeter]\ngreeting = \"hi\"\n"))).unwrap();
    let started = server.start_parts();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!stopped.load(Ordering::SeqCst));
    drop(started);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !stopped.load(Ordering::SeqCst) {
        assert!(tokio::time::Instant::now() < deadline, "the task was never told to stop");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Each task starts once: a second start runs nothing that could see the stop again.
    stopped.store(false, Ordering::SeqCst);
    drop(server.start_parts());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!stopped.load(Ordering::SeqCst), "a task ran a second time");
}

#[test]
fn a_section_is_its_parts_and_one_no_part_reads_stops_the_start() {
    let stopped = Arc::new(AtomicBool::new(false));
    let build = |app: trails::App, section: &str| {
        app.build(in_process::settings(&toml(section))).err().map(|error| error.to_string()).unwrap_or_default()
    };
    // The part's own reading of its section: a key it does not know, named with the section.
    let refused = build(app(&stopped), "[greeter]\ngreting = \"hello\"\n");
    assert!(refused.starts_with("[greeter]: unknown field `greting`"), "{refused}");
    // A section nobody reads, with the nearest one that is read.
    let refused = build(app(&stopped), "[greeterr]\ngreeting = \"hello\"\n");
    assert_eq!(refused, "[greeterr] is not a section of this server's trails.toml: did you mean [greeter]?");
    let refused = build(trails::App::new().kg(trails::kg::Kg::temporary().unwrap()), "[greeter]\ngreeting = \"x\"\n");
    assert_eq!(refused, "[greeter] is not a section of this server's trails.toml");
    let refused = build(trails::App::new().kg(trails::kg::Kg::temporary().unwrap()), "[htpp]\nbind = \"x\"\n");
    assert_eq!(refused, "[htpp] is not a section of this server's trails.toml: did you mean [http]?");
    // Without its section the part adds nothing, and the app builds.
    assert_eq!(build(app(&stopped), ""), "");
}

/// A part's route may not take a path the server serves, nor another part's; a part may not
/// take the server's section.
#[test]
fn what_the_server_serves_is_not_a_parts_to_take() {
    let stopped = Arc::new(AtomicBool::new(false));
    let greeter = |path| Greeter { stopped: stopped.clone(), path };
    let build = |app: trails::App| {
        let toml = toml("[greeter]\ngreeting = \"hi\"\n");
        app.kg(trails::kg::Kg::temporary().unwrap()).build(in_process::settings(&toml)).err().map(|e| e.to_string())
    };
    for (path, problem) in [
        ("/mcp", "is one the server serves itself"),
        ("/.well-known/oauth-protected-resource", "is one the server serves itself"),
        ("/invoke/mine", "is one the server serves itself"),
        ("greeting", "does not start with `/`"),
    ] {
        let refused = build(trails::App::new().part(greeter(path)));
        assert_eq!(refused, Some(format!("greeter: route `{path}` {problem}")));
    }
    /// Another part with the greeter's section.
    struct Impostor;
    impl Part for Impostor {
        fn name(&self) -> &'static str {
            "impostor"
        }
        fn section(&self) -> Option<&'static str> {
            Some("http")
        }
        fn assemble(self: Box<Self>, _: &mut Assembly<'_>) -> Result<(), BuildError> {
            Ok(())
        }
    }
    let refused = build(trails::App::new().part(greeter("/greeting")).part(Impostor));
    assert_eq!(
        refused.as_deref(),
        Some("impostor: its section `[http]` is the server's or another part's: name another")
    );
}
