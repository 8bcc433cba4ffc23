//! `trails.kg.list`, `trails.kg.get` and `trails.kg.read_field`: the knowledge graph's resources
//! as read-only runtime tools, for hosts that show the model tool results but cannot read
//! resources (the PDPP rule, `runtime/guide/03-knowledge-graph.md`). They read through the resources' own parser and
//! queries (`resources/tools`), so both give the same data.
//!
//! Every result's text — the JSON of its structured content, which is also `content[]` — fits
//! the window (`[mcp] tool_window_chars`). What does not fit is named with the exact call that
//! continues it: the next page's `cursor`, or `trails.kg.read_field` with the `offset` where a
//! field's text was cut. Nothing depends on the host following resource links.

use serde_json::{json, Map, Value};

use crate::resources::tools as read;
use crate::state::{Control, Shared};
use trails_core::declare::{Output, ToolOutput};
use trails_core::error::{Error, Result};
use trails_core::validate::{FieldCode, FieldError};
use trails_core::Ctx;
use trails_kg::KgCtx;
use trails_macros::capability;

/// Characters `trails.kg.get` shows of a field it must cut (the rest: `read_field`).
const FIELD_PREVIEW_CHARS: usize = 512;
/// Most characters one `read_field` call asks for.
const MAX_LIMIT_CHARS: usize = 16_384;

/// A `trails.kg.*` answer: structured content with an `outputSchema`, its JSON as the text.
macro_rules! answer {
    ($name:ident, $schema:literal) => {
        #[doc(hidden)]
        pub struct $name(Value);

        impl ToolOutput for $name {
            const OUTPUT_SCHEMA_MEMBER: &'static str = concat!(",\"outputSchema\":", $schema);
            fn into_output(self) -> Result<Output> {
                Ok(Output::structured(self.0))
            }
        }
    };
}

answer!(
    KgPage,
    r#"{"type":"object","properties":{"node_type":{"type":"string"},"total":{"type":"integer"},"items":{"type":"array","items":{"type":"object","properties":{"iri":{"type":"string"},"id":{"type":"string"},"label":{"type":"string"},"uri":{"type":"string"},"node_type":{"type":"string"},"excerpt":{"type":"string"},"timestamp":{"type":"string"},"status":{"type":"string"},"identifier":{"type":["string","integer"]},"url":{"type":"string"}},"required":["iri","id","label","uri"]}},"cursor":{"type":["string","null"]},"next_call":{"type":["object","null"]},"cut":{"type":"string"}},"required":["node_type","total","items","cursor","next_call"]}"#
);
answer!(
    KgInstance,
    r#"{"type":"object","properties":{"node_type":{"type":"string"},"id":{"type":"string"},"iri":{"type":"string"},"fields":{"type":"object"},"cut_fields":{"type":"array","items":{"type":"object","properties":{"field":{"type":"string"},"shown_chars":{"type":"integer"},"total_chars":{"type":"integer"},"next_call":{"type":"object"}}}},"cut":{"type":"string"},"next_call":{"type":["object","null"]}},"required":["node_type","id","iri","fields","cut_fields"]}"#
);
answer!(
    KgField,
    r#"{"type":"object","properties":{"node_type":{"type":"string"},"id":{"type":"string"},"field":{"type":"string"},"offset":{"type":"integer"},"returned_chars":{"type":"integer"},"total_chars":{"type":"integer"},"text":{"type":"string"},"next_offset":{"type":["integer","null"]},"next_call":{"type":["object","null"]}},"required":["node_type","id","field","offset","returned_chars","total_chars","text","next_offset","next_call"]}"#
);

pub(super) fn shared(ctx: &Ctx) -> Result<&Shared> {
    ctx.extension::<Control>()
        .map(|control| &*control.0)
        .ok_or_else(|| Error::internal("trails.kg.* called outside a running server"))
}

/// Characters of `value` as a tool result's text.
pub(super) fn text_len(value: &Value) -> usize {
    value.to_string().chars().count()
}

pub(super) fn call(tool: &str, arguments: Value) -> Value {
    json!({ "tool": tool, "arguments": arguments })
}

