//! Continuations: what a result cut to the window (`[mcp] tool_window_chars`) left out, kept so
//! the model can page through it with `trails_result_read {handle, offset}` or read one item
//! whole with `{handle, item}` (the PDPP rule that a cut result says how to get the rest). Every
//! page fits the same window and says what it left out in `cut` and how to go on in `next_call`,
//! the vocabulary of the `trails_kg_*` tools. Kept in memory, bounded in bytes, entries and time,
//! per caller and in all: a handle is a random UUID (122 bits), read only by the caller that made
//! the call (the token's name and OAuth client), and gone after [`TTL`] or when newer results
//! need the room — the caller's own oldest first, so no caller can push out another's.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::card::{card, parse_roles};
use crate::auth::Scope;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::validate::{FieldCode, FieldError};

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

/// What was cut: the items of a list result (each its JSON text; with their evidence cards when
/// the list is shown as cards), or the text of any other.
#[derive(Debug)]
pub(crate) enum Body {
    Items {
        items: Vec<Box<str>>,
        /// Each item's card (`{"item": n, …}`), when the list is shown as cards.
        cards: Option<Vec<Box<str>>>,
        /// Characters of what a page shows of each item: its card, or itself.
        chars: Vec<usize>,
    },
    Text(String),
}

/// A list is shown as cards when its items are, in all, more than this many times the size of
/// their cards: cards are for large instances, not for ones about as small as their cards.
const CARDS_WHEN_ITEMS_ARE: usize = 2;

impl Body {
    /// The items of a list, kept as their JSON text (a `Value` per item costs many times that);
    /// `roles` as `Shape::DISPLAY_ROLES` writes them. Cards are made once, here, and kept when
    /// most say something (a label, an excerpt…) and the items are much larger.
    pub(crate) fn items(items: &[Value], roles: &str) -> Body {
        let texts: Vec<Box<str>> = items.iter().map(|item| item.to_string().into_boxed_str()).collect();
        let roles = parse_roles(roles);
        let cards = (!roles.is_empty())
            .then(|| {
                let mut telling = 0;
                let cards: Vec<Box<str>> = items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| {
                        let shown = card(&roles, item);
                        telling += usize::from(!shown.is_empty());
                        let mut entry = Map::from_iter([("item".to_owned(), json!(index))]);
                        entry.extend(shown);
                        Value::Object(entry).to_string().into_boxed_str()
                    })
                    .collect();
                let whole: usize = texts.iter().map(|text| text.len()).sum();
                let small: usize = cards.iter().map(|card| card.len()).sum();
                (2 * telling >= cards.len() && whole > CARDS_WHEN_ITEMS_ARE * small).then_some(cards)
            })
            .flatten();
        let chars = cards.as_deref().unwrap_or(&texts).iter().map(|text| text.chars().count()).collect();
        Body::Items { items: texts, cards, chars }
    }

    /// The memory it holds.
    fn bytes(&self) -> usize {
        match self {
            Body::Items { items, cards, .. } => {
                let cards: usize = cards.iter().flatten().map(|card| card.len() + ITEM_OVERHEAD).sum();
                // Each item: its text, its slot, its character count.
                items.iter().map(|item| item.len() + ITEM_OVERHEAD + 8).sum::<usize>() + cards
            }
            Body::Text(text) => text.len(),
        }
    }
}

