//! The built-in preconditions (`#[capability(preconditions(…))]`), as the generated code of a
//! capability evaluates them before its handler: each answers why it does not hold, or `None`.
//! They read through the call's own handle, so what they read is in the call's provenance.

use serde_json::Value;
use trails_core::{Ctx, NodeType};

use crate::ctx::KgCtx;
use crate::error::Result;

/// The key the argument `key` holds: a string as it is, a number as written.
fn key_of(arguments: &Value, key: &str) -> Option<String> {
    match arguments.get(key)? {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

fn not_given(key: &str, label: &str) -> String {
    format!("`{key}` was not given, so no {label} can be looked up")
}

/// `instance_exists`: the `T` whose key is the argument `key` is stored.
pub async fn instance_exists<T: NodeType>(ctx: &Ctx, arguments: &Value, key: &str) -> Result<Option<String>> {
    let Some(value) = key_of(arguments, key) else { return Ok(Some(not_given(key, T::LABEL))) };
    Ok(match ctx.kg()?.get::<T>(&value).await? {
        Some(_) => None,
        None => Some(format!("no {} `{value}` is stored", T::LABEL)),
    })
}

/// `instance_absent`: no `T` of that key is stored.
pub async fn instance_absent<T: NodeType>(ctx: &Ctx, arguments: &Value, key: &str) -> Result<Option<String>> {
    let Some(value) = key_of(arguments, key) else { return Ok(Some(not_given(key, T::LABEL))) };
    let stored = ctx.kg()?.get::<T>(&value).await?;
    Ok(stored.map(|_| format!("a {} `{value}` is stored already", T::LABEL)))
}

/// `field_equals` / `field_in`: the `T` is stored and its `field` holds one of `values` (a JSON
/// array, as published).
pub async fn field_in<T: NodeType>(
    ctx: &Ctx,
    arguments: &Value,
    key: &str,
    field: &str,
    values: &str,
) -> Result<Option<String>> {
    let Some(value) = key_of(arguments, key) else { return Ok(Some(not_given(key, T::LABEL))) };
    let Some(stored) = ctx.kg()?.get::<T>(&value).await? else {
        return Ok(Some(format!("no {} `{value}` is stored", T::LABEL)));
    };
    let allowed: Vec<Value> = serde_json::from_str(values).unwrap_or_default();
    let instance = serde_json::to_value(&stored.value).unwrap_or(Value::Null);
    let actual = instance.get(field).cloned().unwrap_or(Value::Null);
    if allowed.contains(&actual) {
        return Ok(None);
    }
    let shown = |value: &Value| match value {
        Value::Null => "no value".to_owned(),
        other => other.to_string(),
    };
    let wanted = match allowed.as_slice() {
        [one] => shown(one),
        many => format!("one of {}", many.iter().map(shown).collect::<Vec<_>>().join(", ")),
    };
    Ok(Some(format!("{} `{value}` has {field} {}; this needs {wanted}", T::LABEL, shown(&actual))))
}

/// `check = …`: the app's own precondition, `Err` with its reason when it does not hold.
pub fn checked(outcome: std::result::Result<(), String>) -> Option<String> {
    outcome.err()
}
