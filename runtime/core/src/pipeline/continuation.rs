//! Continuations: what a result cut at `[mcp] max_result_bytes` left out, kept so the model can
//! page through it with `trails_result_read {handle, offset}` (the PDPP rule that a cut result
//! says how to get the rest). Kept in memory, bounded in bytes, entries and time, per caller and
//! in all: a handle is a random UUID (122 bits), read only by the caller that made the call (the
//! token's name; anonymous callers are one caller), and gone after [`TTL`] or when newer results
//! need the room — the caller's own oldest first, so no caller can push out another's.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::auth::Scope;
use crate::ctx::Ctx;
use crate::error::{Error, Result};

/// How long a cut result stays readable.
pub const TTL: Duration = Duration::from_secs(600);
/// Bytes of cut results kept at once (the oldest go first when a new one needs the room).
pub const MAX_KEPT_BYTES: usize = 64 << 20;
/// Cut results kept at once.
pub const MAX_KEPT: usize = 256;
/// Of which one caller may hold (entries, bytes).
const PER_CALLER: (usize, usize) = (MAX_KEPT / 4, MAX_KEPT_BYTES / 4);
/// What an item costs beyond its JSON text (its boxed string and the list's slot).
const ITEM_OVERHEAD: usize = 32;
/// The tool that reads them.
pub const READ_TOOL: &str = "trails_result_read";

/// What was cut: the items of a list result (each its JSON text), or the text of any other.
#[derive(Debug)]
pub(crate) enum Body {
    Items(Vec<Box<str>>),
    Text(String),
}

impl Body {
    /// The items of a list, kept as their JSON text (a `Value` per item costs many times that).
    pub(crate) fn items(items: &[Value]) -> Body {
        Body::Items(items.iter().map(|item| item.to_string().into_boxed_str()).collect())
    }

    /// The memory it holds.
    fn bytes(&self) -> usize {
        match self {
            Body::Items(items) => items.iter().map(|item| item.len() + ITEM_OVERHEAD).sum(),
            Body::Text(text) => text.len(),
        }
    }
}

/// Whose result it is, as the call that made it was authorised: only they read its continuation,
/// and only while their token still grants the tool's scope.
pub(crate) struct Owner<'a> {
    pub(crate) caller: Option<&'a str>,
    pub(crate) client: Option<&'a str>,
    pub(crate) tool: &'static str,
    pub(crate) scope: Scope,
}

struct Kept {
    owner: Option<String>,
    /// The OAuth client the caller's token was issued to: a token of the same subject issued to
    /// another application does not read it.
    client: Option<String>,
    tool: &'static str,
    /// The scope `tool` needs: a caller whose current token no longer grants it reads nothing.
    scope: Scope,
    body: Arc<Body>,
    bytes: usize,
    at: Instant,
}

#[derive(Default)]
struct Inner {
    kept: HashMap<String, Kept>,
    /// Handles, oldest first.
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
        let (kept, bytes) = self.stats();
        f.debug_struct("Continuations").field("kept", &kept).field("bytes", &bytes).finish()
    }
}

impl Continuations {
    /// Keep `body` of `owner.tool`'s result for `owner`: its handle, or `None` when it alone is
    /// over what one caller may hold.
    pub(crate) fn keep(&self, holder: &Owner<'_>, body: Body) -> Option<String> {
        let (owner, tool) = (holder.caller, holder.tool);
        let bytes = body.bytes();
        if bytes > PER_CALLER.1 {
            return None;
        }
        let handle = uuid::Uuid::new_v4().simple().to_string();
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        inner.expire(now);
        // The caller's own oldest make room first; then anyone's, within the whole bound.
        loop {
            let (count, held) = inner.held_by(owner);
            if (count < PER_CALLER.0 && held + bytes <= PER_CALLER.1) || !inner.evict_oldest_of(Some(owner)) {
                break;
            }
        }
        while (inner.bytes + bytes > MAX_KEPT_BYTES || inner.kept.len() >= MAX_KEPT) && inner.evict_oldest_of(None) {}
        inner.bytes += bytes;
        inner.order.push_back(handle.clone());
        let kept = Kept {
            owner: owner.map(str::to_owned),
            client: holder.client.map(str::to_owned),
            tool,
            scope: holder.scope,
            body: Arc::new(body),
            bytes,
            at: now,
        };
        inner.kept.insert(handle.clone(), kept);
        Some(handle)
    }

