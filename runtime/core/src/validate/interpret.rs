//! The walk: a raw `serde_json::Value` against a static rule table, collecting *all* failures.
//! One interpreter for every shape keeps the generated code small; the rules themselves are
//! still produced at build time.

use serde_json::{json, Map, Value};

use super::field_error::{echo, echo_name, FieldCode, FieldError};
use super::report::{Errors, Path, MAX_INTEGRAL_FLOATS};
use super::rules::{FieldRule, IntegerRule, ItemRule, NestedValidator, NumberRule, ObjectRules, StringRule};

fn fail(errors: &mut Errors, field: String, code: FieldCode, message: String, value: &Value, constraint: Value) {
    errors.push(FieldError { field, code, message, value: echo(value), constraint });
}

fn display(field: &str) -> &str {
    if field.is_empty() {
        "arguments"
    } else {
        field
    }
}

/// Validate `value` as an object described by `rules`. Absent and `null` are the same for
/// optional fields (serde reads both as `None`).
pub fn validate_object(rules: &ObjectRules, value: &Value, path: &mut Path, errors: &mut Errors) {
    let Some(map) = value.as_object() else {
        let field = path.current();
        let message = format!("{} must be an object", display(&field));
        fail(errors, field, FieldCode::Type, message, value, json!("object"));
        return;
    };
    rules.for_each_field(&mut |rule| match map.get(rule.name) {
        None | Some(Value::Null) => {
            if rule.required {
                let field = path.field(rule.name);
                let message = format!("{field} is required");
                fail(errors, field, FieldCode::Required, message, &Value::Null, json!(true));
            }
        }
        Some(present) => {
            path.push(rule.name);
            validate_field(rule, present, path, errors);
            path.pop();
        }
    });
    report_unknown(rules, map, path, errors);
}

fn report_unknown(rules: &ObjectRules, map: &Map<String, Value>, path: &Path, errors: &mut Errors) {
    let mut known: Vec<&str> = Vec::new();
    rules.for_each_field(&mut |rule| known.push(rule.name));
    for (key, value) in map {
        if !known.contains(&key.as_str()) {
            let field = path.field(&echo_name(key));
            let message = format!("{field} is not a known field; expected one of: {}", known.join(", "));
            fail(errors, field, FieldCode::UnknownField, message, value, json!(known));
        }
    }
}

fn validate_field(rule: &FieldRule, value: &Value, path: &mut Path, errors: &mut Errors) {
    let Some(bounds) = &rule.array else {
        validate_item(&rule.item, value, path, errors);
        return;
    };
    let field = path.current();
    let Some(items) = value.as_array() else {
        let message = format!("{field} must be an array");
        fail(errors, field, FieldCode::Type, message, value, json!("array"));
        return;
    };
    let count = items.len() as u64;
    if let Some(min) = bounds.min_items.filter(|min| count < *min) {
        let message = format!("{field} must have at least {min} item(s), got {count}");
        fail(errors, field.clone(), FieldCode::MinCount, message, value, json!(min));
    }
    let over = bounds.max_items.is_some_and(|max| count > max);
    if let Some(max) = bounds.max_items.filter(|max| count > *max) {
        let message = format!("{field} must have at most {max} item(s), got {count}");
        fail(errors, field.clone(), FieldCode::MaxCount, message, value, json!(max));
    }
    // A list already over its bound is refused as such: no table of its items is built.
    if bounds.unique_items && !over {
        if let Some((first, again)) = repeated(items) {
            let message = format!("{field} is a set: item {again} repeats item {first}");
            fail(errors, field, FieldCode::UniqueItems, message, value, json!(true));
        }
    }
    for (index, item) in items.iter().enumerate() {
        path.push(index.to_string());
        validate_item(&rule.item, item, path, errors);
        path.pop();
    }
}

/// The first item equal to an earlier one, as JSON Schema's `uniqueItems` compares them (numbers
/// by value, `1` and `1.0` alike; objects whatever their key order): `(earlier, repeat)`. Linear:
/// a list is as long as a body allows.
fn repeated(items: &[Value]) -> Option<(usize, usize)> {
    let mut seen = std::collections::HashMap::new();
    for (index, item) in items.iter().enumerate() {
        let mut key = String::new();
        canonical(item, &mut key);
        if let Some(first) = seen.insert(key, index) {
            return Some((first, index));
        }
    }
    None
}

