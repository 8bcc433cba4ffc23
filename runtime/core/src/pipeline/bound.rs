//! Every tool result is bounded (`[mcp] max_result_bytes`): the PDPP rule that what a model sees
//! stays bounded, applied to every tool and not only to the windowed `trails.kg.*` reads. A
//! result that fits goes out as it is. One that does not is never sent whole:
//!
//! - a list (`Vec<Shape>`) keeps the items that fit, in order, and says how many it left out;
//! - a text result keeps its first bytes (whole characters) and says how many it left out;
//! - any other structured result becomes an `isError` result naming the size and the bound (cut
//!   JSON would break the tool's `outputSchema`).
//!
//! Each keeps the whole result as a continuation (`continuation.rs`) and names the exact call
//! that reads the rest: `trails_result_read {handle, offset}`. The call itself ran: what it
//! changed is kept, and the message says so.

use std::sync::Arc;

use serde_json::{json, Value};

pub(crate) use super::continuation::Owner;
use super::continuation::{Body, Continuations, READ_TOOL, TTL};
use super::outcome::{Content, ToolResult};
use crate::declare::Output;

/// What a result must fit, and where what it cannot hold is kept for its caller.
#[derive(Clone)]
pub(crate) struct Bound {
    pub(crate) max: usize,
    pub(crate) kept: Arc<Continuations>,
}

/// `output` as a tool result of at most `max` bytes of JSON text (`content[]`'s text block, and
/// `structuredContent` which that text mirrors).
pub(crate) fn result(mut output: Output, bound: &Bound, owner: Owner<'_>) -> ToolResult {
    let keep = |body: Body| bound.kept.keep(&owner, body);
    // Blocks of other kinds (an image, embedded resources) cannot be cut and stay whole: their
    // JSON, as they go on the wire, fits or the result is an error naming the bound.
    if let Some(blocks) = output.take_blocks() {
        let json = serde_json::to_string(&blocks).unwrap_or_default();
        if json.len() <= bound.max {
            return ToolResult { content: blocks, structured_content: output.structured, is_error: false, meta: None };
        }
        tracing::debug!(size = json.len(), max = bound.max, "tool result over [mcp] max_result_bytes");
        return too_large(json.len(), bound.max, keep(Body::Text(json)));
    }
    let (size, max) = (output.text.len(), bound.max);
    if size <= max {
        return whole(output.text, output.structured);
    }
    tracing::debug!(size, max, "tool result over [mcp] max_result_bytes");
    match output.structured {
        Some(Value::Object(mut object)) if output.is_list() => match object.remove("items") {
            Some(Value::Array(items)) => cut_items(items, size, max, keep),
            _ => too_large(size, max, keep(Body::Text(output.text))),
        },
        Some(_) => too_large(size, max, keep(Body::Text(output.text))),
        None => cut_text(output.text, size, max, keep),
    }
}

fn whole(text: String, structured: Option<Value>) -> ToolResult {
    ToolResult::success(text, structured)
}

/// The call that reads `handle` from `offset`, and how a message says it.
fn continuation(handle: &str, offset: usize) -> (Value, String) {
    let arguments = json!({ "handle": handle, "offset": offset });
    let said =
        format!("Read the rest with {READ_TOOL} {arguments} (the handle is yours, for {} minutes)", TTL.as_secs() / 60);
    (json!({ "tool": READ_TOOL, "arguments": arguments }), said)
}

/// What was cut, in `_meta.trails.cut` (machine-readable) and as a second text block (for hosts
/// that show the model `content[]` only); with the call that continues it when it was kept.
fn with_cut_note(mut result: ToolResult, note: String, mut cut: Value, handle: Option<(String, usize)>) -> ToolResult {
    let next = match handle {
        Some((handle, offset)) => {
            let (call, said) = continuation(&handle, offset);
            cut["handle"] = json!(handle);
            cut["next_call"] = call;
            format!("{note} {said}, or ask for less.")
        }
        None => format!("{note} It is too large to keep for paging (over 16 MiB): ask for less."),
    };
    result.content.push(Content::text(next));
    result.set_trails_meta("cut", cut);
    result
}