/// List the instances of a node type, a page at a time: `{iri, id, label, uri}` per instance (`id`
/// is what `trails_kg_get` takes), with `excerpt`, `timestamp`, `status`, `identifier` and `url`
/// where the type declares those roles. Instances of the types that extend it are listed too,
/// each with its own `node_type` (what `trails_kg_get` takes for it). Follow `next_call` (the same call with `cursor`) for the
/// next page; it never repeats or skips an instance while others are written.
#[capability(id = "trails.kg.list", version = "1.0.0", side_effects(none), idempotent)]
async fn list(
    ctx: &Ctx,
    /// The node type (its label, as in `trails://kg/types`).
    #[predicate(min_length = 1, max_length = 128)]
    node_type: String,
    /// One clause `<field>=<value>` (only `=`), the value of the field's datatype.
    #[predicate(min_length = 1, max_length = 2048)]
    filter: Option<String>,
    /// Instances per page (default 100).
    #[predicate(min_value = 1, max_value = 1000)]
    limit: Option<i64>,
    /// Where the previous page ended: its `cursor`.
    #[predicate(min_length = 1, max_length = 4096)]
    cursor: Option<String>,
) -> Result<KgPage> {
    let shared = shared(ctx)?;
    let node = read::node_type(&shared.resources, &node_type)?;
    let limit = limit.map_or(trails_kg::DEFAULT_LIMIT, |n| usize::try_from(n).unwrap_or(1));
    let window = shared.mcp.tool_window_chars;
    // An item is at least this many characters: more than `window / MIN_ITEM_CHARS` never fit,
    // so no more are read.
    const MIN_ITEM_CHARS: usize = 40;
    let fetch = limit.min(window / MIN_ITEM_CHARS + 1);
    let page =
        read::page(&shared.resources, ctx.kg()?, node, filter.as_deref(), fetch, cursor.as_deref(), true).await?;
    let mut items = page["items"].as_array().cloned().unwrap_or_default();
    let more = !page["next"].is_null();
    let answer = |items: &[Value], shown: usize| {
        let more = more || shown < items.len();
        let listed = &items[..shown];
        let (cursor, next_call) = match listed.last().and_then(|item| item["iri"].as_str()) {
            Some(last) if more => {
                let mut arguments = json!({ "node_type": node.label, "cursor": last, "limit": limit });
                if let Some(filter) = &filter {
                    arguments["filter"] = json!(filter);
                }
                (json!(last), call("trails_kg_list", arguments))
            }
            _ => (Value::Null, Value::Null),
        };
        let mut answer = json!({ "node_type": node.label, "total": page["total"], "items": listed, "cursor": cursor, "next_call": next_call });
        if shown < limit && !next_call.is_null() {
            answer["cut"] = json!(format!(
                "{shown} of the {limit} instances asked for fit the window; next_call continues after them"
            ));
        }
        answer
    };
    // A window too small for one card lists the items without theirs ({iri, id, label, uri}).
    if !items.is_empty() && text_len(&answer(&items, 1)) > window {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            item.retain(|key, _| ["iri", "id", "label", "uri", "node_type"].contains(&key.as_str()));
        }
    }
    // The most items that fit (at least one, so paging always advances).
    let (mut fits, mut over) = (1, items.len() + 1);
    if text_len(&answer(&items, items.len())) <= window {
        fits = items.len();
    } else {
        while over - fits > 1 {
            let middle = (fits + over) / 2;
            if text_len(&answer(&items, middle)) <= window {
                fits = middle;
            } else {
                over = middle;
            }
        }
    }
    let body = answer(&items, fits.min(items.len()));
    if text_len(&body) > window {
        let message = format!(
            "one {} (with its IRI, cursor and next call) does not fit the window ({window} characters); \
             raise [mcp] tool_window_chars",
            node.label
        );
        return Err(FieldError::refuse("node_type", FieldCode::MaxLength, message, &json!(node.label), json!(window)));
    }
    Ok(KgPage(body))
}

/// One `read_field` answer, computed from the field's whole text (pure: the fuzz target runs it).
pub(crate) struct FieldRead<'a> {
    pub(crate) node_type: &'a str,
    pub(crate) id: &'a str,
    pub(crate) field: &'a str,
}