/// `value` in one spelling per JSON Schema equality class.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Number(number) => match (number.as_i64(), number.as_u64(), number.as_f64()) {
            (Some(int), _, _) => out.push_str(&int.to_string()),
            (_, Some(int), _) => out.push_str(&int.to_string()),
            // An integral float is that integer (`1.0` is `1`); 2^63 and past, floats are exact
            // integers only when i128 holds them.
            (_, _, Some(float)) if float.fract() == 0.0 && float.abs() < 1.0e38 => {
                out.push_str(&(float as i128).to_string())
            }
            _ => out.push_str(&number.to_string()),
        },
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (name, member) in sorted {
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                canonical(member, out);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Validate one scalar (or nested object) against its rule.
pub fn validate_item(rule: &ItemRule, value: &Value, path: &mut Path, errors: &mut Errors) {
    let field = path.current();
    let type_error = |errors: &mut Errors, expected: &str| {
        let message = format!("{} must be {expected}", display(&field));
        fail(errors, field.clone(), FieldCode::Type, message, value, json!(expected));
    };
    match rule {
        ItemRule::String(rule) => match value.as_str() {
            Some(text) => check_string(rule, text, &field, value, errors),
            None => type_error(errors, "a string"),
        },
        ItemRule::Integer(rule) => match integer_of(value) {
            Some((number, written_as_float)) => {
                let before = errors.total();
                check_integer(rule, number, &field, value, errors);
                if written_as_float && errors.total() == before && !errors.integral_float(path) {
                    let message = format!(
                        "{} is one of more than {MAX_INTEGRAL_FLOATS} integers written with a fraction or an \
                         exponent; write integers as integers",
                        display(&field)
                    );
                    fail(errors, field.clone(), FieldCode::Type, message, value, json!("an integer"));
                }
            }
            None => type_error(errors, "an integer"),
        },
        ItemRule::Number(rule) => match value.as_f64() {
            Some(number) => check_number(rule, number, &field, value, errors),
            None => type_error(errors, "a number"),
        },
        ItemRule::Boolean => {
            if !value.is_boolean() {
                type_error(errors, "a boolean");
            }
        }
        ItemRule::Iri => {
            if !value.as_str().is_some_and(is_absolute_iri) {
                type_error(errors, "an absolute IRI (scheme:rest, no spaces)");
            }
        }
        ItemRule::DateTime => {
            if value.as_str().is_none_or(|s| chrono::DateTime::parse_from_rfc3339(s).is_err()) {
                type_error(errors, "an RFC 3339 date-time (2026-01-31T12:00:00Z)");
            }
        }
        ItemRule::Nested(validate) => validate(value, path, errors),
    }
}

/// JSON Schema's integer: any number whose fractional part is zero — `1.0`, `-0`, `1e2` and
/// `2^64` included — and whether it was written as a float. A float beyond `i128` saturates:
/// past every bound a Rust integer type has, so it fails `min_value`/`max_value`, as it does
/// under any JSON Schema validator.
fn integer_of(value: &Value) -> Option<(i128, bool)> {
    let number = value.as_number()?;
    if let Some(exact) = number.as_i64().map(i128::from).or_else(|| number.as_u64().map(i128::from)) {
        return Some((exact, false));
    }
    let float = number.as_f64()?;
    if !float.is_finite() || float.fract() != 0.0 {
        return None;
    }
    // An integer below `i64::MIN` is parsed as the nearest float, which may be `-2^63` exactly
    // (`-9223372036854775809` is): taken as it reads, it would pass an `i64`'s bound. Any float
    // that low counts as below every `i64` (`-9223372036854775808.0` too, the price of not
    // knowing which was written). Above, floats reach `2^64`, already past `u64::MAX`.
    const I64_MIN: f64 = -9_223_372_036_854_775_808.0;
    let integer = if float <= I64_MIN { (float as i128).min(i128::from(i64::MIN) - 1) } else { float as i128 };
    Some((integer, true))
}

fn check_string(rule: &StringRule, text: &str, field: &str, value: &Value, errors: &mut Errors) {
    // JSON Schema counts code points, not bytes.
    let length = text.chars().count() as u64;
    if let Some(min) = rule.min_length.filter(|min| length < *min) {
        let message = format!("{field} must be at least {min} character(s) long, got {length}");
        fail(errors, field.to_owned(), FieldCode::MinLength, message, value, json!(min));
    }
    if let Some(max) = rule.max_length.filter(|max| length > *max) {
        let message = format!("{field} must be at most {max} character(s) long, got {length}");
        fail(errors, field.to_owned(), FieldCode::MaxLength, message, value, json!(max));
    }
    if let Some(pattern) = rule.pattern.filter(|p| !p.is_match(text)) {
        let message = format!("{field} must match {}", pattern.source());
        fail(errors, field.to_owned(), FieldCode::Pattern, message, value, json!(pattern.source()));
    }
    if !rule.one_of.is_empty() && !rule.one_of.contains(&text) {
        let message = format!("{field} must be one of {:?}", rule.one_of);
        fail(errors, field.to_owned(), FieldCode::OneOf, message, value, json!(rule.one_of));
    }
}

fn check_integer(rule: &IntegerRule, number: i128, field: &str, value: &Value, errors: &mut Errors) {
    if let Some(min) = rule.min.filter(|min| number < *min) {
        let message = format!("{field} must be at least {min}, got {value}");
        fail(errors, field.to_owned(), FieldCode::MinValue, message, value, bound(min));
    }
    if let Some(max) = rule.max.filter(|max| number > *max) {
        let message = format!("{field} must be at most {max}, got {value}");
        fail(errors, field.to_owned(), FieldCode::MaxValue, message, value, bound(max));
    }
    if !rule.one_of.is_empty() && !rule.one_of.contains(&number) {
        let allowed: Vec<Value> = rule.one_of.iter().map(|n| bound(*n)).collect();
        let message = format!("{field} must be one of {:?}", rule.one_of);
        fail(errors, field.to_owned(), FieldCode::OneOf, message, value, Value::Array(allowed));
    }
}

fn bound(n: i128) -> Value {
    i64::try_from(n)
        .map(Value::from)
        .or_else(|_| u64::try_from(n).map(Value::from))
        .unwrap_or_else(|_| Value::String(n.to_string()))
}

fn check_number(rule: &NumberRule, number: f64, field: &str, value: &Value, errors: &mut Errors) {
    if let Some(min) = rule.min.filter(|min| number < *min) {
        let message = format!("{field} must be at least {min}, got {number}");
        fail(errors, field.to_owned(), FieldCode::MinValue, message, value, json!(min));
    }
    if let Some(max) = rule.max.filter(|max| number > *max) {
        let message = format!("{field} must be at most {max}, got {number}");
        fail(errors, field.to_owned(), FieldCode::MaxValue, message, value, json!(max));
    }
    if !rule.one_of.is_empty() && !rule.one_of.contains(&number) {
        let message = format!("{field} must be one of {:?}", rule.one_of);
        fail(errors, field.to_owned(), FieldCode::OneOf, message, value, json!(rule.one_of));
    }
}

/// `scheme:rest` with an RFC 3987 scheme and no characters IRIs forbid.
fn is_absolute_iri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else { return false };
    let mut chars = scheme.chars();
    let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    scheme_ok
        && !rest.is_empty()
        && !text.chars().any(|c| c.is_whitespace() || c.is_control() || "<>\"{}|\\^`".contains(c))
}

/// Run a shape's generated validator over a whole argument object.
pub fn run(validate: NestedValidator, value: &Value) -> Errors {
    let mut errors = Errors::default();
    validate(value, &mut Path::default(), &mut errors);
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::repeated;

    /// JSON Schema's equality, as ajv and python-jsonschema apply `uniqueItems`.
    #[test]
    fn repeats_are_found_as_json_schema_compares_values() {
        let cases = [
            (json!(["a", "b", "a"]), Some((0, 2))),
            (json!([1, 1.0]), Some((0, 1))),
            (json!([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}]), Some((0, 1))),
            (json!([1e300, 1e300]), Some((0, 1))),
            (json!(["1", 1, true, null, [1], {"1": 1}, 1.5]), None),
            (json!([[1, 2], [2, 1]]), None),
            (json!([]), None),
        ];
        for (items, expected) in cases {
            assert_eq!(repeated(items.as_array().unwrap()), expected, "{items}");
        }
    }
}
