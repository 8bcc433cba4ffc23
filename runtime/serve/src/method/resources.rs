//! `resources/list`, `resources/templates/list`, `resources/read` and `completion/complete`,
//! over the resources layer.

use std::sync::Arc;

use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorData, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResult,
};

use super::span::{request_done, request_span};
use super::Request;
use crate::state::Shared;

// Node-type data, the schema and stats are `runtime` scope, which every caller has; `doctor` and
// `prov/latest` need `builder` (unknown to others, as masked tools are).
pub(crate) fn list_resources(shared: &Shared, request: &Request) -> ListResourcesResult {
    ListResourcesResult::with_all_items(crate::resources::list(&shared.resources, request.caller.scopes))
}

pub(crate) fn list_templates(shared: &Shared, _request: &Request) -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(crate::resources::templates(&shared.resources))
}

pub(crate) async fn read_resource(
    shared: &Arc<Shared>,
    request: &Request,
    params: ReadResourceRequestParams,
) -> Result<ReadResourceResult, ErrorData> {
    let uri = params.uri;
    let trace_id = uuid::Uuid::new_v4().simple().to_string();
    let info = request.info();
    let (span, started) = (request_span("resources/read", &uri, &info), std::time::Instant::now());
    span.record("mcp.resource.uri", uri.as_str());
    let read = crate::resources::read(&shared.resources, &**shared, &uri, &trace_id, shared.view(&request.caller));
    let outcome = tracing::Instrument::instrument(read, span.clone()).await.map_err(|error| error.into_mcp(&uri));
    let error_type = outcome.as_ref().err().map(|error| error.code.0.to_string());
    request_done(&span, "resources/read", None, error_type.as_deref(), started);
    outcome
}

/// Completions of a prompt's arguments (their `one_of`), or of a resource template's variables
/// (instance keys, `where` fields).
pub(crate) async fn complete(
    shared: &Shared,
    request: &Request,
    params: CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    if let Some(name) = params.r#ref.as_prompt_name() {
        return super::prompts::complete(shared, &request.caller, name, &params.argument).map(CompleteResult::new);
    }
    let trace_id = uuid::Uuid::new_v4().simple().to_string();
    let info = crate::resources::complete(&shared.resources, &params.r#ref, &params.argument, &trace_id).await?;
    Ok(CompleteResult::new(info))
}
