//! What a capability declares holds (DESIGN §4.12): its calls write only the node types its
//! `side_effects` name — refused before anything is stored, naming the declaration to change —,
//! its preconditions are evaluated before the handler (a failure is `precondition_failed`, the
//! handler does not run and nothing is charged), and the manifest publishes the graphs the store
//! writes and the provenance it records.

use serde_json::{json, Value};
use trails_tests::client::post;
use trails_tests::Served;

async fn call(server: &Served, name: &str, arguments: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": { "name": name, "arguments": arguments } });
    post(server.addr, None, &body).await
}

/// Whether the `node_type` instance `id` is stored, as `trails_kg_get` finds it.
async fn stored(server: &Served, node_type: &str, id: &str) -> bool {
    let got = call(server, "trails_kg_get", json!({ "node_type": node_type, "id": id })).await;
    !got["result"]["isError"].as_bool().unwrap_or(true)
}

fn note(slug: &str) -> Value {
    json!({ "slug": slug, "body": "written by a read-only capability" })
}

/// A domain error's `{"kind", "message", …}`, from the result's text (a capability with an output
/// schema says it in text alone).
fn domain(answer: &Value) -> Value {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_its_declaration_does_not_allow_is_refused_and_stores_nothing() {
    let server = crate::fixture().config("[http]\nsessions = false\n").http();

    // `side_effects(none)`, published read-only, yet it creates a note.
    let listed = post(server.addr, None, &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })).await;
    let sneak = listed["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "fixtures_note_sneak");
    assert_eq!(sneak.unwrap()["annotations"]["readOnlyHint"], true);
    let refused = call(&server, "fixtures_note_sneak", note("sneaked")).await;
    assert_eq!(refused["error"]["code"], -32603, "a fault of the capability, not the caller's: {refused}");
    assert!(!stored(&server, "Note", "sneaked").await, "nothing was stored");

    // Declared to write notes, not to change them, nor to write attachments.
    assert!(call(&server, "fixtures_note_create", note("kept")).await["result"].is_object());
    let update = call(&server, "fixtures_note_touch", json!({ "slug": "kept" })).await;
    assert_eq!(update["error"]["code"], -32603, "{update}");
    let attachment = call(&server, "fixtures_note_touch", json!({ "slug": "kept", "attachment": "sneaked" })).await;
    assert_eq!(attachment["error"]["code"], -32603, "{attachment}");
    assert!(!stored(&server, "Attachment", "sneaked").await, "nothing was stored");
    let kept = call(&server, "trails_kg_get", json!({ "node_type": "Note", "id": "kept" })).await;
    let body = &kept["result"]["structuredContent"]["fields"]["body"];
    assert_eq!(body, "written by a read-only capability", "the note did not change: {kept}");

    // The log names the declaration to change.
    let log = server.stderr();
    assert!(
        log.contains("capability fixtures.note.sneak tried to create a Note, which its declaration `side_effects(none)` does not allow; nothing was stored. Add `Note` in `writes`"),
        "{log}"
    );
    assert!(
        log.contains("capability fixtures.note.touch tried to update a Note") && log.contains("Add `overwrites`"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_precondition_that_does_not_hold_refuses_the_call_before_it_runs_or_is_charged() {
    let server =
        crate::fixture().config("[http]\nsessions = false\n\n[budget]\ntokens = 30\nwindow_secs = 3600\n").http();
    let missing = call(&server, "requirements_update", json!({ "req_id": "REQ-404", "title": "Never stored" })).await;
    let refused = domain(&missing);
    assert_eq!(refused["kind"], "precondition_failed", "{missing}");
    let message = refused["message"].as_str().unwrap();
    assert_eq!(
        message,
        "requirements.update: 1 declared precondition does not hold: instance_exists (no Requirement `REQ-404` is stored); nothing ran"
    );
    // `/invoke` answers 412.
    let response = reqwest::Client::new()
        .post(format!("http://{}/invoke/requirements.update", server.addr))
        .json(&json!({ "req_id": "REQ-404", "title": "Never stored" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 412);

    // `fixtures.note.touch` costs 30 tokens, all the budget holds: refused by its precondition
    // twice, it is charged nothing, and the call that runs spends the budget.
    for _ in 0..2 {
        let missing = call(&server, "fixtures_note_touch", json!({ "slug": "absent" })).await;
        let refused = domain(&missing);
        assert!(refused["message"].as_str().unwrap().contains("no Note `absent` is stored"), "{missing}");
    }
    assert!(call(&server, "fixtures_note_create", note("there")).await["result"].is_object());
    let ran = call(&server, "fixtures_note_touch", json!({ "slug": "there" })).await;
    assert_eq!(ran["error"]["code"], -32603, "it ran (and was refused its undeclared update): {ran}");
    let spent = call(&server, "fixtures_note_touch", json!({ "slug": "there" })).await;
    assert_eq!(spent["error"]["code"], -32003, "{spent}");
    // A dry run says so first: what the caller has left does not cover the cost.
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "fixtures_note_touch",
        "arguments": { "slug": "there" }, "_meta": { "trails": { "dry_run": true } } } });
    let answer = post(server.addr, None, &body).await;
    let verdict: Value = serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(verdict["would_run"], false, "{verdict}");
    let budget =
        verdict["reasons"].as_array().unwrap().iter().find(|r| r["kind"] == "budget").expect("a budget reason");
    assert_eq!((&budget["blocking"], &budget["cost"]["tokens"]), (&json!(true), &json!(30)), "{verdict}");
    assert!(budget["message"].as_str().unwrap().contains("costs 30 tokens; the anonymous caller has 0 tokens left"));
    let again = call(&server, "fixtures_note_touch", json!({ "slug": "there" })).await;
    assert_eq!(again["error"]["code"], -32003, "the dry run charged nothing and freed nothing: {again}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_apps_own_precondition_is_evaluated_with_the_arguments() {
    let server = crate::fixture().config("[http]\nsessions = false\n").http();
    let record =
        |tags: Value| json!({ "handle": "abc", "code": "REQ-1", "status": "proposed", "priority": 1, "tags": tags });
    let blocked = call(&server, "fixtures_constraints", record(json!(["blocked"]))).await;
    let refused = domain(&blocked);
    assert_eq!(refused["kind"], "precondition_failed", "{blocked}");
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("check (the record is tagged `blocked`)"), "{message}");
    let fine = call(&server, "fixtures_constraints", record(json!(["fine"]))).await;
    assert_eq!(fine["result"]["structuredContent"]["tags"], json!(["fine"]), "{fine}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_manifest_publishes_the_graphs_the_store_writes_and_the_provenance_it_records() {
    let base = "https://kg.example.org/req";
    let server = crate::fixture().config(format!("[http]\nsessions = false\n\n[kg]\nbase = \"{base}\"\n")).http();
    let manifest: Value =
        reqwest::get(format!("http://{}/.well-known/capabilities", server.addr)).await.unwrap().json().await.unwrap();
    let entry = |id: &str| {
        manifest["@graph"].as_array().unwrap().iter().find(|entry| entry["id"] == id).cloned().unwrap_or_default()
    };
    let create = entry("requirements.create");
    assert_eq!(create["side_effects"]["writes"], json!([format!("{base}/graph/Requirement")]), "{create}");
    assert_eq!(create["side_effects"]["provenance"], true, "every call of an app with a store records provenance");
    assert_eq!(entry("people.create")["side_effects"]["writes"], json!([format!("{base}/graph/Person")]));
    assert_eq!(entry("requirements.search")["side_effects"]["writes"], json!([]));
    let update = entry("requirements.update");
    assert_eq!(
        update["preconditions"],
        json!([{ "kind": "instance_exists", "parameters": { "node_type": "Requirement", "key": "req_id" } }])
    );
}

const BUILDER_TOKEN: &str = "contract-builder-token";

/// `trails://stats` as a builder reads it.
async fn stats(server: &Served) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": { "uri": "trails://stats" } });
    let read = post(server.addr, Some(BUILDER_TOKEN), &body).await;
    serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap()
}

/// A dry run of `name`: the call with `_meta.trails.dry_run` (and an idempotency key, if any).
async fn dry_run(server: &Served, name: &str, arguments: Value, key: Option<&str>) -> Value {
    let mut trails = json!({ "dry_run": true });
    if let Some(key) = key {
        trails["idempotency_key"] = json!(key);
    }
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": { "name": name, "arguments": arguments, "_meta": { "trails": trails } } });
    let answer = post(server.addr, Some(BUILDER_TOKEN), &body).await;
    assert_eq!(answer["result"]["_meta"]["trails"]["dry_run"], true, "{answer}");
    // A tool with an output schema says it in text alone, as an error result: the SDKs check a
    // result that is not one against the schema, which the verdict is not.
    let verdict: Value = serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    match &answer["result"]["structuredContent"] {
        Value::Null => assert_eq!(answer["result"]["isError"], true, "{answer}"),
        structured => assert_eq!((structured, &answer["result"]["isError"]), (&verdict, &json!(false)), "{answer}"),
    }
    verdict
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_runs_every_check_but_the_handler_and_changes_nothing() {
    let server = crate::fixture()
        .config(format!(
            "[mcp]\nscopes = [\"dev\"]\n\n[http]\nsessions = false\n\n[budget]\ntokens = 30\nwindow_secs = 3600\n\n\
             [[http.tokens]]\nname = \"builder\"\nsha256 = \"{}\"\nscopes = [\"builder\"]\nbudget = {{ tokens = 200 }}\n",
            trails::auth::sha256_hex(BUILDER_TOKEN)
        ))
        .http();
    let create = json!({ "req_id": "REQ-1", "title": "Exports", "status": "proposed", "priority": 2, "tags": [] });
    let created = post(
        server.addr,
        Some(BUILDER_TOKEN),
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "requirements_create", "arguments": create } }),
    )
    .await;
    assert!(created["result"].is_object(), "{created}");

    // What would not run says why: the precondition, with what the manifest publishes of it.
    let missing =
        dry_run(&server, "requirements_update", json!({ "req_id": "REQ-404", "title": "Renamed" }), None).await;
    assert_eq!(missing["would_run"], false, "{missing}");
    assert_eq!(
        missing["reasons"],
        json!([{ "kind": "precondition", "message": "no Requirement `REQ-404` is stored", "blocking": true,
                 "precondition": "instance_exists", "parameters": { "node_type": "Requirement", "key": "req_id" } }])
    );
    // Bad arguments are a reason too, every field at once.
    let invalid = dry_run(&server, "requirements_update", json!({ "req_id": "nope", "title": "" }), None).await;
    assert_eq!(invalid["would_run"], false);
    assert_eq!(invalid["reasons"][0]["kind"], "validation", "{invalid}");
    assert_eq!(invalid["reasons"][0]["data"]["fields"].as_array().unwrap().len(), 2, "{invalid}");

    // A valid call would run; its confirmation and cost are said, not asked or charged.
    let before = stats(&server).await;
    for _ in 0..3 {
        let ok = dry_run(&server, "requirements_update", json!({ "req_id": "REQ-1", "title": "Renamed" }), Some("k-1"))
            .await;
        assert_eq!(ok, json!({ "would_run": true, "reasons": [] }));
        let touch = dry_run(&server, "fixtures_note_touch", json!({ "slug": "absent" }), None).await;
        assert_eq!(touch["would_run"], false, "{touch}");
        let kinds: Vec<&str> =
            touch["reasons"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["precondition", "cost"], "{touch}");
        let delete = dry_run(&server, "requirements_delete", json!({ "req_id": "REQ-1" }), None).await;
        // A 2025 request outside a session has no way to ask the user: the call would be refused.
        // (Where the user can be asked, the question does not block: `guards.rs`.)
        assert_eq!(delete["would_run"], false, "{delete}");
        assert_eq!(
            (&delete["reasons"][0]["kind"], &delete["reasons"][0]["blocking"]),
            (&json!("confirmation"), &json!(true))
        );
        assert!(delete["reasons"][0]["question"].as_str().unwrap().starts_with("Delete this requirement"), "{delete}");
    }
    // Nothing changed: the store, the budget, the key, the provenance.
    let after = stats(&server).await;
    assert_eq!(after["provenance"]["activities"], before["provenance"]["activities"], "{after}");
    assert_eq!(after["budgets"], before["budgets"], "{after}");
    let got = call(&server, "trails_kg_get", json!({ "node_type": "Requirement", "id": "REQ-1" })).await;
    assert_eq!(got["result"]["structuredContent"]["fields"]["title"], "Exports", "{got}");
    // The key was not claimed: a call with other arguments under it runs.
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "requirements_update",
        "arguments": { "req_id": "REQ-1", "title": "Other" }, "_meta": { "trails": { "idempotency_key": "k-1" } } } });
    let ran = post(server.addr, Some(BUILDER_TOKEN), &body).await;
    assert_eq!(ran["result"]["structuredContent"]["title"], "Other", "{ran}");
    // Now the key holds a result: a dry run under it with the same arguments says the call would
    // return that result, and with others that it would be refused — claiming nothing either way.
    for _ in 0..2 {
        let other = json!({ "req_id": "REQ-1", "title": "Other" });
        let replay = dry_run(&server, "requirements_update", other, Some("k-1")).await;
        assert_eq!(replay["would_run"], true, "{replay}");
        assert_eq!(
            (&replay["reasons"][0]["kind"], &replay["reasons"][0]["replay"], &replay["reasons"][0]["blocking"]),
            (&json!("idempotency"), &json!(true), &json!(false)),
            "{replay}"
        );
        let third = json!({ "req_id": "REQ-1", "title": "Third" });
        let conflict = dry_run(&server, "requirements_update", third, Some("k-1")).await;
        assert_eq!(conflict["would_run"], false, "{conflict}");
        let message = conflict["reasons"][0]["message"].as_str().unwrap();
        assert!(message.contains("first used with other arguments"), "{conflict}");
    }

    // For hosts that cannot set `_meta`, the `trails_dry_run` tool says the same.
    let checked = call(
        &server,
        "trails_dry_run",
        json!({ "tool": "requirements.update",
        "arguments": { "req_id": "REQ-404", "title": "Renamed" } }),
    )
    .await;
    assert_eq!(checked["result"]["structuredContent"], missing, "{checked}");
    let unknown = call(&server, "trails_dry_run", json!({ "tool": "nope" })).await;
    assert_eq!(unknown["error"]["data"]["fields"][0]["field"], "tool", "{unknown}");

    // `/invoke?dry_run=true` says the same; a dry_run that is no boolean is refused.
    let response = reqwest::Client::new()
        .post(format!("http://{}/invoke/requirements.update?dry_run=true", server.addr))
        .bearer_auth(BUILDER_TOKEN)
        .json(&json!({ "req_id": "REQ-404", "title": "Renamed" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let verdict: Value = response.json().await.unwrap();
    let text: Value = serde_json::from_str(verdict["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["would_run"], false, "{verdict}");
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "requirements_update",
        "arguments": { "req_id": "REQ-1" }, "_meta": { "trails": { "dry_run": "yes" } } } });
    let refused = post(server.addr, Some(BUILDER_TOKEN), &body).await;
    assert_eq!(refused["error"]["data"]["fields"][0]["field"], "_meta/trails/dry_run", "{refused}");
}
