//! Budgets on the real fixture server: `research.search` declares `cost(tokens = 40)`; with
//! `[budget] tokens = 40` an anonymous caller gets one search per window, and a token with its
//! own `budget = { tokens = 100 }` gets two. The next call is refused with `-32003` (429 with
//! `Retry-After` over `/invoke`) and its handler does not run; a call refused by validation costs
//! nothing; free capabilities still run; `trails://stats` counts what was charged and refused;
//! and spending outlives `kill -9`.

use serde_json::{json, Value};
use trails_tests::client::post;
use trails_tests::Served;

const AGENT_TOKEN: &str = "budget-agent-token";

fn start() -> Served {
    let toml = format!(
        "[mcp]\nscopes = [\"dev\"]\n\n[http]\nsessions = false\n\n[budget]\ntokens = 40\nwindow_secs = 3600\n\n\
         [[http.tokens]]\nname = \"agent\"\nsha256 = \"{}\"\nscopes = [\"builder\"]\nbudget = {{ tokens = 100 }}\n",
        trails::auth::sha256_hex(AGENT_TOKEN)
    );
    crate::fixture().config(toml).http()
}

async fn rpc(server: &Served, token: Option<&str>, method: &str, params: Value) -> Value {
    post(server.addr, token, &json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })).await
}

async fn search(server: &Served, token: Option<&str>, query: &str) -> Value {
    rpc(server, token, "tools/call", json!({ "name": "research_search", "arguments": { "query": query } })).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_whose_cost_exceeds_what_is_left_is_refused_with_32003_and_runs_nothing() {
    let mut server = start();

    // Anonymous callers share `[budget]`: one search of 40 tokens.
    assert!(search(&server, None, "graph").await["result"].is_object());
    let refused = search(&server, None, "graph").await;
    assert_eq!(refused["error"]["code"], -32003, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("research.search costs 40 tokens") && message.contains("0 tokens"), "{message}");
    assert!(!message.contains('$'), "a limit in tokens only speaks of tokens only: {message}");
    let retry = refused["error"]["data"]["retry_after_secs"].as_u64().unwrap();
    assert!((3500..=3600).contains(&retry), "{refused}");

    // The token's own budget: a call refused by validation costs nothing, so two searches fit.
    let invalid = search(&server, Some(AGENT_TOKEN), "").await;
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    assert!(search(&server, Some(AGENT_TOKEN), "graph").await["result"].is_object());
    assert!(search(&server, Some(AGENT_TOKEN), "graph").await["result"].is_object());
    assert_eq!(search(&server, Some(AGENT_TOKEN), "graph").await["error"]["code"], -32003);
    // Validation still answers first, and a capability without a cost still runs.
    assert_eq!(search(&server, Some(AGENT_TOKEN), "").await["error"]["code"], -32602);
    let ping =
        rpc(&server, Some(AGENT_TOKEN), "tools/call", json!({ "name": "trails_meta_ping", "arguments": {} })).await;
    assert!(ping["result"].is_object(), "{ping}");

    // `/invoke` says the same as 429 with `Retry-After`.
    let response = reqwest::Client::new()
        .post(format!("http://{}/invoke/research.search", server.addr))
        .bearer_auth(AGENT_TOKEN)
        .json(&json!({ "query": "graph" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    let seconds: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((3500..=3600).contains(&seconds));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32003, "{body}");

    // `trails://stats` counts it all.
    let read = rpc(&server, Some(AGENT_TOKEN), "resources/read", json!({ "uri": "trails://stats" })).await;
    let stats: Value = serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    let budgets = &stats["budgets"];
    assert_eq!(budgets["window_secs"], 3600, "{stats}");
    assert_eq!((budgets["charged_calls"].clone(), budgets["refused_calls"].clone()), (json!(3), json!(3)), "{stats}");
    let spent = |caller: Value| {
        budgets["callers"].as_array().unwrap().iter().find(|c| c["caller"] == caller).unwrap()["tokens_spent"].clone()
    };
    assert_eq!(spent(json!("agent")), 80);
    assert_eq!(spent(Value::Null), 40);

    // Spending is kept: after `kill -9` no caller gets a fresh budget.
    server.kill_and_restart();
    let refused = search(&server, None, "graph").await;
    assert_eq!(refused["error"]["code"], -32003, "a restart handed out a fresh budget: {refused}");
    let retry = refused["error"]["data"]["retry_after_secs"].as_u64().unwrap();
    assert!((3400..=3600).contains(&retry), "the window opened before the restart: {refused}");
    assert_eq!(search(&server, Some(AGENT_TOKEN), "graph").await["error"]["code"], -32003);
}

#[test]
fn a_negative_or_unbounded_budget_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    for budget in ["[budget]\nusd = -1.0\n", "[budget]\nwindow_secs = 0\n", "[budget]\nusd = nan\n"] {
        // The ledger part resolves its section as the server is built, before anything opens.
        let toml = format!("[kg]\npath = {:?}\n{budget}", dir.path().join("kg"));
        let settings = trails_tests::in_process::settings(&toml);
        let error = trails::App::new().build(settings).err().expect("refused").to_string();
        assert!(error.contains("[budget]"), "{toml}: {error}");
        assert!(!dir.path().join("kg").exists(), "the store was opened before the ledger's section was checked");
    }
    let config = trails::config::Config::parse("[budget]\ntokens = 5\nwallet = 3\n");
    assert!(config.is_err(), "unknown keys are refused");
}
