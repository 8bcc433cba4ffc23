//! Every tool result is bounded by the window (`[mcp] tool_window_chars`, 4096 characters by
//! default): the PDPP rule that what a model sees stays bounded, one rule for every tool, the
//! `trails_kg_*` reads included. A result whose text fits goes out as it is. One that does not is
//! never sent whole:
//!
//! - a list (`Vec<Shape>`) keeps the items that fit, in order — or, when its items have display
//!   roles, shows their evidence cards — and says in `cut` what it left out;
//! - a text result keeps its first characters and says so in a second block;
//! - any other structured result becomes an `isError` result naming its size and the window (cut
//!   JSON would break the tool's `outputSchema`).
//!
//! Each keeps the whole result as a continuation (`continuation.rs`) and names the exact call
//! that reads on in `next_call`: `trails_result_read {handle, offset}`, every page of which fits
//! the same window. Content blocks of other kinds (images, audio) are not text: they go whole
//! while they fit `[mcp] max_result_bytes`. The call itself ran: what it changed is kept, and the
//! message says so.

use std::sync::Arc;

use serde_json::{json, Value};

pub(crate) use super::continuation::Owner;
use super::continuation::{first_list, Body, Continuations, NOT_KEPT, READ_TOOL, TTL};
use super::outcome::{Content, ToolResult};
use crate::declare::Output;

/// What a result must fit, and where what it cannot hold is kept for its caller.
#[derive(Clone)]
pub(crate) struct Bound {
    /// Characters of text a model is shown of one result.
    pub(crate) window: usize,
    /// Bytes of JSON one result carries, blocks of every kind included.
    pub(crate) max: usize,
    pub(crate) kept: Arc<Continuations>,
}

/// `output` as a tool result whose text fits the window and whose JSON fits `max` bytes.
pub(crate) fn result(mut output: Output, bound: &Bound, owner: Owner<'_>) -> ToolResult {
    let keep = |body: Body| bound.kept.keep(&owner, body);
    // Blocks of other kinds (an image, embedded resources) cannot be cut and stay whole: their
    // text fits the window and their JSON, as it goes on the wire, `max` — or the result is an
    // error naming the bound.
    if let Some(blocks) = output.take_blocks() {
        let json = serde_json::to_string(&blocks).unwrap_or_default();
        let text: usize = blocks.iter().map(shown_chars).sum();
        if json.len() <= bound.max && text <= bound.window {
            return ToolResult { content: blocks, structured_content: output.structured, is_error: false, meta: None };
        }
        tracing::debug!(bytes = json.len(), chars = text, "tool result over its bound");
        // Blocks over the byte bound are mostly base64: paging that text to a model helps no one.
        if json.len() > bound.max {
            return too_large(Size::Bytes { size: json.len(), max: bound.max }, None);
        }
        return too_large(
            Size::Chars { size: text, window: bound.window },
            keep(Body::Text(json)).ok().map(|(h, _)| h),
        );
    }
    // Characters are at most bytes: a text that short fits without counting.
    let fits = |text: &str| text.len() <= bound.window || text.chars().count() <= bound.window;
    if fits(&output.text) {
        return ToolResult::success(output.text, output.structured);
    }
    let size = Size::Chars { size: output.text.chars().count(), window: bound.window };
    tracing::debug!(?size, "tool result over [mcp] tool_window_chars");
    match output.structured.take() {
        Some(Value::Object(mut object)) if output.is_list() => match object.remove("items") {
            Some(Value::Array(items)) => cut_list(Body::items(&items, output.roles()), bound.window, keep),
            _ => too_large(size, keep(Body::Text(output.text)).ok().map(|(handle, _)| handle)),
        },
        Some(_) => too_large(size, keep(Body::Text(output.text)).ok().map(|(handle, _)| handle)),
        None => cut_text(output.text, bound.window, keep),
    }
}

/// Characters of a block the model is shown as text.
fn shown_chars(block: &Content) -> usize {
    match block {
        Content::Text { text, .. } => text.chars().count(),
        Content::Resource { resource: crate::declare::Embedded::Text { text, .. }, .. } => text.chars().count(),
        _ => 0,
    }
}

/// A list over the window: its first page (items whole, or their cards), naming the rest.
fn cut_list(body: Body, window: usize, keep: impl Fn(Body) -> Result<(String, Arc<Body>), Body>) -> ToolResult {
    let kept = keep(body);
    let (handle, body) = match &kept {
        Ok((handle, body)) => (Some(handle.as_str()), &**body),
        Err(body) => (None, body),
    };
    let structured = first_list(handle, body, window);
    ToolResult::success(structured.to_string(), Some(structured))
}

