//! `tools/list`: what the caller sees of the catalog (its scopes, less what guards hide from it).

use bytes::Bytes;
use rmcp::model::ListToolsResult;

use super::{Request, Transport};
use crate::state::Shared;

pub(crate) fn list_tools(shared: &Shared, request: &Request) -> ListToolsResult {
    let view = shared.view(&request.caller);
    let tools = match request.transport {
        // Over stdio the manifest is the resource `trails://capabilities`.
        Transport::Stdio => shared.tools_stdio(view),
        Transport::Http => shared.tools(view),
    };
    ListToolsResult::with_all_items(tools.as_ref().clone())
}

/// The same over HTTP as the result's bytes, serialised once per view and version shape.
pub(crate) fn list_tools_json(shared: &Shared, request: &Request) -> Bytes {
    shared.tools_json(shared.view(&request.caller), request.current())
}