    /// The page of `handle` from `offset` (an item index for a list, a byte offset for text),
    /// at most `max` bytes of JSON text, for the caller of `ctx` as it is now: another caller's
    /// handle (or one made through another OAuth client) reads as unknown, and one whose tool
    /// needs a scope the caller's current token lacks is refused.
    pub fn page(&self, handle: &str, ctx: &Ctx, offset: usize, max: usize) -> Result<Value> {
        let (tool, body) = {
            let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            inner.expire(Instant::now());
            let theirs = |kept: &&Kept| kept.owner.as_deref() == ctx.caller() && kept.client.as_deref() == ctx.client();
            match inner.kept.get(handle).filter(theirs) {
                Some(kept) if !ctx.scopes().contains(kept.scope) => {
                    return Err(Error::policy_denied(format!(
                        "this cut result came from {}, which needs the `{}` scope; this caller's token no longer \
                         grants it, so the rest is not shown",
                        kept.tool,
                        kept.scope.as_str()
                    )))
                }
                Some(kept) => (kept.tool, kept.body.clone()),
                None => {
                    return Err(Error::not_found(format!(
                        "no cut result `{}` for this caller: it expired ({} minutes after its call) or made room for \
                         newer ones; call the tool again (with a new idempotency key if the result was a replay)",
                        crate::validate::echo_name(handle),
                        TTL.as_secs() / 60
                    )))
                }
            }
        };
        // Built outside the lock: a page may be as large as the bound.
        Ok(match &*body {
            Body::Items(items) => items_page(handle, tool, items, offset, max),
            Body::Text(text) => text_page(handle, tool, text, offset, max),
        })
    }

    /// Cut results kept now, and the bytes they hold (`trails://stats`).
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
                    self.evict_oldest_of(None);
                }
            }
        }
    }

    /// What `owner` holds: entries and bytes.
    fn held_by(&self, owner: Option<&str>) -> (usize, usize) {
        self.kept
            .values()
            .filter(|kept| kept.owner.as_deref() == owner)
            .fold((0, 0), |(count, bytes), kept| (count + 1, bytes + kept.bytes))
    }

    /// Drop the oldest entry (of `owner`, when given); false when there is none.
    fn evict_oldest_of(&mut self, owner: Option<Option<&str>>) -> bool {
        let position = match owner {
            None => (!self.order.is_empty()).then_some(0),
            Some(owner) => self.order.iter().position(|handle| self.kept[handle].owner.as_deref() == owner),
        };
        let Some(handle) = position.and_then(|at| self.order.remove(at)) else { return false };
        let kept = self.kept.remove(&handle).expect("every ordered handle is kept");
        self.bytes -= kept.bytes;
        true
    }
}

fn next_call(handle: &str, offset: Option<usize>) -> Value {
    match offset {
        Some(offset) => json!({ "tool": READ_TOOL, "arguments": { "handle": handle, "offset": offset } }),
        None => Value::Null,
    }
}

/// Bytes a page's members other than its items or text take, with the largest offsets.
fn envelope(handle: &str, tool: &str, total: usize) -> usize {
    let page = json!({
        "handle": handle, "tool": tool, "kind": "items", "offset": total, "total": total, "items": [],
        "next_offset": total, "next_call": next_call(handle, Some(total)),
        "skipped": { "item": total, "bytes": usize::MAX },
    });
    page.to_string().len()
}