impl FieldRead<'_> {
    /// The answer for `text` from `offset` (characters; at most the text's length): as many
    /// characters as `limit` allows and `window` holds with the envelope, JSON escaping counted.
    /// `None` when the envelope alone leaves no room although text remains.
    pub(crate) fn window(&self, text: &str, offset: usize, limit: usize, window: usize) -> Option<Value> {
        let rest = &text[text.char_indices().nth(offset).map_or(text.len(), |(at, _)| at)..];
        let remaining = rest.chars().count();
        let answer = |count: usize| {
            let chunk: String = rest.chars().take(count).collect();
            let returned = chunk.chars().count();
            let next = offset + returned;
            let (next_offset, next_call) = if returned < remaining {
                let mut next_call = read_field_call(self.node_type, self.id, self.field, next);
                next_call["arguments"]["limit_chars"] = json!(limit);
                (json!(next), next_call)
            } else {
                (Value::Null, Value::Null)
            };
            json!({ "node_type": self.node_type, "id": self.id, "field": self.field, "offset": offset,
                    "returned_chars": returned, "total_chars": offset + remaining, "text": chunk,
                    "next_offset": next_offset, "next_call": next_call })
        };
        let mut count = limit.min(remaining);
        let mut body = answer(count);
        // Escaping can make the text longer than its characters: shrink in proportion while far
        // over, then by what is over.
        let mut length = text_len(&body);
        while length > window && count > 0 {
            let over = length - window;
            count = if over >= count { count * window / length } else { count - over };
            body = answer(count);
            length = text_len(&body);
        }
        (length <= window && (count > 0 || remaining == 0)).then_some(body)
    }
}

/// A `read_field` call that continues `field` at `offset`.
fn read_field_call(node_type: &str, id: &str, field: &str, offset: usize) -> Value {
    call("trails_kg_read_field", json!({ "node_type": node_type, "id": id, "field": field, "offset": offset }))
}

/// The text `read_field` windows: a string as it is, anything else as its JSON.
fn field_text(value: &Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), str::to_owned)
}

/// One instance, its fields by name. When they do not all fit the window, the longest are cut
/// (to a preview, then entirely) and listed in `cut_fields`, each with the `trails_kg_read_field`
/// call that reads on from where it was cut; `cut` says so and `next_call` reads the first.
#[capability(id = "trails.kg.get", version = "2.0.0", side_effects(none), idempotent)]
async fn get(
    ctx: &Ctx,
    /// The node type (its label).
    #[predicate(min_length = 1, max_length = 128)]
    node_type: String,
    /// The instance's id: its key (the `id` of `trails_kg_list` items).
    #[predicate(min_length = 1, max_length = 2048)]
    id: String,
) -> Result<KgInstance> {
    let shared = shared(ctx)?;
    let node = read::node_type(&shared.resources, &node_type)?;
    let (iri, original) = read::instance(ctx.kg()?, node, &id).await?;
    fit_instance(node.label, &id, &iri, &original, shared.mcp.tool_window_chars).map(KgInstance)
}

/// `trails.kg.get`'s answer for an instance with these fields, fitted to `window` (pure: the
/// property test runs it).
pub(crate) fn fit_instance(
    node_type: &str,
    id: &str,
    iri: &str,
    original: &Map<String, Value>,
    window: usize,
) -> Result<Value> {
    let mut fields = original.clone();
    let mut cuts = Vec::new();
    // Shows the first `shown` characters of `name` (none: the field goes whole to `read_field`).
    let cut = |fields: &mut Map<String, Value>, cuts: &mut Vec<Value>, name: &str, shown: usize| {
        let Some(value) = original.get(name) else { return };
        let text = field_text(value);
        let shown = if value.is_string() { shown } else { 0 };
        match shown {
            0 => fields.remove(name),
            _ => fields.insert(name.to_owned(), json!(text.chars().take(shown).collect::<String>())),
        };
        cuts.retain(|entry| entry["field"] != name);
        cuts.push(json!({ "field": name, "shown_chars": shown, "total_chars": text.chars().count(),
                          "next_call": read_field_call(node_type, id, name, shown) }));
    };
    loop {
        let mut body = json!({ "node_type": node_type, "id": id, "iri": iri, "fields": fields, "cut_fields": cuts });
        if let Some(first) = cuts.first() {
            let names: Vec<&str> = cuts.iter().filter_map(|cut: &Value| cut["field"].as_str()).collect();
            body["cut"] = json!(format!(
                "fields cut to fit the window: {}; each cut_fields entry's next_call reads on where it was cut, \
                 next_call the first's",
                names.join(", ")
            ));
            body["next_call"] = first["next_call"].clone();
        }
        if text_len(&body) <= window {
            return Ok(body);
        }
        // Too long: the longest field is cut to a preview, or — already one, or not text — goes
        // whole to `read_field`.
        let Some((name, value)) = fields.iter().max_by_key(|(_, value)| value.to_string().len()) else {
            return compact(node_type, id, iri, cuts, window);
        };
        let name = name.clone();
        let previewed = value.as_str().is_some_and(|text| text.chars().count() <= FIELD_PREVIEW_CHARS);
        cut(&mut fields, &mut cuts, &name, if previewed { 0 } else { FIELD_PREVIEW_CHARS });
    }
}