/// Where a read of a kept result starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// An item index for a list, a byte offset for text.
    Offset(usize),
    /// One item of a list, whole; its JSON text from byte `offset` when it is larger than the
    /// window.
    Item {
        /// Its index.
        item: usize,
        /// Where in its JSON text.
        offset: usize,
    },
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
    /// Keep `body` of `owner.tool`'s result for `owner`: its handle and the body as kept, or
    /// the body back when it alone is over what one caller may hold.
    pub(crate) fn keep(&self, holder: &Owner<'_>, body: Body) -> std::result::Result<(String, Arc<Body>), Body> {
        let (owner, tool) = (holder.caller, holder.tool);
        let bytes = body.bytes();
        if bytes > PER_CALLER.1 {
            return Err(body);
        }
        let body = Arc::new(body);
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
            body: body.clone(),
            bytes,
            at: now,
        };
        inner.kept.insert(handle.clone(), kept);
        Ok((handle, body))
    }

    /// The page of `handle` from `at`, at most `window` characters of JSON text, for the caller
    /// of `ctx` as it is now: another caller's handle (or one made through another OAuth client)
    /// reads as unknown, and one whose tool needs a scope the caller's current token lacks is
    /// refused.
    pub fn page(&self, handle: &str, ctx: &Ctx, at: At, window: usize) -> Result<Value> {
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
        // An offset past the end is refused, as an item past it is: a page there would be empty.
        let end = match &*body {
            Body::Items { items, .. } => items.len(),
            Body::Text(text) => text.len(),
        };
        if let At::Offset(offset) = at {
            if offset > end {
                let message =
                    format!("offset {offset} is past the result's end ({end}): follow next_call from the start");
                return Err(FieldError::refuse("offset", FieldCode::MaxValue, message, &json!(offset), json!(end)));
            }
        }
        // Built outside the lock: a page may be as large as the bound.
        match (&*body, at) {
            (list @ Body::Items { .. }, At::Offset(offset)) => Ok(list_read(handle, tool, list, offset, window)),
            (Body::Items { items, .. }, At::Item { item, offset }) => {
                item_read(handle, tool, items, item, offset, window)
            }
            (Body::Text(text), At::Offset(offset)) => Ok(text_read(handle, tool, text, offset, None, window)),
            (Body::Text(_), At::Item { item, .. }) => Err(FieldError::refuse(
                "item",
                FieldCode::Type,
                "this cut result is text, not a list: read it by offset alone",
                &json!(item),
                json!(null),
            )),
        }
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

/// The call that reads `handle` from `at`, or null at the end.
fn read_call(handle: &str, at: Option<At>) -> Value {
    match at {
        None => Value::Null,
        Some(At::Offset(offset)) => json!({ "tool": READ_TOOL, "arguments": { "handle": handle, "offset": offset } }),
        Some(At::Item { item, offset: 0 }) => {
            json!({ "tool": READ_TOOL, "arguments": { "handle": handle, "item": item } })
        }
        Some(At::Item { item, offset }) => {
            json!({ "tool": READ_TOOL, "arguments": { "handle": handle, "item": item, "offset": offset } })
        }
    }
}

/// Characters of `value`'s JSON text: what the window counts.
pub(crate) fn chars(value: &Value) -> usize {
    value.to_string().chars().count()
}

/// The body `render` makes with the most room for its entries that keeps it within `window`
/// (`render(room)` fills at most `room` characters and says how many it used; the envelope
/// around them is what is left). Each try that is over gives up what it went over by, from what
/// it used, so a few tries find it. A body whose envelope alone is over the window is returned
/// with no room: it says so itself.
fn fit(window: usize, render: impl Fn(usize) -> (Value, usize)) -> Value {
    let mut room = window;
    loop {
        let (body, used) = render(room);
        let over = chars(&body).saturating_sub(window);
        if over == 0 || room == 0 {
            return body;
        }
        room = room.min(used).saturating_sub(over);
    }
}

/// What of a kept list one page shows from `start`: the items whole, or, when the list is shown
/// as cards, their cards (each naming its `item`), as many as fit in `room` characters.
struct ListPage {
    entries: Vec<Value>,
    cards: bool,
    start: usize,
    total: usize,
    /// Characters the entries take, with a comma each.
    used: usize,
    /// Characters of the entry at `start` when it does not fit the page.
    stuck: Option<usize>,
    next: Option<At>,
}

fn list_page(list: &Body, start: usize, room: usize) -> ListPage {
    let Body::Items { items, cards, chars } = list else { unreachable!("a list page is of a list") };
    let shown = cards.as_deref().unwrap_or(items);
    let total = items.len();
    let start = start.min(total);
    let (mut used, mut end) = (0, start);
    while end < total && used + chars[end] < room {
        used += chars[end] + 1;
        end += 1;
    }
    // Only what is shown is parsed.
    let entries = shown[start..end].iter().map(|text| serde_json::from_str(text).unwrap_or(Value::Null)).collect();
    let stuck = (end == start && start < total).then(|| chars[start]);
    let next = match stuck {
        Some(_) => Some(At::Item { item: start, offset: 0 }),
        None => (end < total).then_some(At::Offset(end)),
    };
    ListPage { entries, cards: cards.is_some(), start, total, used, stuck, next }
}

impl ListPage {
    /// What the page shows and leaves out, in a sentence (the `cut` of every list page); `handle`
    /// is `None` when the result could not be kept.
    fn cut(&self, handle: Option<&str>) -> String {
        let (start, total, shown) = (self.start, self.total, self.entries.len());
        if let Some(chars) = self.stuck {
            return match handle {
                Some(_) => format!(
                    "{total} items; item {start} ({chars} characters) does not fit this page: next_call reads it, then \
                     the items after it"
                ),
                None => format!("{total} items; item {start} ({chars} characters) does not fit the window"),
            };
        }
        let range = match shown {
            0 => return format!("{total} items; none from item {start}"),
            1 => format!("item {start}"),
            _ => format!("items {start} to {}", start + shown - 1),
        };
        let how = match (self.cards, handle) {
            (true, Some(handle)) => format!(
                " as evidence cards (read one whole with {READ_TOOL} {})",
                json!({ "handle": handle, "item": start })
            ),
            (true, None) => " as evidence cards".to_owned(),
            (false, _) => String::new(),
        };
        let then = match (self.next, handle) {
            (None, _) => "; no more",
            (Some(_), Some(_)) => "; next_call reads on",
            (Some(_), None) => NOT_KEPT,
        };
        format!("{total} items: {range} shown{how}{then}")
    }

    /// The page as a cut result carries it in its structured content (its tool's list
    /// `outputSchema`: `items`, and `cards`, `total`, `cut`, `next_call`).
    fn first(&self, handle: Option<&str>) -> Value {
        let next_call = handle.map_or(Value::Null, |handle| read_call(handle, self.next));
        let mut body = json!({ "items": [], "total": self.total, "cut": self.cut(handle), "next_call": next_call });
        body[if self.cards { "cards" } else { "items" }] = json!(self.entries);
        body
    }
}

/// What a cut result says when it was too large to keep.
pub(crate) const NOT_KEPT: &str = "; the whole result is too large to keep for paging (over 16 MiB): ask for less";
const _: () = assert!(PER_CALLER.1 == 16 << 20, "NOT_KEPT names the bound");

/// A cut list's first page as its result carries it (`handle`: where the rest is kept).
pub(crate) fn first_list(handle: Option<&str>, list: &Body, window: usize) -> Value {
    fit(window, |room| {
        let page = list_page(list, 0, room);
        (page.first(handle), page.used)
    })
}

/// A `trails_result_read` page of a list from item `offset`.
fn list_read(handle: &str, tool: &str, list: &Body, offset: usize, window: usize) -> Value {
    fit(window, |room| {
        let page = list_page(list, offset, room);
        let next_offset = match page.next {
            Some(At::Offset(next)) => json!(next),
            _ => Value::Null,
        };
        let kind = if page.cards { "cards" } else { "items" };
        let body = json!({
            "handle": handle, "tool": tool, "kind": kind, "offset": page.start, "total": page.total,
            kind: page.entries, "cut": page.cut(Some(handle)), "next_offset": next_offset,
            "next_call": read_call(handle, page.next),
        });
        (body, page.used)
    })
}

/// Item `item` of a list, whole when it fits the window, else its JSON text from `offset`; the
/// page after its end reads on through the list.
fn item_read(handle: &str, tool: &str, items: &[Box<str>], item: usize, offset: usize, window: usize) -> Result<Value> {
    let total = items.len();
    let Some(text) = items.get(item) else {
        return Err(FieldError::refuse(
            "item",
            FieldCode::MaxValue,
            format!("item {item} is past the result's end: it has {total} items, 0 to {}", total.saturating_sub(1)),
            &json!(item),
            json!(total.saturating_sub(1)),
        ));
    };
    let after = (item + 1 < total).then_some(At::Offset(item + 1));
    if offset == 0 {
        let then = if after.is_some() { "next_call reads the items after it" } else { "no more" };
        let whole = json!({
            "handle": handle, "tool": tool, "kind": "items", "offset": item, "total": total,
            "items": [serde_json::from_str::<Value>(text).unwrap_or(Value::Null)],
            "cut": format!("{total} items: item {item} shown whole; {then}"),
            "next_offset": after.map(|_| item + 1), "next_call": read_call(handle, after),
        });
        if chars(&whole) <= window {
            return Ok(whole);
        }
    }
    Ok(text_read(handle, tool, text, offset, Some((item, after)), window))
}

/// Characters `ch` takes in a JSON string.
fn escaped(ch: char) -> usize {
    match ch {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        _ => 1,
    }
}

/// The first characters of `text` from byte `start` (moved back to a character boundary) whose
/// escaped form takes at most `room` characters — at least one, so paging always advances: the
/// byte range, and the characters it takes.
fn text_range(text: &str, start: usize, room: usize) -> (usize, usize, usize) {
    let mut start = start.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let (mut end, mut used) = (start, 0);
    for (index, ch) in text[start..].char_indices() {
        if used + escaped(ch) > room && end > start {
            break;
        }
        used += escaped(ch);
        end = start + index + ch.len_utf8();
    }
    (start, end, used)
}

/// A page of text from byte `offset`: a kept text result's, or (`item`: its index and what
/// follows it) one item's JSON text.
fn text_read(
    handle: &str,
    tool: &str,
    text: &str,
    offset: usize,
    item: Option<(usize, Option<At>)>,
    window: usize,
) -> Value {
    fit(window, |room| {
        let (start, end, used) = text_range(text, offset, room);
        let more = end < text.len();
        let next = match item {
            _ if more => Some(match item {
                Some((item, _)) => At::Item { item, offset: end },
                None => At::Offset(end),
            }),
            Some((_, after)) => after,
            None => None,
        };
        let what = match item {
            Some((item, _)) => format!("item {item}'s JSON text, bytes {start} to {end} of {}", text.len()),
            None => format!("bytes {start} to {end} of {} of the text", text.len()),
        };
        let then = match (more, next) {
            (true, _) => "next_call reads on",
            (false, Some(_)) => "next_call reads the items after it",
            (false, None) => "no more",
        };
        // `next_offset` is where a read by `offset` alone goes on: not within one item's text.
        let next_offset = (more && item.is_none()).then_some(end);
        let mut page = json!({
            "handle": handle, "tool": tool, "kind": "text", "offset": start, "total": text.len(),
            "text": &text[start..end], "cut": format!("{what} shown; {then}"), "next_offset": next_offset,
            "next_call": read_call(handle, next),
        });
        if let Some((item, _)) = item {
            page["item"] = json!(item);
        }
        (page, used)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize, pad: usize) -> Body {
        Body::items(&(0..n).map(|i| json!({ "n": i, "pad": "x".repeat(pad) })).collect::<Vec<_>>(), "")
    }

    fn kept(kept: &Continuations, owner: Owner<'_>, body: Body) -> String {
        kept.keep(&owner, body).expect("kept").0
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
        let kept_results = Continuations::default();
        let handle = kept(&kept_results, owner(Some("alice")), items(100, 90));
        let (mut offset, mut seen) = (Some(0), Vec::new());
        while let Some(from) = offset {
            let page = kept_results.page(&handle, &by(Some("alice")), At::Offset(from), 2048).unwrap();
            assert!(chars(&page) <= 2048, "{} characters", chars(&page));
            seen.extend(page["items"].as_array().unwrap().iter().map(|item| item["n"].as_u64().unwrap()));
            offset = page["next_offset"].as_u64().map(|n| n as usize);
            if let Some(next) = offset {
                assert_eq!(page["next_call"]["arguments"]["offset"], json!(next));
                assert!(page["cut"].as_str().unwrap().ends_with("next_call reads on"), "{page}");
            }
        }
        assert_eq!(seen, (0..100).collect::<Vec<u64>>(), "every item once, in order");
    }

    #[test]
    fn text_is_read_whole_across_pages_with_escapes_and_multibyte_characters() {
        let text: String = "é\"\n".repeat(3000);
        let results = Continuations::default();
        let handle = kept(&results, owner(None), Body::Text(text.clone()));
        let (mut offset, mut read) = (Some(0), String::new());
        while let Some(from) = offset {
            let page = results.page(&handle, &by(None), At::Offset(from), 1024).unwrap();
            assert!(chars(&page) <= 1024);
            read.push_str(page["text"].as_str().unwrap());
            offset = page["next_offset"].as_u64().map(|n| n as usize);
        }
        assert_eq!(read, text);
        // However small the page, it advances.
        let page = results.page(&handle, &by(None), At::Offset(0), 1).unwrap();
        assert_eq!(page["next_offset"], 2, "one character: {page}");
    }

    #[test]
    fn another_caller_or_an_unknown_handle_is_not_found() {
        let results = Continuations::default();
        let handle = kept(&results, owner(Some("alice")), items(3, 1));
        for (handle, owner) in [(handle.as_str(), Some("mallory")), (handle.as_str(), None), ("nope", Some("alice"))] {
            let error = results.page(handle, &by(owner), At::Offset(0), 4096).unwrap_err();
            assert!(error.to_string().starts_with("not found: no cut result"), "{error}");
        }
    }

    #[test]
    fn each_read_is_rechecked_against_the_callers_current_token() {
        let results = Continuations::default();
        let holder = Owner { caller: Some("alice"), client: Some("host"), tool: "t", scope: Scope::Builder };
        let handle = kept(&results, holder, items(3, 1));
        let kept = results;
        let alice = |client: Option<&str>, scopes: crate::auth::ScopeSet| {
            Ctx::new("trace", Some("alice".to_owned()), scopes).with_client(client.map(str::to_owned))
        };
        let all = crate::auth::ScopeSet::up_to(Scope::Dev);
        assert!(kept.page(&handle, &alice(Some("host"), all), At::Offset(0), 4096).is_ok());
        // The same subject through another application's token: as if there were none.
        let other = kept.page(&handle, &alice(Some("other-app"), all), At::Offset(0), 4096).unwrap_err();
        assert!(other.to_string().starts_with("not found: no cut result"), "{other}");
        // Her token no longer grants the tool's scope: refused, naming it.
        let narrowed =
            kept.page(&handle, &alice(Some("host"), crate::auth::ScopeSet::up_to(Scope::Runtime)), At::Offset(0), 4096);
        let narrowed = narrowed.unwrap_err();
        assert!(matches!(narrowed, Error::PolicyDenied(_)), "{narrowed:?}");
        assert!(narrowed.to_string().contains("needs the `builder` scope"), "{narrowed}");
    }

    #[test]
    fn memory_stays_bounded_and_one_caller_cannot_push_out_another() {
        let kept = Continuations::default();
        let quarter = MAX_KEPT_BYTES / 4;
        let bob = kept.keep(&owner(Some("bob")), text(quarter / 2)).unwrap().0;
        let first = kept.keep(&owner(Some("alice")), text(quarter / 2)).unwrap().0;
        let second = kept.keep(&owner(Some("alice")), text(quarter / 2)).unwrap().0;
        let third = kept.keep(&owner(Some("alice")), text(quarter / 2)).unwrap().0;
        assert!(
            kept.page(&first, &by(Some("alice")), At::Offset(0), 4096).is_err(),
            "alice's oldest made room for her newest"
        );
        assert!(
            kept.page(&second, &by(Some("alice")), At::Offset(0), 4096).is_ok()
                && kept.page(&third, &by(Some("alice")), At::Offset(0), 4096).is_ok()
        );
        for _ in 0..MAX_KEPT {
            let _ = kept.keep(&owner(Some("alice")), text(1));
        }
        assert!(kept.page(&bob, &by(Some("bob")), At::Offset(0), 4096).is_ok(), "bob's result outlived alice's flood");
        assert!(kept.keep(&owner(None), text(quarter + 1)).is_err(), "too large for one caller");
        // Across callers, the whole stays within its bounds, oldest dropped first.
        for caller in 0..MAX_KEPT {
            let _ = kept.keep(&owner(Some(&caller.to_string())), text(quarter / 2));
        }
        let (count, bytes) = kept.stats();
        assert!(count <= MAX_KEPT && bytes <= MAX_KEPT_BYTES, "{count} results, {bytes} bytes");
        assert!(kept.page(&bob, &by(Some("bob")), At::Offset(0), 4096).is_err(), "the oldest went first");
    }

    #[test]
    fn an_item_larger_than_the_window_is_read_as_text_and_the_list_goes_on_after_it() {
        let results = Continuations::default();
        let big = "x".repeat(5000);
        let handle = kept(&results, owner(None), Body::items(&[json!(big), json!(1)], ""));
        let page = results.page(&handle, &by(None), At::Offset(0), 1024).unwrap();
        assert_eq!(page["items"], json!([]), "{page}");
        assert!(page["cut"].as_str().unwrap().contains("item 0 (5002 characters) does not fit this page"));
        let (mut next, mut text) = (page["next_call"].clone(), String::new());
        while next["arguments"].get("item").is_some() {
            let at = At::Item {
                item: next["arguments"]["item"].as_u64().unwrap() as usize,
                offset: next["arguments"]["offset"].as_u64().unwrap_or(0) as usize,
            };
            let page = results.page(&handle, &by(None), at, 1024).unwrap();
            assert!(chars(&page) <= 1024, "{}", chars(&page));
            text.push_str(page["text"].as_str().unwrap());
            next = page["next_call"].clone();
        }
        assert_eq!(text, json!(big).to_string(), "the item's JSON text, whole");
        assert_eq!(next["arguments"], json!({ "handle": handle, "offset": 1 }), "then the list goes on");
        assert_eq!(results.page(&handle, &by(None), At::Offset(1), 1024).unwrap()["items"], json!([1]));
        let past = results.page(&handle, &by(None), At::Item { item: 2, offset: 0 }, 1024).unwrap_err();
        assert!(format!("{past:?}").contains("it has 2 items"), "{past:?}");
        let past = results.page(&handle, &by(None), At::Offset(3), 1024).unwrap_err();
        assert!(format!("{past:?}").contains("offset 3 is past the result's end (2)"), "{past:?}");
    }

    #[test]
    fn items_with_display_roles_page_as_cards_each_read_whole_by_its_item() {
        let results = Continuations::default();
        let people: Vec<Value> = (0..50)
            .map(|n| json!({ "name": format!("person {n}"), "email": format!("p{n}@x.org"), "bio": "b".repeat(300) }))
            .collect();
        let handle = kept(&results, owner(None), Body::items(&people, r#""title":"name""#));
        let page = results.page(&handle, &by(None), At::Offset(0), 1024).unwrap();
        assert_eq!(page["kind"], "cards");
        let cards = page["cards"].as_array().unwrap();
        assert!(cards.len() > 5, "cards are small: {}", cards.len());
        assert_eq!(cards[3], json!({ "item": 3, "label": "person 3" }));
        assert!(
            page["cut"].as_str().unwrap().contains(r#"read one whole with trails_result_read {"handle""#),
            "{page}"
        );
        let whole = results.page(&handle, &by(None), At::Item { item: 3, offset: 0 }, 1024).unwrap();
        assert_eq!(whole["items"], json!([people[3]]));
        assert_eq!(whole["next_call"]["arguments"]["offset"], 4);
    }

    #[test]
    fn items_about_as_small_as_their_cards_stay_whole() {
        let results = Continuations::default();
        let people: Vec<Value> = (0..200).map(|n| json!({ "name": format!("person {n}"), "age": n })).collect();
        let handle = kept(&results, owner(None), Body::items(&people, r#""title":"name""#));
        let page = results.page(&handle, &by(None), At::Offset(0), 1024).unwrap();
        assert_eq!((&page["kind"], &page["items"][0]), (&json!("items"), &people[0]));
    }

    #[test]
    fn cards_that_would_say_nothing_are_not_shown() {
        let results = Continuations::default();
        // A title role, but no item has the field: cards would be bare item numbers.
        let items: Vec<Value> = (0..50).map(|n| json!({ "n": n, "pad": "x".repeat(300) })).collect();
        let handle = kept(&results, owner(None), Body::items(&items, r#""title":"name""#));
        let page = results.page(&handle, &by(None), At::Offset(0), 1024).unwrap();
        assert_eq!(page["kind"], "items", "{page}");
    }
}
