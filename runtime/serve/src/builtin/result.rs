//! `trails.result.read`: the rest of a result that `[mcp] max_result_bytes` cut, a page at a
//! time. The cut result names its handle and the exact first call (`_meta.trails.cut.next_call`
//! and its second text block); each page names the next. Handles are the calling token's own
//! (its subject and OAuth client), each read re-checks that the caller's current token still
//! grants the tool's scope, and they expire (`pipeline::continuation`).

use serde_json::Value;

use super::kg::shared;
use trails_core::declare::{Output, ToolOutput};
use trails_core::error::Result;
use trails_core::Ctx;
use trails_macros::capability;

/// A page: structured content with an `outputSchema`, its JSON as the text.
#[doc(hidden)]
pub struct ResultPage(Value);

impl ToolOutput for ResultPage {
    const OUTPUT_SCHEMA_MEMBER: &'static str = r#","outputSchema":{"type":"object","properties":{"handle":{"type":"string"},"tool":{"type":"string","description":"The tool whose result this is"},"kind":{"type":"string","enum":["items","text"]},"offset":{"type":"integer","minimum":0},"total":{"type":"integer","minimum":0,"description":"Items in the whole result, or bytes of its text"},"items":{"type":"array"},"text":{"type":"string"},"skipped":{"type":"object","description":"An item larger than a whole page, left out","properties":{"item":{"type":"integer"},"bytes":{"type":"integer"}}},"next_offset":{"type":["integer","null"]},"next_call":{"type":["object","null"]}},"required":["handle","tool","kind","offset","total","next_offset","next_call"]}"#;
    fn into_output(self) -> Result<Output> {
        Ok(Output::structured(self.0))
    }
}

/// Read the rest of a tool result that was cut because it was too large: pass the `handle` the
/// cut result named, and the `offset` to read from (items for a list, bytes for text). Each page
/// names the next call; `next_call` is null at the end. Handles expire ten minutes after the call.
#[capability(id = "trails.result.read", version = "1.0.0", side_effects(none), idempotent)]
async fn read(
    ctx: &Ctx,
    /// The handle the cut result gave (`_meta.trails.cut.handle`).
    #[predicate(pattern = "^[0-9a-f]{32}$")]
    handle: String,
    /// Where to read from: the previous page's `next_offset` (default 0).
    #[predicate(min_value = 0)]
    offset: Option<i64>,
) -> Result<ResultPage> {
    let shared = shared(ctx)?;
    let offset = offset.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let pipeline = &shared.pipeline;
    pipeline.continuations().page(&handle, ctx, offset, pipeline.max_result_bytes()).map(ResultPage)
}