/// The longest prefix of `items` whose `{"items":[…]}` fits in `max` bytes.
fn cut_items(items: Vec<Value>, size: usize, max: usize, keep: impl FnOnce(Body) -> Option<String>) -> ToolResult {
    let total = items.len();
    // `{"items":[` + `]}`, then each item and the comma before it.
    let mut used = r#"{"items":[]}"#.len();
    let mut shown = 0;
    for item in &items {
        let length = serde_json::to_string(item).map(|text| text.len()).unwrap_or(usize::MAX);
        let next = used.saturating_add(length).saturating_add(usize::from(shown > 0));
        if next > max {
            break;
        }
        used = next;
        shown += 1;
    }
    let structured = json!({ "items": &items[..shown] });
    let handle = keep(Body::items(&items)).map(|handle| (handle, shown));
    let note = format!(
        "Result cut: {shown} of {total} items shown (the whole result is {size} bytes; this server sends at most {max})."
    );
    let cut = json!({ "items_shown": shown, "items_total": total, "result_bytes": size, "max_result_bytes": max });
    with_cut_note(whole(structured.to_string(), Some(structured)), note, cut, handle)
}

/// The first bytes of `text` that fit, cut at a character boundary.
fn cut_text(text: String, size: usize, max: usize, keep: impl FnOnce(Body) -> Option<String>) -> ToolResult {
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let shown = text[..end].to_owned();
    let handle = keep(Body::Text(text)).map(|handle| (handle, end));
    let note = format!("Result cut: the first {end} of {size} bytes shown (this server sends at most {max}).");
    let cut = json!({ "bytes_shown": end, "result_bytes": size, "max_result_bytes": max });
    with_cut_note(whole(shown, None), note, cut, handle)
}

