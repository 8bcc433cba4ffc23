//! `trails.result.read`: the rest of a result cut to the window (`[mcp] tool_window_chars`), a
//! page at a time, each page within the same window. The cut result names the exact first call
//! (`next_call`); each page says what it shows (`cut`) and names the next. Handles are the
//! calling token's own (its subject and OAuth client), each read re-checks that the caller's
//! current token still grants the tool's scope, and they expire (`pipeline::continuation`).

use serde_json::Value;

use super::kg::shared;
use trails_core::declare::{Output, ToolOutput};
use trails_core::error::Result;
use trails_core::pipeline::At;
use trails_core::Ctx;
use trails_macros::capability;

/// A page: structured content with an `outputSchema`, its JSON as the text.
#[doc(hidden)]
pub struct ResultPage(Value);

impl ToolOutput for ResultPage {
    const OUTPUT_SCHEMA_MEMBER: &'static str = r#","outputSchema":{"type":"object","properties":{"handle":{"type":"string"},"tool":{"type":"string","description":"The tool whose result this is"},"kind":{"type":"string","enum":["items","cards","text"]},"offset":{"type":"integer","minimum":0},"total":{"type":"integer","minimum":0,"description":"Items in the whole result, or bytes of its text"},"items":{"type":"array"},"cards":{"type":"array","description":"Evidence cards of the items, each naming its item"},"item":{"type":"integer","description":"The item whose JSON text this is"},"text":{"type":"string"},"cut":{"type":"string","description":"What this page shows of the result"},"next_offset":{"type":["integer","null"]},"next_call":{"type":["object","null"]}},"required":["handle","tool","kind","offset","total","next_offset","next_call"]}"#;
    fn into_output(self) -> Result<Output> {
        Ok(Output::structured(self.0))
    }
}

/// Read the rest of a tool result that was cut to fit the window: make the `next_call` the cut
/// result named (a `handle` and the `offset` to read from: items for a list, bytes for text), or
/// read one item of a list whole with `item`. Each page says what it shows (`cut`) and names the
/// next call; `next_call` is null at the end. Handles expire ten minutes after the call.
#[capability(id = "trails.result.read", version = "2.0.0", side_effects(none), idempotent)]
async fn read(
    ctx: &Ctx,
    /// The handle the cut result's `next_call` gave.
    #[predicate(pattern = "^[0-9a-f]{32}$")]
    handle: String,
    /// Where to read from: the previous page's `next_offset` (default 0); with `item`, where in
    /// that item's text.
    #[predicate(min_value = 0)]
    offset: Option<i64>,
    /// One item of a list to read whole (a card's `item`).
    #[predicate(min_value = 0)]
    item: Option<i64>,
) -> Result<ResultPage> {
    let shared = shared(ctx)?;
    let index = |n: i64| usize::try_from(n).unwrap_or(usize::MAX);
    let offset = offset.map_or(0, index);
    let at = match item {
        Some(item) => At::Item { item: index(item), offset },
        None => At::Offset(offset),
    };
    let pipeline = &shared.pipeline;
    pipeline.continuations().page(&handle, ctx, at, pipeline.window()).map(ResultPage)
}