/// The items from `offset` that fit `max` with the page around them (at least one, or the one
/// that cannot fit, named and skipped: it is larger than any result this server sends).
fn items_page(handle: &str, tool: &str, items: &[Box<str>], offset: usize, max: usize) -> Value {
    let total = items.len();
    let budget = max.saturating_sub(envelope(handle, tool, total));
    let start = offset.min(total);
    let mut used: usize = 0;
    let mut shown = Vec::new();
    let mut skipped = None;
    for (index, item) in items.iter().enumerate().skip(start) {
        if used + item.len() + 1 > budget {
            if shown.is_empty() {
                skipped = Some(json!({ "item": index, "bytes": item.len() }));
            }
            break;
        }
        used += item.len() + 1;
        shown.push(serde_json::from_str::<Value>(item).unwrap_or(Value::Null));
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

/// The bytes of `text` from `offset` that fit `max` with the page around them, escaped as a JSON
/// string, cut at character boundaries (at least one character, so paging always advances).
fn text_page(handle: &str, tool: &str, text: &str, offset: usize, max: usize) -> Value {
    let total = text.len();
    let budget = max.saturating_sub(envelope(handle, tool, total));
    let mut start = offset.min(total);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = start;
    let mut used = 0;
    for (index, ch) in text[start..].char_indices() {
        let escaped = match ch {
            '"' | '\\' | '\n' | '\r' | '\t' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        };
        if used + escaped > budget && end > start {
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
        Body::items(&(0..n).map(|i| json!({ "n": i, "pad": "x".repeat(pad) })).collect::<Vec<_>>())
    }

    fn text(bytes: usize) -> Body {
        Body::Text("x".repeat(bytes))
    }

    fn owner(caller: Option<&str>) -> Owner<'_> {
        Owner { caller, client: None, tool: "t", scope: Scope::Runtime }
    }

    /// A call of `caller` with every scope.
    fn by(caller: Option<&str>) -> Ctx {
        Ctx::new("trace", caller.map(str::to_owned), crate::auth::ScopeSet::up_to(Scope::Dev))
    }

    #[test]
    fn a_list_is_read_to_its_end_in_pages_that_fit() {
        let kept = Continuations::default();
        let handle = kept.keep(&owner(Some("alice")), items(100, 90)).unwrap();
        let (mut offset, mut seen) = (Some(0), Vec::new());
        while let Some(from) = offset {
            let page = kept.page(&handle, &by(Some("alice")), from, 2048).unwrap();
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
        let handle = kept.keep(&owner(None), Body::Text(text.clone())).unwrap();
        let (mut offset, mut read) = (Some(0), String::new());
        while let Some(from) = offset {
            let page = kept.page(&handle, &by(None), from, 1024).unwrap();
            assert!(page.to_string().len() <= 1024);
            read.push_str(page["text"].as_str().unwrap());
            offset = page["next_offset"].as_u64().map(|n| n as usize);
        }
        assert_eq!(read, text);
        // However small the page, it advances.
        let page = kept.page(&handle, &by(None), 0, 1).unwrap();
        assert_eq!(page["next_offset"], 2, "one character: {page}");
    }

    #[test]
    fn another_caller_or_an_unknown_handle_is_not_found() {
        let kept = Continuations::default();
        let handle = kept.keep(&owner(Some("alice")), items(3, 1)).unwrap();
        for (handle, owner) in [(handle.as_str(), Some("mallory")), (handle.as_str(), None), ("nope", Some("alice"))] {
            let error = kept.page(handle, &by(owner), 0, 4096).unwrap_err();
            assert!(error.to_string().starts_with("not found: no cut result"), "{error}");
        }
    }

    #[test]
    fn each_read_is_rechecked_against_the_callers_current_token() {
        let kept = Continuations::default();
        let holder = Owner { caller: Some("alice"), client: Some("host"), tool: "t", scope: Scope::Builder };
        let handle = kept.keep(&holder, items(3, 1)).unwrap();
        let alice = |client: Option<&str>, scopes: crate::auth::ScopeSet| {
            Ctx::new("trace", Some("alice".to_owned()), scopes).with_client(client.map(str::to_owned))
        };
        let all = crate::auth::ScopeSet::up_to(Scope::Dev);
        assert!(kept.page(&handle, &alice(Some("host"), all), 0, 4096).is_ok());
        // The same subject through another application's token: as if there were none.
        let other = kept.page(&handle, &alice(Some("other-app"), all), 0, 4096).unwrap_err();
        assert!(other.to_string().starts_with("not found: no cut result"), "{other}");
        // Her token no longer grants the tool's scope: refused, naming it.
        let narrowed = kept.page(&handle, &alice(Some("host"), crate::auth::ScopeSet::up_to(Scope::Runtime)), 0, 4096);
        let narrowed = narrowed.unwrap_err();
        assert!(matches!(narrowed, Error::PolicyDenied(_)), "{narrowed:?}");
        assert!(narrowed.to_string().contains("needs the `builder` scope"), "{narrowed}");
    }

    #[test]
    fn memory_stays_bounded_and_one_caller_cannot_push_out_another() {
        let kept = Continuations::default();
        let quarter = MAX_KEPT_BYTES / 4;
        let bob = kept.keep(&owner(Some("bob")), text(quarter / 2)).unwrap();
        let first = kept.keep(&owner(Some("alice")), text(quarter / 2)).unwrap();
        let second = kept.keep(&owner(Some("alice")), text(quarter / 2)).unwrap();
        let third = kept.keep(&owner(Some("alice")), text(quarter / 2)).unwrap();
        assert!(kept.page(&first, &by(Some("alice")), 0, 4096).is_err(), "alice's oldest made room for her newest");
        assert!(
            kept.page(&second, &by(Some("alice")), 0, 4096).is_ok()
                && kept.page(&third, &by(Some("alice")), 0, 4096).is_ok()
        );
        for _ in 0..MAX_KEPT {
            kept.keep(&owner(Some("alice")), text(1));
        }
        assert!(kept.page(&bob, &by(Some("bob")), 0, 4096).is_ok(), "bob's result outlived alice's flood");
        assert!(kept.keep(&owner(None), text(quarter + 1)).is_none(), "too large for one caller");
        // Across callers, the whole stays within its bounds, oldest dropped first.
        for caller in 0..MAX_KEPT {
            kept.keep(&owner(Some(&caller.to_string())), text(quarter / 2));
        }
        let (count, bytes) = kept.stats();
        assert!(count <= MAX_KEPT && bytes <= MAX_KEPT_BYTES, "{count} results, {bytes} bytes");
        assert!(kept.page(&bob, &by(Some("bob")), 0, 4096).is_err(), "the oldest went first");
    }

    #[test]
    fn an_item_over_the_whole_bound_is_named_and_skipped() {
        let kept = Continuations::default();
        let handle = kept.keep(&owner(None), Body::items(&[json!("x".repeat(5000)), json!(1)])).unwrap();
        let page = kept.page(&handle, &by(None), 0, 1024).unwrap();
        assert_eq!((page["skipped"]["item"].as_u64(), page["next_offset"].as_u64()), (Some(0), Some(1)));
        assert_eq!(kept.page(&handle, &by(None), 1, 1024).unwrap()["items"], json!([1]));
    }
}
