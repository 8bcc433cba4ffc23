//! A call's outcome in MCP's types: a [`ToolResult`] as rmcp's `CallToolResult`, a [`Refusal`]
//! as its `ErrorData`. Nothing is decided here; the table is `pipeline::Refusal`'s.

use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, MetaObject};
use rmcp::ErrorData;

use crate::pipeline::{Content, Refusal, ToolResult};

pub(crate) fn result(result: ToolResult) -> CallToolResult {
    let content = result.content.into_iter().map(|Content::Text { text }| ContentBlock::text(text)).collect();
    let mut encoded = CallToolResult::success(content);
    encoded.structured_content = result.structured_content;
    encoded.is_error = Some(result.is_error);
    encoded.meta = result.meta.map(MetaObject);
    encoded
}

pub(crate) fn refusal(refusal: &Refusal) -> ErrorData {
    ErrorData::new(ErrorCode(refusal.code()), refusal.message(), refusal.data())
}
