//! Every tool result is bounded (`[mcp] max_result_bytes`): the PDPP rule that what a model sees
//! stays bounded, applied to every tool and not only to the windowed `trails.kg.*` reads. A
//! result that fits goes out as it is. One that does not is never sent whole:
//!
//! - a list (`Vec<Shape>`) keeps the items that fit, in order, and says how many it left out;
//! - a text result keeps its first bytes (whole characters) and says how many it left out;
//! - any other structured result becomes an `isError` result naming the size and the bound (cut
//!   JSON would break the tool's `outputSchema`).
//!
//! A handler has no continuation to offer in general, so each says what to do instead: ask for
//! less. The call itself ran: what it changed is kept, and the message says so.

use serde_json::{json, Value};

use super::outcome::{Content, ToolResult};
use crate::declare::Output;

/// `output` as a tool result of at most `max` bytes of JSON text (`content[]`'s text block, and
/// `structuredContent` which that text mirrors).
pub(crate) fn result(output: Output, max: usize) -> ToolResult {
    let size = output.text.len();
    if size <= max {
        return whole(output.text, output.structured);
    }
    tracing::debug!(size, max, "tool result over [mcp] max_result_bytes");
    match output.structured {
        Some(Value::Object(mut object)) if output.is_list() => {
            let items = match object.remove("items") {
                Some(Value::Array(items)) => items,
                _ => return too_large(size, max),
            };
            cut_items(items, size, max)
        }
        Some(_) => too_large(size, max),
        None => cut_text(output.text, size, max),
    }
}

fn whole(text: String, structured: Option<Value>) -> ToolResult {
    ToolResult::success(text, structured)
}

/// What was cut, in `_meta.trails.cut` (machine-readable) and as a second text block (for hosts
/// that show the model `content[]` only).
fn with_cut_note(mut result: ToolResult, note: String, cut: Value) -> ToolResult {
    result.content.push(Content::Text { text: note });
    result.set_trails_meta("cut", cut);
    result
}

/// The longest prefix of `items` whose `{"items":[…]}` fits in `max` bytes.
fn cut_items(items: Vec<Value>, size: usize, max: usize) -> ToolResult {
    let total = items.len();
    // `{"items":[` + `]}`, then each item and the comma before it.
    let mut used = r#"{"items":[]}"#.len();
    let mut kept = Vec::new();
    for item in items {
        let length = serde_json::to_string(&item).map(|text| text.len()).unwrap_or(usize::MAX);
        let next = used.saturating_add(length).saturating_add(usize::from(!kept.is_empty()));
        if next > max {
            break;
        }
        used = next;
        kept.push(item);
    }
    let shown = kept.len();
    let structured = json!({ "items": kept });
    let note = format!(
        "Result cut: {shown} of {total} items shown (the whole result is {size} bytes; this server sends at \
         most {max}). Ask for fewer items or narrow the query to see the rest."
    );
    let cut = json!({ "items_shown": shown, "items_total": total, "result_bytes": size, "max_result_bytes": max });
    with_cut_note(whole(structured.to_string(), Some(structured)), note, cut)
}

/// The first bytes of `text` that fit, cut at a character boundary.
fn cut_text(mut text: String, size: usize, max: usize) -> ToolResult {
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    let note = format!(
        "Result cut: the first {end} of {size} bytes shown (this server sends at most {max}). Ask for less to see \
         the rest."
    );
    let cut = json!({ "bytes_shown": end, "result_bytes": size, "max_result_bytes": max });
    with_cut_note(whole(text, None), note, cut)
}

/// A structured result that cannot be cut without breaking its schema.
fn too_large(size: usize, max: usize) -> ToolResult {
    ToolResult::error(json!({
        "error": format!(
            "the result is {size} bytes; this server sends at most {max} ([mcp] max_result_bytes). The call ran \
             (anything it changed is kept); ask for less."
        ),
        "result_bytes": size,
        "max_result_bytes": max,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(result: &ToolResult, index: usize) -> String {
        let Content::Text { text } = &result.content[index];
        text.clone()
    }

    #[test]
    fn a_result_that_fits_is_untouched() {
        let output = Output::list(json!([{ "a": 1 }]));
        let result = result(output.clone(), output.text.len());
        assert_eq!(result.structured_content, output.structured);
        assert_eq!((result.content.len(), result.meta.is_none()), (1, true));
    }

    #[test]
    fn a_list_keeps_the_items_that_fit_and_says_how_many() {
        let items: Vec<Value> = (0..100).map(|i| json!({ "n": i, "pad": "x".repeat(90) })).collect();
        let output = Output::list(Value::Array(items));
        let max = 1000;
        let result = result(output, max);
        let text = text_of(&result, 0);
        assert!(text.len() <= max, "{} bytes", text.len());
        let shown = result.structured_content.as_ref().unwrap()["items"].as_array().unwrap().len();
        assert_eq!(shown, 9, "each item is ~108 bytes: 9 fit in 1000");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), *result.structured_content.as_ref().unwrap());
        let cut = &result.meta.as_ref().unwrap()["trails"]["cut"];
        assert_eq!((cut["items_shown"].as_u64(), cut["items_total"].as_u64()), (Some(9), Some(100)));
        assert!(text_of(&result, 1).starts_with("Result cut: 9 of 100 items shown"));
        assert!(!result.is_error);
    }

    #[test]
    fn text_is_cut_at_a_character_boundary() {
        let result = result(Output::text("é".repeat(100)), 51);
        assert_eq!(text_of(&result, 0), "é".repeat(25));
        assert!(text_of(&result, 1).contains("the first 50 of 200 bytes"));
    }

    #[test]
    fn other_structured_results_become_an_error_naming_the_bound() {
        let result = result(Output::structured(json!({ "blob": "x".repeat(500) })), 100);
        assert!(result.is_error);
        let body = result.structured_content.unwrap();
        assert_eq!((body["max_result_bytes"].as_u64(), body["result_bytes"].as_u64()), (Some(100), Some(511)));
    }
}