/// Every field cut and still over the window (many fields, or a long id): the cuts without
/// their calls, and one `next_call` — the first cut field's — with how to make the others.
fn compact(node_type: &str, id: &str, iri: &str, cuts: Vec<Value>, window: usize) -> Result<Value> {
    let next_call = cuts.first().map(|cut| cut["next_call"].clone()).unwrap_or(Value::Null);
    let cuts: Vec<Value> = cuts
        .into_iter()
        .map(|cut| json!({ "field": cut["field"], "shown_chars": cut["shown_chars"], "total_chars": cut["total_chars"] }))
        .collect();
    let body = json!({ "node_type": node_type, "id": id, "iri": iri, "fields": {}, "cut_fields": cuts, "next_call": next_call,
        "cut": "every field is cut: next_call reads the first; read each with trails_kg_read_field (this node_type and id, \
                its field, offset = shown_chars)" });
    if text_len(&body) <= window {
        return Ok(body);
    }
    let message = format!(
        "this instance's fields cannot even be listed in the window ({window} characters); \
         read them one by one with trails_kg_read_field"
    );
    Err(FieldError::refuse("id", FieldCode::MaxLength, message, &json!(id), json!(window)))
}

/// Read one field's text from `offset` (in characters; a field that is not a string reads as
/// its JSON). The answer gives `next_offset` and the exact `next_call` until `total_chars` is
/// reached; each answer fits the window, so `limit_chars` may come back smaller.
#[capability(id = "trails.kg.read_field", version = "1.0.0", side_effects(none), idempotent)]
async fn read_field(
    ctx: &Ctx,
    /// The node type (its label).
    #[predicate(min_length = 1, max_length = 128)]
    node_type: String,
    /// The instance's id (its key).
    #[predicate(min_length = 1, max_length = 2048)]
    id: String,
    /// The field's name.
    #[predicate(min_length = 1, max_length = 128)]
    field: String,
    /// Where to start, in characters (default 0): the previous answer's `next_offset`.
    #[predicate(min_value = 0)]
    offset: Option<i64>,
    /// Most characters to return (default and most: 16384, and never more than the window holds).
    #[predicate(min_value = 1, max_value = 16384)]
    limit_chars: Option<i64>,
) -> Result<KgField> {
    let shared = shared(ctx)?;
    let node = read::node_type(&shared.resources, &node_type)?;
    let Some(predicate) = node.all_predicates().into_iter().find(|p| p.field == field) else {
        let fields: Vec<&str> = node.all_predicates().iter().map(|p| p.field).collect();
        // A field of another node type is in the published enum: the schema allowed the call,
        // and the model learns which fields this type has.
        if shared.resources.node_types.iter().any(|other| other.all_predicates().iter().any(|p| p.field == field)) {
            return Err(Error::not_found(format!(
                "{} has no field `{field}` (another node type has); its fields: {}",
                node.label,
                fields.join(", ")
            )));
        }
        return Err(FieldError::refuse(
            "field",
            FieldCode::OneOf,
            format!("{} has no field `{field}`; its fields: {}", node.label, fields.join(", ")),
            &json!(field),
            json!(fields),
        ));
    };
    let (_, fields) = read::instance(ctx.kg()?, node, &id).await?;
    let text = fields.get(predicate.field).map(field_text).unwrap_or_default();
    let total = text.chars().count();
    let offset = offset.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    if offset > total {
        return Err(FieldError::refuse(
            "offset",
            FieldCode::MaxValue,
            format!("offset {offset} is past the end of {field} ({total} characters)"),
            &json!(offset),
            json!(total),
        ));
    }
    let limit = limit_chars.map_or(MAX_LIMIT_CHARS, |n| usize::try_from(n).unwrap_or(1));
    let window = shared.mcp.tool_window_chars;
    let read = FieldRead { node_type: node.label, id: &id, field: predicate.field };
    let body = read.window(&text, offset, limit, window).ok_or_else(|| {
        FieldError::refuse(
            "id",
            FieldCode::MaxLength,
            format!("with an id this long no text fits the window ({window} characters)"),
            &json!(id),
            json!(window),
        )
    })?;
    Ok(KgField(body))
}

