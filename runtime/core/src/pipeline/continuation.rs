//! Continuations: what a result cut at `[mcp] max_result_bytes` left out, kept so the model can
//! page through it with `trails_result_read {handle, offset}` (the PDPP rule that a cut result
//! says how to get the rest). Kept in memory, bounded in bytes, entries and time: a handle is a
//! random 128-bit token, read only by the caller that made the call (the token's name; anonymous
//! callers are one caller), and gone after [`TTL`] or when newer results need the room.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Error, Result};

/// How long a cut result stays readable.
pub const TTL: Duration = Duration::from_secs(600);
/// Bytes of cut results kept at once (the oldest go first when a new one needs the room).
pub const MAX_KEPT_BYTES: usize = 64 << 20;
/// Cut results kept at once.
pub const MAX_KEPT: usize = 256;
/// The tool that reads them.
pub const READ_TOOL: &str = "trails_result_read";
/// Bytes a page leaves for its own members (handle, offsets, the next call).
const ENVELOPE_BYTES: usize = 512;

/// What was cut: the items of a list result, or the text of any other.
#[derive(Debug)]
pub(crate) enum Body {
    Items(Vec<Value>),
    Text(String),
}

struct Kept {
    owner: Option<String>,
    tool: &'static str,
    body: Body,
    bytes: usize,
    at: Instant,
}

#[derive(Default)]
struct Inner {
    kept: HashMap<String, Kept>,
    /// Handles, oldest first (a handle read or evicted already is skipped when it comes up).
    order: VecDeque<String>,
    bytes: usize,
}

/// The cut results kept for their callers.
#[derive(Default)]
pub struct Continuations {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Continuations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f.debug_struct("Continuations").field("kept", &inner.kept.len()).field("bytes", &inner.bytes).finish()
    }
}

impl Continuations {
    /// Keep `body` (`bytes` of JSON text) of `tool`'s result for `owner`: its handle, or `None`
    /// when it alone is over the bound.
    pub(crate) fn keep(&self, owner: Option<&str>, tool: &'static str, body: Body, bytes: usize) -> Option<String> {
        if bytes > MAX_KEPT_BYTES {
            return None;
        }
        let handle = uuid::Uuid::new_v4().simple().to_string();
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        inner.expire(now);
        while inner.bytes + bytes > MAX_KEPT_BYTES || inner.kept.len() >= MAX_KEPT {
            if !inner.evict_oldest() {
                break;
            }
        }
        inner.bytes += bytes;
        inner.order.push_back(handle.clone());
        inner.kept.insert(handle.clone(), Kept { owner: owner.map(str::to_owned), tool, body, bytes, at: now });
        Some(handle)
    }

    /// The page of `handle` from `offset` (an item index for a list, a byte offset for text),
    /// at most `max` bytes of JSON text, for `owner`. Another caller's handle reads as unknown.
    pub fn page(&self, handle: &str, owner: Option<&str>, offset: usize, max: usize) -> Result<Value> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.expire(Instant::now());
        let gone = || {
            Error::not_found(format!(
                "no cut result `{}` for this caller: it expired ({} minutes after its call) or made room for newer \
                 ones; call the tool again",
                crate::validate::echo_name(handle),
                TTL.as_secs() / 60
            ))
        };
        let Some(kept) = inner.kept.get(handle).filter(|kept| kept.owner.as_deref() == owner) else {
            return Err(gone());
        };
        let budget = max.saturating_sub(ENVELOPE_BYTES).max(1);
        Ok(match &kept.body {
            Body::Items(items) => items_page(handle, kept.tool, items, offset, budget),
            Body::Text(text) => text_page(handle, kept.tool, text, offset, budget),
        })
    }

    /// Cut results kept now, and their bytes (`trails://stats`).
    pub fn stats(&self) -> (usize, usize) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.expire(Instant::now());
        (inner.kept.len(), inner.bytes)
    }
}

impl Inner {
    fn expire(&mut self, now: Instant) {
        while let Some(handle) = self.order.front() {
            match self.kept.get(handle) {
                Some(kept) if now.duration_since(kept.at) < TTL => break,
                _ => {
                    self.evict_oldest();
                }
            }
        }
    }

    /// Drop the oldest entry still kept; false when none is.
    fn evict_oldest(&mut self) -> bool {
        while let Some(handle) = self.order.pop_front() {
            if let Some(kept) = self.kept.remove(&handle) {
                self.bytes -= kept.bytes;
                return true;
            }
        }
        false
    }
}

fn next_call(handle: &str, offset: Option<usize>) -> Value {
    match offset {
        Some(offset) => json!({ "tool": READ_TOOL, "arguments": { "handle": handle, "offset": offset } }),
        None => Value::Null,
    }
}

/// The items from `offset` whose JSON fits `budget` (at least one, or the one that cannot fit,
/// named and skipped: an item over the whole bound has no smaller form).
fn items_page(handle: &str, tool: &str, items: &[Value], offset: usize, budget: usize) -> Value {
    let total = items.len();
    let start = offset.min(total);
    let mut used: usize = 2;
    let mut shown = Vec::new();
    let mut skipped = None;
    for (index, item) in items.iter().enumerate().skip(start) {
        let length = serde_json::to_string(item).map_or(usize::MAX, |text| text.len());
        if used.saturating_add(length).saturating_add(1) > budget {
            if shown.is_empty() {
                skipped = Some(json!({ "item": index, "bytes": length }));
            }
            break;
        }
        used += length + 1;
        shown.push(item.clone());
    }
    let end = start + shown.len() + usize::from(skipped.is_some());
    let next = (end < total).then_some(end);
    let mut page = json!({
        "handle": handle, "tool": tool, "kind": "items", "offset": start, "total": total,
        "items": shown, "next_offset": next, "next_call": next_call(handle, next),
    });
    if let Some(skipped) = skipped {
        page["skipped"] = skipped;
    }
    page
}