/// Text over the window: its first characters, and a second block saying what was cut (in the
/// list pages' words, `cut` and `next_call`) for hosts that show the model `content[]` only.
fn cut_text(text: String, window: usize, keep: impl Fn(Body) -> Result<(String, Arc<Body>), Body>) -> ToolResult {
    let size = text.len();
    let kept = keep(Body::Text(text));
    let (handle, text) = match &kept {
        Ok((handle, body)) => (Some(handle.as_str()), body_text(body)),
        Err(body) => (None, body_text(body)),
    };
    let note = |end: usize| {
        let cut = format!("the first {end} of {size} bytes of this text are shown");
        match handle {
            Some(handle) => json!({ "cut": format!("{cut}; next_call reads on"),
                                    "next_call": { "tool": READ_TOOL, "arguments": { "handle": handle, "offset": end } } }),
            None => json!({ "cut": format!("{cut}{NOT_KEPT}"), "next_call": null }),
        }
    };
    // Both blocks are shown: the note with the largest offset bounds the room it leaves the text.
    let shown = shown_prefix(text, window.saturating_sub(note(size).to_string().chars().count()));
    let mut result = ToolResult::success(shown.to_owned(), None);
    result.content.push(Content::text(note(shown.len()).to_string()));
    result
}

/// The longest prefix of `text` of at most `room` characters (at least one).
fn shown_prefix(text: &str, room: usize) -> &str {
    match text.char_indices().nth(room.max(1)) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

fn body_text(body: &Body) -> &str {
    match body {
        Body::Text(text) => text,
        Body::Items { .. } => unreachable!("text is kept as text"),
    }
}

/// How far over its bound a result is.
#[derive(Debug, Clone, Copy)]
enum Size {
    Chars { size: usize, window: usize },
    Bytes { size: usize, max: usize },
}

/// A structured result that cannot be cut without breaking its schema (or blocks too large to
/// send): an error naming its size and the bound, and the call that reads its JSON text a page
/// at a time when it was kept.
fn too_large(size: Size, handle: Option<String>) -> ToolResult {
    let (said, mut body) = match size {
        Size::Chars { size, window } => (
            format!(
                "the result is {size} characters; this server shows a model at most {window} ([mcp] tool_window_chars)"
            ),
            json!({ "result_chars": size, "window_chars": window }),
        ),
        Size::Bytes { size, max } => (
            format!("the result is {size} bytes; this server sends at most {max} ([mcp] max_result_bytes)"),
            json!({ "result_bytes": size, "max_result_bytes": max }),
        ),
    };
    let said = format!("{said}. The call ran (anything it changed is kept).");
    match handle {
        Some(handle) => {
            body["error"] = json!(format!(
                "{said} next_call reads its JSON text a page at a time (the handle is yours, for {} minutes); or ask for less.",
                TTL.as_secs() / 60
            ));
            body["next_call"] = json!({ "tool": READ_TOOL, "arguments": { "handle": handle, "offset": 0 } });
        }
        None => {
            body["error"] = json!(format!("{said} Ask for less."));
            body["next_call"] = Value::Null;
        }
    }
    ToolResult::error(body)
}

#[cfg(test)]
mod tests {
    use super::super::continuation::At;
    use super::*;

    fn bound(window: usize) -> Bound {
        Bound { window, max: 1 << 20, kept: Arc::new(Continuations::default()) }
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
        let output = Output::list(json!([{ "a": 1 }]), "");
        let result = result(output.clone(), &bound(output.text.len()), owner());
        assert_eq!(result.structured_content, output.structured);
        assert_eq!((result.content.len(), result.meta.is_none()), (1, true));
    }

    #[test]
    fn a_list_keeps_the_items_that_fit_and_names_the_call_that_reads_on() {
        let items: Vec<Value> = (0..100).map(|i| json!({ "n": i, "pad": "x".repeat(90) })).collect();
        let output = Output::list(Value::Array(items), "");
        let window = 1000;
        let bound = bound(window);
        let result = result(output, &bound, owner());
        let text = text_of(&result, 0);
        assert!(text.chars().count() <= window, "{} characters", text.len());
        assert_eq!(result.content.len(), 1, "what was cut is said in the result itself");
        let structured = result.structured_content.as_ref().unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), *structured);
        let shown = structured["items"].as_array().unwrap().len();
        assert!((5..9).contains(&shown), "each item is ~108 characters: {shown}");
        assert_eq!(structured["total"], 100);
        assert_eq!(structured["cut"], format!("100 items: items 0 to {} shown; next_call reads on", shown - 1));
        assert!(!result.is_error && result.meta.is_none());
        // The continuation reads on from the first item not shown, for its caller only.
        let next = &structured["next_call"];
        assert_eq!((&next["tool"], &next["arguments"]["offset"]), (&json!("trails_result_read"), &json!(shown)));
        let handle = next["arguments"]["handle"].as_str().unwrap();
        let page = bound.kept.page(handle, &by(Some("alice")), At::Offset(shown), window).unwrap();
        assert_eq!(page["items"][0]["n"], shown);
        assert!(bound.kept.page(handle, &by(None), At::Offset(shown), window).is_err(), "another caller's");
    }

    #[test]
    fn a_list_of_items_with_display_roles_shows_their_cards() {
        let people: Vec<Value> = (0..40).map(|n| json!({ "name": format!("p{n}"), "bio": "b".repeat(200) })).collect();
        let result = result(Output::list(Value::Array(people), r#""title":"name""#), &bound(1024), owner());
        let structured = result.structured_content.unwrap();
        assert_eq!(structured["items"], json!([]));
        assert_eq!(structured["cards"][1], json!({ "item": 1, "label": "p1" }));
        let cut = structured["cut"].as_str().unwrap();
        assert!(cut.starts_with("40 items: items 0 to ") && cut.contains("as evidence cards"), "{cut}");
    }

    #[test]
    fn text_is_cut_to_the_window_with_a_note_in_the_same_words() {
        let bound = bound(300);
        let result = result(Output::text("é".repeat(1000)), &bound, owner());
        let (shown, note) = (text_of(&result, 0), text_of(&result, 1));
        assert!(shown.chars().count() + note.chars().count() <= 300, "{shown}{note}");
        let note: Value = serde_json::from_str(&note).unwrap();
        assert_eq!(
            note["cut"],
            format!("the first {} of 2000 bytes of this text are shown; next_call reads on", shown.len())
        );
        let handle = note["next_call"]["arguments"]["handle"].as_str().unwrap();
        let page = bound.kept.page(handle, &by(Some("alice")), At::Offset(shown.len()), 4096).unwrap();
        assert_eq!(format!("{shown}{}", page["text"].as_str().unwrap()), "é".repeat(1000));
    }

    #[test]
    fn blocks_go_whole_or_as_an_error_naming_the_bound() {
        let blocks = vec![Content::text("a chart:"), Content::image([7_u8; 300], "image/png")];
        let size = serde_json::to_string(&blocks).unwrap().len();
        let mut fits = bound(10);
        fits.max = size;
        let whole = result(Output::content(blocks.clone()), &fits, owner());
        assert_eq!((whole.content, whole.is_error, whole.meta), (blocks.clone(), false, None), "images are not text");
        let mut over = fits.clone();
        over.max = size - 1;
        let refused = result(Output::content(blocks.clone()), &over, owner());
        assert!(refused.is_error);
        let body = refused.structured_content.unwrap();
        assert_eq!(body["result_bytes"].as_u64(), Some(size as u64));
        assert!(body["next_call"].is_null(), "base64 is not paged to a model: {body}");
        // Their text counts against the window: over it, the blocks' JSON is paged.
        let long = vec![Content::text("x".repeat(11))];
        let bound = bound(10);
        let refused = result(Output::content(long), &bound, owner());
        assert!(refused.is_error);
        let body = refused.structured_content.unwrap();
        let handle = body["next_call"]["arguments"]["handle"].as_str().unwrap();
        let page = bound.kept.page(handle, &by(Some("alice")), At::Offset(0), 4096).unwrap();
        assert!(page["text"].as_str().unwrap().starts_with(r#"[{"type":"text","text":"xxxxxxxxxxx"}"#));
    }

    #[test]
    fn other_structured_results_become_an_error_naming_the_window() {
        let bound = bound(100);
        let result = result(Output::structured(json!({ "blob": "x".repeat(500) })), &bound, owner());
        assert!(result.is_error);
        let body = result.structured_content.unwrap();
        assert_eq!((body["window_chars"].as_u64(), body["result_chars"].as_u64()), (Some(100), Some(511)));
        // Its JSON text, read a page at a time from the start, is the whole result.
        let handle = body["next_call"]["arguments"]["handle"].as_str().unwrap();
        let page = bound.kept.page(handle, &by(Some("alice")), At::Offset(0), 4096).unwrap();
        assert_eq!(serde_json::from_str::<Value>(page["text"].as_str().unwrap()).unwrap()["blob"], "x".repeat(500));
    }
}
