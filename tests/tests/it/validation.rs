//! The generated validators: every constraint a schema states is enforced, every failure is
//! reported at once with the wire contract's codes, and nothing a client sends panics or echoes
//! unbounded data back.

use serde_json::{json, Value};
use trails::declare::Shape;
use trails::error::{FieldCode, FieldError};
use trails_tests::{Constraints, Person, SearchInput};

fn valid_constraints() -> Value {
    json!({
        "handle": "alice",
        "code": "REQ-12",
        "status": "proposed",
        "priority": 3,
        "tags": ["a"],
    })
}

fn codes(errors: &[FieldError]) -> Vec<(String, FieldCode)> {
    errors.iter().map(|e| (e.field.clone(), e.code)).collect()
}

#[test]
fn a_valid_value_passes_and_deserialises() {
    let value = valid_constraints();
    assert_eq!(Constraints::validate(&value), vec![]);
    let parsed: Constraints = serde_json::from_value(value).unwrap();
    assert_eq!(parsed.code, "REQ-12");
}

#[test]
fn every_failure_is_reported_at_once() {
    let value = json!({
        "handle": "al",                 // min_length 3
        "code": "R1",                   // pattern
        "status": "draft",              // one_of
        "tier": 7,                      // one_of (integers)
        "priority": 9,                  // max_value 5
        "confidence": -0.5,             // min_value 0.0
        "tags": [],                     // min_count 1
        "retries": 300,                 // u8 range
        "due": "yesterday",             // date-time
        "address": {"city": "X", "country": "france"}, // nested min_length + pattern
        "colour": "red",                // unknown field
    });
    let errors = Constraints::validate(&value);
    assert_eq!(
        codes(&errors),
        vec![
            ("handle".into(), FieldCode::MinLength),
            ("code".into(), FieldCode::Pattern),
            ("status".into(), FieldCode::OneOf),
            ("tier".into(), FieldCode::OneOf),
            ("priority".into(), FieldCode::MaxValue),
            ("confidence".into(), FieldCode::MinValue),
            ("tags".into(), FieldCode::MinCount),
            ("retries".into(), FieldCode::MaxValue),
            ("due".into(), FieldCode::Type),
            ("address/city".into(), FieldCode::MinLength),
            ("address/country".into(), FieldCode::Pattern),
            ("colour".into(), FieldCode::UnknownField),
        ]
    );
}

#[test]
fn field_errors_carry_value_and_constraint_as_on_the_wire() {
    let mut value = valid_constraints();
    value["status"] = json!("draft");
    value["code"] = json!("R1");
    let errors = Constraints::validate(&value);
    let wire = serde_json::to_value(&errors).unwrap();
    assert_eq!(
        wire,
        json!([
            {"field": "code", "code": "pattern", "message": "code must match ^REQ-\\d+$",
             "value": "R1", "constraint": "^REQ-\\d+$"},
            {"field": "status", "code": "one_of",
             "message": "status must be one of [\"proposed\", \"accepted\", \"rejected\"]",
             "value": "draft", "constraint": ["proposed", "accepted", "rejected"]},
        ])
    );
}

#[test]
fn missing_required_fields_and_wrong_types() {
    let errors = Constraints::validate(&json!({"handle": 5, "priority": "high", "tags": "x"}));
    assert_eq!(
        codes(&errors),
        vec![
            ("handle".into(), FieldCode::Type),
            ("code".into(), FieldCode::Required),
            ("status".into(), FieldCode::Required),
            ("priority".into(), FieldCode::Type),
            ("tags".into(), FieldCode::Type),
        ]
    );
}

#[test]
fn array_items_are_checked_with_their_index() {
    let mut value = valid_constraints();
    value["tags"] = json!(["ok", "x".repeat(21), 3, "fine"]);
    let errors = Constraints::validate(&value);
    assert_eq!(
        codes(&errors),
        vec![
            ("tags".into(), FieldCode::MaxCount),
            ("tags/1".into(), FieldCode::MaxLength),
            ("tags/2".into(), FieldCode::Type),
        ]
    );
}

#[test]
fn null_means_absent_for_optional_fields_only() {
    let mut value = valid_constraints();
    value["tier"] = Value::Null;
    value["address"] = Value::Null;
    assert_eq!(Constraints::validate(&value), vec![]);
    value["code"] = Value::Null;
    assert_eq!(codes(&Constraints::validate(&value)), vec![("code".into(), FieldCode::Required)]);
}

#[test]
fn integers_reject_floats_and_out_of_range_numbers() {
    let mut value = valid_constraints();
    value["priority"] = json!(2.5);
    value["retries"] = json!(-1);
    let errors = Constraints::validate(&value);
    assert_eq!(codes(&errors), vec![("priority".into(), FieldCode::Type), ("retries".into(), FieldCode::MinValue)]);
}

#[test]
fn lengths_count_characters_not_bytes() {
    // Three characters, nine bytes: passes min_length = 3.
    let mut value = valid_constraints();
    value["handle"] = json!("日本語");
    assert_eq!(Constraints::validate(&value), vec![]);
}

#[test]
fn non_object_arguments_are_one_type_error() {
    let errors = SearchInput::validate(&json!([1, 2]));
    assert_eq!(codes(&errors), vec![("".into(), FieldCode::Type)]);
    assert_eq!(errors[0].message, "arguments must be an object");
}

#[test]
fn unit_enum_shapes_accept_only_their_wire_names() {
    assert_eq!(SearchInput::validate(&json!({"query": "x", "order": "desc"})), vec![]);
    let errors = SearchInput::validate(&json!({"query": "x", "order": "Desc"}));
    assert_eq!(codes(&errors), vec![("order".into(), FieldCode::OneOf)]);
}

#[test]
fn node_type_fields_validate_like_shapes() {
    let errors = Person::validate(&json!({"name": "", "email": "not-an-email"}));
    assert_eq!(codes(&errors), vec![("name".into(), FieldCode::MinLength), ("email".into(), FieldCode::Pattern)]);
}

#[test]
fn hostile_payloads_give_bounded_errors() {
    // 10 000 bad items: the error list is capped, and a huge string is not echoed in full.
    let mut value = valid_constraints();
    value["tags"] = Value::Array((0..10_000).map(|_| json!(1)).collect());
    value["handle"] = json!("x".repeat(100_000));
    trails_tests::link();
    let registry = trails::registry::Registry::collect().unwrap();
    let call = registry.call("fixtures_constraints", trails::Ctx::local(), value);
    let Err(trails::Error::Validation { errors, total }) = futures_executor::block_on(call) else {
        panic!("a hostile payload must fail validation");
    };
    assert_eq!(errors.len(), trails::error::MAX_FIELD_ERRORS);
    assert_eq!(total, 10_002);
    let echoed = errors[0].value.as_str().unwrap();
    assert!(echoed.chars().count() <= 201, "echo is cut: {}", echoed.len());
}