/// The bytes of `text` from `offset` that fit `budget` once escaped as a JSON string, cut at
/// character boundaries.
fn text_page(handle: &str, tool: &str, text: &str, offset: usize, budget: usize) -> Value {
    let total = text.len();
    let mut start = offset.min(total);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = start;
    let mut used = 2;
    for (index, ch) in text[start..].char_indices() {
        let escaped = match ch {
            '"' | '\\' | '\n' | '\r' | '\t' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        };
        if used + escaped > budget {
            break;
        }
        used += escaped;
        end = start + index + ch.len_utf8();
    }
    let next = (end < total).then_some(end);
    json!({
        "handle": handle, "tool": tool, "kind": "text", "offset": start, "total": total,
        "text": &text[start..end], "next_offset": next, "next_call": next_call(handle, next),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize, pad: usize) -> Body {
        Body::Items((0..n).map(|i| json!({ "n": i, "pad": "x".repeat(pad) })).collect())
    }

    #[test]
    fn a_list_is_read_to_its_end_in_pages_that_fit() {
        let kept = Continuations::default();
        let handle = kept.keep(Some("alice"), "t", items(100, 90), 11_000).unwrap();
        let (mut offset, mut seen) = (Some(0), Vec::new());
        while let Some(from) = offset {
            let page = kept.page(&handle, Some("alice"), from, 2048).unwrap();
            assert!(page.to_string().len() <= 2048, "{} bytes", page.to_string().len());
            seen.extend(page["items"].as_array().unwrap().iter().map(|item| item["n"].as_u64().unwrap()));
            offset = page["next_offset"].as_u64().map(|n| n as usize);
            if let Some(next) = offset {
                assert_eq!(page["next_call"]["arguments"]["offset"], json!(next));
            }
        }
        assert_eq!(seen, (0..100).collect::<Vec<u64>>(), "every item once, in order");
    }

    #[test]
    fn text_is_read_whole_across_pages_with_escapes_and_multibyte_characters() {
        let text: String = "é\"\n".repeat(3000);
        let kept = Continuations::default();
        let handle = kept.keep(None, "t", Body::Text(text.clone()), text.len()).unwrap();
        let (mut offset, mut read) = (Some(0), String::new());
        while let Some(from) = offset {
            let page = kept.page(&handle, None, from, 1024).unwrap();
            assert!(page.to_string().len() <= 1024);
            read.push_str(page["text"].as_str().unwrap());
            offset = page["next_offset"].as_u64().map(|n| n as usize);
        }
        assert_eq!(read, text);
    }

    #[test]
    fn another_caller_or_an_unknown_handle_is_not_found() {
        let kept = Continuations::default();
        let handle = kept.keep(Some("alice"), "t", items(3, 1), 100).unwrap();
        for (handle, owner) in [(handle.as_str(), Some("mallory")), (handle.as_str(), None), ("nope", Some("alice"))] {
            let error = kept.page(handle, owner, 0, 4096).unwrap_err();
            assert!(error.to_string().starts_with("not found: no cut result"), "{error}");
        }
    }

    #[test]
    fn memory_stays_bounded_oldest_first() {
        let kept = Continuations::default();
        let first = kept.keep(None, "t", Body::Text(String::new()), MAX_KEPT_BYTES / 2).unwrap();
        let second = kept.keep(None, "t", Body::Text(String::new()), MAX_KEPT_BYTES / 2).unwrap();
        let third = kept.keep(None, "t", Body::Text(String::new()), MAX_KEPT_BYTES / 2).unwrap();
        assert!(kept.page(&first, None, 0, 4096).is_err(), "the oldest made room");
        assert!(kept.page(&second, None, 0, 4096).is_ok() && kept.page(&third, None, 0, 4096).is_ok());
        assert_eq!(kept.stats(), (2, MAX_KEPT_BYTES));
        assert!(kept.keep(None, "t", Body::Text(String::new()), MAX_KEPT_BYTES + 1).is_none(), "too large alone");
        for _ in 0..MAX_KEPT + 10 {
            kept.keep(None, "t", Body::Text(String::new()), 1);
        }
        assert_eq!(kept.stats().0, MAX_KEPT);
    }

    #[test]
    fn an_item_over_the_whole_bound_is_named_and_skipped() {
        let kept = Continuations::default();
        let body = Body::Items(vec![json!("x".repeat(5000)), json!(1)]);
        let handle = kept.keep(None, "t", body, 5010).unwrap();
        let page = kept.page(&handle, None, 0, 1024).unwrap();
        assert_eq!((page["skipped"]["item"].as_u64(), page["next_offset"].as_u64()), (Some(0), Some(1)));
        assert_eq!(kept.page(&handle, None, 1, 1024).unwrap()["items"], json!([1]));
    }
}
