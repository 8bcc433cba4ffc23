//! A call's outcome in MCP's types: an [`Answer`] as rmcp's `CallToolResult` (a replay marked
//! `_meta.trails.replayed`), a [`Refusal`] as its `ErrorData`. Nothing is decided here; the table
//! is `pipeline::Refusal`'s.

use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, MetaObject};
use rmcp::ErrorData;
use serde_json::Value;

use trails_core::pipeline::{Answer, Content, Refusal};

pub(crate) fn answer(answer: Answer) -> CallToolResult {
    let replayed = answer.is_replay();
    let mut result = answer.into_result();
    if replayed {
        result.set_trails_meta("replayed", Value::Bool(true));
    }
    let content = result.content.into_iter().map(content_block).collect();
    let mut encoded = CallToolResult::success(content);
    encoded.structured_content = result.structured_content;
    encoded.is_error = Some(result.is_error);
    encoded.meta = result.meta.map(MetaObject);
    encoded
}

/// A block in rmcp's type. `Content` serialises in MCP's own shape, so a kind without a case here
/// still reaches the client as it is.
fn content_block(content: Content) -> ContentBlock {
    match content {
        Content::Text { text, annotations: None } => ContentBlock::text(text),
        other => serde_json::to_value(&other)
            .and_then(serde_json::from_value)
            .unwrap_or_else(|error| ContentBlock::text(format!("(content rmcp cannot carry: {error})"))),
    }
}

pub(crate) fn refusal(refusal: &Refusal) -> ErrorData {
    ErrorData::new(ErrorCode(refusal.code()), refusal.message(), refusal.data())
}