/// A structured result that cannot be cut without breaking its schema: an error naming the
/// bound, and the call that reads its JSON text a page at a time when it was kept.
fn too_large(size: usize, max: usize, handle: Option<String>) -> ToolResult {
    let mut body = json!({
        "error": format!(
            "the result is {size} bytes; this server sends at most {max} ([mcp] max_result_bytes). The call ran \
             (anything it changed is kept)."
        ),
        "result_bytes": size,
        "max_result_bytes": max,
    });
    match handle {
        Some(handle) => {
            let (call, said) = continuation(&handle, 0);
            body["error"] = json!(format!(
                "{} {said} (its JSON text, a page at a time), or ask for less.",
                body["error"].as_str().unwrap_or_default()
            ));
            body["handle"] = json!(handle);
            body["next_call"] = call;
        }
        None => {
            let error = body["error"].as_str().unwrap_or_default();
            body["error"] = json!(format!("{error} It is too large to keep for paging (over 16 MiB): ask for less."));
        }
    }
    ToolResult::error(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(max: usize) -> Bound {
        Bound { max, kept: Arc::new(Continuations::default()) }
    }

    fn owner() -> Owner<'static> {
        Owner { caller: Some("alice"), client: None, tool: "t", scope: crate::auth::Scope::Runtime }
    }

    fn by(caller: Option<&str>) -> crate::ctx::Ctx {
        crate::ctx::Ctx::new("trace", caller.map(str::to_owned), crate::auth::ScopeSet::up_to(crate::auth::Scope::Dev))
    }

    fn text_of(result: &ToolResult, index: usize) -> String {
        match &result.content[index] {
            Content::Text { text, .. } => text.clone(),
            other => panic!("not text: {other:?}"),
        }
    }

    #[test]
    fn a_result_that_fits_is_untouched() {
        let output = Output::list(json!([{ "a": 1 }]));
        let result = result(output.clone(), &bound(output.text.len()), owner());
        assert_eq!(result.structured_content, output.structured);
        assert_eq!((result.content.len(), result.meta.is_none()), (1, true));
    }

    #[test]
    fn a_list_keeps_the_items_that_fit_and_says_how_many() {
        let items: Vec<Value> = (0..100).map(|i| json!({ "n": i, "pad": "x".repeat(90) })).collect();
        let output = Output::list(Value::Array(items));
        let max = 1000;
        let bound = bound(max);
        let result = result(output, &bound, owner());
        let text = text_of(&result, 0);
        assert!(text.len() <= max, "{} bytes", text.len());
        let shown = result.structured_content.as_ref().unwrap()["items"].as_array().unwrap().len();
        assert_eq!(shown, 9, "each item is ~108 bytes: 9 fit in 1000");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), *result.structured_content.as_ref().unwrap());
        let cut = &result.meta.as_ref().unwrap()["trails"]["cut"];
        assert_eq!((cut["items_shown"].as_u64(), cut["items_total"].as_u64()), (Some(9), Some(100)));
        assert!(text_of(&result, 1).starts_with("Result cut: 9 of 100 items shown"));
        assert!(!result.is_error);
        // The continuation reads on from the first item not shown, for its caller only.
        let handle = cut["handle"].as_str().unwrap();
        assert_eq!(
            cut["next_call"],
            json!({ "tool": "trails_result_read", "arguments": { "handle": handle, "offset": 9 } })
        );
        assert!(text_of(&result, 1).contains(&format!(r#"trails_result_read {{"handle":"{handle}","offset":9}}"#)));
        let page = bound.kept.page(handle, &by(Some("alice")), 9, max).unwrap();
        assert_eq!(page["items"][0]["n"], 9);
        assert!(bound.kept.page(handle, &by(None), 9, max).is_err(), "another caller's");
    }

    #[test]
    fn text_is_cut_at_a_character_boundary() {
        let bound = bound(51);
        let result = result(Output::text("é".repeat(100)), &bound, owner());
        assert_eq!(text_of(&result, 0), "é".repeat(25));
        assert!(text_of(&result, 1).contains("the first 50 of 200 bytes"));
        let handle = result.meta.as_ref().unwrap()["trails"]["cut"]["handle"].as_str().unwrap().to_owned();
        let page = bound.kept.page(&handle, &by(Some("alice")), 50, 4096).unwrap();
        assert_eq!((page["text"].as_str(), page["next_offset"].as_u64()), (Some(&*"é".repeat(75)), None));
    }

    #[test]
    fn blocks_go_whole_or_as_an_error_naming_the_bound() {
        let blocks = vec![Content::text("a chart:"), Content::image([7_u8; 300], "image/png")];
        let size = serde_json::to_string(&blocks).unwrap().len();
        let fits = result(Output::content(blocks.clone()), &bound(size), owner());
        assert_eq!((fits.content, fits.is_error, fits.meta), (blocks.clone(), false, None));
        let bound = bound(size - 1);
        let over = result(Output::content(blocks), &bound, owner());
        assert!(over.is_error);
        let body = over.structured_content.unwrap();
        assert_eq!(body["result_bytes"].as_u64(), Some(size as u64));
        let page = bound.kept.page(body["handle"].as_str().unwrap(), &by(Some("alice")), 0, 4096).unwrap();
        assert!(page["text"].as_str().unwrap().starts_with(r#"[{"type":"text","text":"a chart:"}"#));
    }

    #[test]
    fn other_structured_results_become_an_error_naming_the_bound() {
        let bound = bound(100);
        let result = result(Output::structured(json!({ "blob": "x".repeat(500) })), &bound, owner());
        assert!(result.is_error);
        let body = result.structured_content.unwrap();
        assert_eq!((body["max_result_bytes"].as_u64(), body["result_bytes"].as_u64()), (Some(100), Some(511)));
        // Its JSON text, read a page at a time from the start, is the whole result.
        let page = bound.kept.page(body["handle"].as_str().unwrap(), &by(Some("alice")), 0, 4096).unwrap();
        assert_eq!(serde_json::from_str::<Value>(page["text"].as_str().unwrap()).unwrap()["blob"], "x".repeat(500));
    }
}
