//! `#[resource]`: an app's own fixed resources and templates are listed before the server's,
//! read through their functions (a template's variables checked as arguments are), completed
//! from their `one_of`, and hidden from callers without their scope.

use serde_json::json;

fn complete(uri: &str, name: &str, value: &str) -> rmcp::model::CompleteRequestParams {
    serde_json::from_value(
        json!({ "ref": { "type": "ref/resource", "uri": uri }, "argument": { "name": name, "value": value } }),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_apps_own_resources_are_listed_read_and_completed() {
    let app = trails::App::new().kg(trails::kg::Kg::temporary().unwrap());
    let served = trails_tests::in_process::serve(app, trails_tests::in_process::settings("")).await;
    let session = trails_tests::client::connect(served.addr, None).await;
    let listed = session.list_resources(None).await.unwrap();
    let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris[0], "notes://pinned", "the app's own first: {uris:?}");
    assert!(!uris.contains(&"ops://runbook"), "a builder's resource is not listed to others: {uris:?}");
    assert!(uris.contains(&"trails://schema"), "{uris:?}");
    let pinned = serde_json::to_value(&listed.resources[0]).unwrap();
    assert_eq!(
        pinned,
        json!({ "uri": "notes://pinned", "name": "pinned", "title": "Pinned note",
                "description": "The note pinned for every caller.", "mimeType": "text/markdown" })
    );
    let templates = session.list_resource_templates(None).await.unwrap();
    let first = serde_json::to_value(&templates.resource_templates[0]).unwrap();
    assert_eq!(first["uriTemplate"], "reports://{year}/{kind}");

    let read = |uri: &str| rmcp::model::ReadResourceRequestParams::new(uri);
    let text = serde_json::to_value(session.read_resource(read("notes://pinned")).await.unwrap()).unwrap();
    assert_eq!(
        text["contents"],
        json!([{ "uri": "notes://pinned", "mimeType": "text/markdown", "text": "# Pinned\nShip on Friday." }])
    );
    let report = serde_json::to_value(session.read_resource(read("reports://2026/sales")).await.unwrap()).unwrap();
    assert_eq!(report["contents"][0]["uri"], "reports://2026/sales");
    assert_eq!(report["contents"][0]["text"], r#"{"year":"2026","kind":"sales"}"#);

    // Variables are checked as arguments are: every failure at once.
    let refused = session.read_resource(read("reports://26/profits")).await.unwrap_err();
    let rmcp::ServiceError::McpError(error) = refused else { panic!("{refused:?}") };
    assert_eq!(error.code.0, -32602, "{error:?}");
    let fields: Vec<&str> = error.data.as_ref().unwrap()["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["year", "kind"]);
    // A builder's resource is unknown to others (as an unknown URI is).
    let hidden = session.read_resource(read("ops://runbook")).await.unwrap_err();
    let unknown = session.read_resource(read("ops://nothing")).await.unwrap_err();
    assert_eq!(format!("{hidden:?}").replace("runbook", "nothing"), format!("{unknown:?}"));

    let values = |result: rmcp::model::CompleteResult| result.completion.values;
    assert_eq!(values(session.complete(complete("reports://{year}/{kind}", "kind", "s")).await.unwrap()), ["sales"]);
    assert!(values(session.complete(complete("reports://{year}/{kind}", "year", "20")).await.unwrap()).is_empty());
    session.cancel().await.unwrap();
}
