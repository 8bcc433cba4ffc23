//! Byte-stable JSON rendering for goldens: sorted keys whatever serde_json's map type is.

use serde_json::{Map, Value};

/// `value` with every object's keys in sorted order.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let mut out = Map::new();
            for (key, item) in entries {
                out.insert(key.clone(), sorted(item));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Pretty JSON with sorted keys and a trailing newline.
pub fn to_sorted_pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(&sorted(value)).expect("a Value always serialises");
    text.push('\n');
    text
}