/// Read `text` from `offset` to its end as a host following `next_offset` would, checking what
/// every answer promises: it fits `window`, it starts where the last ended, it advances, and the
/// pieces put together are the text. Panics on a broken promise (the fuzz target and the
/// property test run it).
#[cfg(any(fuzzing, test))]
pub(crate) fn read_through(text: &str, offset: usize, limit: usize, window: usize) {
    let read = FieldRead { node_type: "Note", id: "a-note", field: "body" };
    let total = text.chars().count();
    let mut at = offset.min(total);
    let mut pieces = String::new();
    loop {
        let answer = read.window(text, at, limit, window).expect("a short envelope always leaves room");
        assert!(text_len(&answer) <= window, "an answer of {} characters in a {window} window", text_len(&answer));
        assert_eq!(answer["offset"], at);
        assert_eq!(answer["total_chars"], total);
        let piece = answer["text"].as_str().expect("text");
        assert_eq!(answer["returned_chars"], piece.chars().count());
        pieces.push_str(piece);
        match answer["next_offset"].as_u64() {
            None => break,
            Some(next) => {
                let next = usize::try_from(next).expect("offset");
                assert!(next > at && next <= total, "next_offset {next} after {at} of {total}");
                assert_eq!(answer["next_call"]["arguments"]["offset"], next);
                at = next;
            }
        }
    }
    let expected: String = text.chars().skip(offset.min(total)).collect();
    assert!(pieces == expected, "the pieces are not the text");
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::read_through;

    #[test]
    fn escapes_and_multibyte_text_read_through_in_the_smallest_window() {
        let text: String = "\"quoted\" \\ back\tslash\n ✓ 🦀 \u{0}".chars().cycle().take(20_000).collect();
        read_through(&text, 0, 16_384, 1024);
        read_through(&text, 7, 1, 1024);
        read_through(&text, 19_999, 50, 1024);
        read_through("", 0, 10, 1024);
    }

    proptest! {
        /// Any instance: the answer fits the window, or is the one refusal; every field is
        /// either shown whole, shown as a preview that starts it, or listed as cut.
        #[test]
        fn any_instance_fits_the_window_or_is_refused(
            fields in proptest::collection::btree_map("[a-z_]{1,12}", "(?s).{0,700}", 0..30),
            id in "(?s).{1,300}",
            window in 1024usize..=8192,
        ) {
            let original: serde_json::Map<String, serde_json::Value> =
                fields.iter().map(|(k, v)| (k.clone(), serde_json::json!(v))).collect();
            match super::fit_instance("Note", &id, "urn:x/Note/1", &original, window) {
                Ok(answer) => {
                    prop_assert!(super::text_len(&answer) <= window);
                    let cut: Vec<&str> =
                        answer["cut_fields"].as_array().unwrap().iter().map(|c| c["field"].as_str().unwrap()).collect();
                    for (name, value) in &fields {
                        match answer["fields"].get(name).and_then(|v| v.as_str()) {
                            Some(shown) if shown == value => prop_assert!(!cut.contains(&name.as_str())),
                            Some(shown) => prop_assert!(value.starts_with(shown) && cut.contains(&name.as_str())),
                            None => prop_assert!(cut.contains(&name.as_str()), "{name} neither shown nor cut"),
                        }
                    }
                }
                Err(trails_core::Error::Validation { errors, .. }) => prop_assert_eq!(&errors[0].field, "id"),
                Err(other) => prop_assert!(false, "{other}"),
            }
        }

        #[test]
        fn any_text_reads_through_in_any_window(
            text in "(?s).{0,3000}",
            offset in 0usize..3100,
            limit in 1usize..=16_384,
            window in 1024usize..=65_536,
        ) {
            read_through(&text, offset, limit, window);
        }
    }
}
