//! The example app end to end through the registry: the same dispatch path the transports use.

use serde_json::{json, Value};
use trails::error::FieldCode;
use trails::kg::{Kg, KgCtx};
use trails::registry::Registry;
use trails::{Ctx, Error};

struct App {
    registry: Registry,
    ctx: Ctx,
}

impl App {
    fn new() -> App {
        requirements::link();
        App { registry: Registry::collect().unwrap(), ctx: Ctx::local().with_kg(Kg::temporary().unwrap()) }
    }
    fn call(&self, tool: &str, arguments: Value) -> Result<trails::declare::Output, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(self.registry.call(tool, self.ctx.clone(), arguments))
    }
}

fn requirement(id: &str, title: &str, priority: i64) -> Value {
    json!({"req_id": id, "title": title, "status": "proposed", "priority": priority, "tags": ["auth"]})
}

#[test]
fn create_link_search_update() {
    let app = App::new();
    let iri = app.call("people_create", json!({"name": "Ada", "email": "ada@example.org"})).unwrap().text;
    assert_eq!(iri, "urn:trails:kg/Person/ada%40example.org");
    let again = app.call("people_create", json!({"name": "Ada L.", "email": "ada@example.org"})).unwrap_err();
    let Error::Validation { errors, .. } = again else { panic!("a taken e-mail must be refused, not overwritten") };
    assert_eq!((errors[0].field.as_str(), errors[0].code), ("email", FieldCode::Unique));
    app.call("requirements_create", requirement("REQ-1", "Log in with SSO", 2)).unwrap();
    app.call("requirements_create", requirement("REQ-2", "Log out everywhere", 1)).unwrap();

    let linked = app.call("requirements_link", json!({"req_id": "REQ-1", "owner": iri})).unwrap();
    assert_eq!(linked.structured.unwrap()["owner"], "urn:trails:kg/Person/ada%40example.org");

    let found = app.call("requirements_search", json!({"text": "log"})).unwrap().structured.unwrap();
    let ids: Vec<&str> = found["items"].as_array().unwrap().iter().map(|r| r["req_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["REQ-2", "REQ-1"], "highest priority (1) first");

    let updated = app.call("requirements_update", json!({"req_id": "REQ-2", "status": "accepted"})).unwrap();
    assert_eq!(updated.structured.unwrap()["status"], "accepted");
    let accepted = app.call("requirements_search", json!({"status": "accepted"})).unwrap().structured.unwrap();
    assert_eq!(accepted["items"].as_array().unwrap().len(), 1);

    let stats = app.call("trails_meta_requirements_stats", json!({})).unwrap().structured.unwrap();
    assert_eq!((stats["requirements"].as_u64(), stats["people"].as_u64()), (Some(2), Some(1)));

    // REQ-2 was accepted with neither an owner nor a due date.
    let review = app.call("requirements_review", json!({})).unwrap().text;
    assert_eq!(
        review,
        "2 requirements reviewed; 2 to fix: REQ-2 is accepted without an owner; REQ-2 is accepted without a due date"
    );
}

#[test]
fn bad_input_changes_nothing_and_reports_every_field() {
    let app = App::new();
    let err = app
        .call(
            "requirements_create",
            json!({"req_id": "R1", "title": "x", "status": "draft", "priority": 9, "tags": []}),
        )
        .unwrap_err();
    let Error::Validation { errors, .. } = err else { panic!("{err:?}") };
    let fields: Vec<(&str, FieldCode)> = errors.iter().map(|e| (e.field.as_str(), e.code)).collect();
    assert_eq!(
        fields,
        [
            ("req_id", FieldCode::Pattern),
            ("title", FieldCode::MinLength),
            ("status", FieldCode::OneOf),
            ("priority", FieldCode::MaxValue)
        ]
    );
    let stats = app.call("trails_meta_requirements_stats", json!({})).unwrap().structured.unwrap();
    assert_eq!(stats["requirements"], 0, "nothing was stored");
}

#[test]
fn duplicates_and_dangling_references_are_field_errors() {
    let app = App::new();
    app.call("requirements_create", requirement("REQ-7", "Export as CSV", 3)).unwrap();
    let Error::Validation { errors, .. } =
        app.call("requirements_create", requirement("REQ-7", "Again", 3)).unwrap_err()
    else {
        panic!("duplicate id must be a validation error")
    };
    assert_eq!((errors[0].field.as_str(), errors[0].code), ("req_id", FieldCode::Unique));
    assert_eq!(errors[0].message, "req_id REQ-7 is already taken (urn:trails:kg/Requirement/REQ-7)");
    assert_eq!(errors[0].value, "REQ-7", "the error echoes what was sent");
    let Error::Validation { errors, .. } = app
        .call("requirements_link", json!({"req_id": "REQ-7", "owner": "https://example.org/people/nobody@x.org"}))
        .unwrap_err()
    else {
        panic!("unknown owner must be a validation error")
    };
    assert_eq!((errors[0].field.as_str(), errors[0].code), ("owner", FieldCode::Reference));
    // A well-formed update of what is not there: the caller's to act on, a domain error.
    let Error::Domain(missing) =
        app.call("requirements_update", json!({"req_id": "REQ-99", "status": "accepted"})).unwrap_err()
    else {
        panic!("an unknown requirement is not found")
    };
    assert_eq!(missing.kind(), trails::error::ErrorKind::NotFound);
    assert_eq!(missing.message(), "there is no Requirement at urn:trails:kg/Requirement/REQ-99");
}

#[test]
fn a_missing_store_is_an_internal_error_that_names_no_internals_to_clients() {
    requirements::link();
    let registry = Registry::collect().unwrap();
    let err = futures_executor::block_on(registry.call("requirements_search", Ctx::local(), json!({}))).unwrap_err();
    assert!(matches!(err, Error::Internal(_)));
    assert_eq!(err.to_string(), "internal error", "Display (what clients see) hides the detail");
}
