//! `resources/list`, `resources/templates/list`, `resources/read` and `completion/complete`,
//! over the resources layer.

use std::sync::Arc;

use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ErrorData, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents,
};

use super::span::{request_done, request_span};
use super::{Request, Rounds, Unfinished};
use crate::state::Shared;
use trails_core::pipeline::Refusal;
use trails_core::registry::ResourceEntry;

// Node-type data, the schema and stats are `runtime` scope, which every caller has; `doctor` and
// `prov/latest` need `builder` (unknown to others, as masked tools are).
// The app's own (`#[resource]`) come first, each seen by callers holding its scope.
pub(crate) fn list_resources(shared: &Shared, request: &Request) -> ListResourcesResult {
    let scopes = request.caller.scopes;
    let own = shared.own_resources.fixed.iter().filter(|(entry, _)| scopes.contains(entry.scope()));
    let mut listed: Vec<_> = own.map(|(_, resource)| resource.clone()).collect();
    listed.extend(shared.skills.iter().flat_map(|skills| skills.resources()));
    listed.extend(crate::resources::list(&shared.resources, scopes));
    ListResourcesResult::with_all_items(listed)
}

pub(crate) fn list_templates(shared: &Shared, request: &Request) -> ListResourceTemplatesResult {
    let scopes = request.caller.scopes;
    let own = shared.own_resources.templates.iter().filter(|(entry, _)| scopes.contains(entry.scope()));
    let mut listed: Vec<_> = own.map(|(_, template)| template.clone()).collect();
    listed.extend(crate::resources::templates(&shared.resources));
    ListResourceTemplatesResult::with_all_items(listed)
}

/// Read one of the app's own resources: its function, with the caller's context. A not-found
/// error is the unknown-resource error any URI naming nothing gets.
async fn read_own(
    shared: &Arc<Shared>,
    request: &Request,
    (info, rounds): (super::CallInfo, Option<&Rounds>),
    entry: &'static ResourceEntry,
    uri: &str,
    variables: serde_json::Map<String, serde_json::Value>,
) -> Result<ReadResourceResponse, ErrorData> {
    let read = super::run_function(shared, &request.caller, info, "a resource's function", |ctx| async move {
        super::as_rmcp::<ResourceContents>(entry.read(ctx, uri, variables).await?)
    });
    match read.await {
        Ok(contents) => Ok(ReadResourceResponse::Complete(ReadResourceResult::new(vec![contents]))),
        Err(Unfinished::Asked(asked)) => {
            super::input::asked(shared, rounds, asked).map(ReadResourceResponse::InputRequired)
        }
        Err(Unfinished::Failed(trails_core::Error::Domain(domain), _))
            if domain.kind() == trails_core::ErrorKind::NotFound =>
        {
            Err(crate::wire::errors::unknown_resource(uri))
        }
        Err(Unfinished::Failed(error, trace_id)) => {
            Err(crate::wire::call::refusal(&Refusal::Failed { error, trace_id }))
        }
    }
}

/// `resources/read`: one of the app's own (in rounds of input-required results from 2026-07-28
/// on), else the server's (which never ask).
pub(crate) async fn read_resource(
    shared: &Arc<Shared>,
    request: &Request,
    params: ReadResourceRequestParams,
) -> Result<ReadResourceResponse, ErrorData> {
    let uri = params.uri;
    let own = shared.own_resources.find(&uri, request.caller.scopes);
    let rounds = match own {
        Some(_) => {
            let (state, responses) = (params.request_state, params.input_responses);
            Rounds::of(shared, request, ("resources/read", &uri), None, state, responses)?
        }
        None => None,
    };
    let info = request.info(shared, rounds.as_ref());
    let (span, started) = (request_span("resources/read", &uri, &info), std::time::Instant::now());
    span.record("mcp.resource.uri", uri.as_str());
    let outcome = match own {
        Some((entry, variables)) => {
            let read = read_own(shared, request, (info, rounds.as_ref()), entry, &uri, variables);
            tracing::Instrument::instrument(read, span.clone()).await
        }
        None if uri.starts_with("skill://") => {
            let read = shared.skills.as_ref().and_then(|skills| skills.read(&uri));
            read.map(ReadResourceResponse::Complete).ok_or_else(|| crate::wire::errors::unknown_resource(&uri))
        }
        None => {
            let trace_id = uuid::Uuid::new_v4().simple().to_string();
            let view = shared.view(&request.caller);
            let reader = (view, request.caller.is_authenticated());
            let read = crate::resources::read(&shared.resources, &**shared, &uri, &trace_id, reader);
            let read = tracing::Instrument::instrument(read, span.clone()).await;
            read.map(ReadResourceResponse::Complete).map_err(|error| error.into_mcp(&uri))
        }
    };
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
    let own = shared.own_resources.templates.iter().map(|(entry, _)| *entry);
    let scopes = request.caller.scopes;
    if let Some(entry) = own
        .filter(|entry| scopes.contains(entry.scope()))
        .find(|entry| Some(entry.uri()) == params.r#ref.as_resource_uri())
    {
        return complete_from(entry.completions(&params.argument.name), &params.argument.value)
            .map(CompleteResult::new);
    }
    let trace_id = uuid::Uuid::new_v4().simple().to_string();
    let info = crate::resources::complete(&shared.resources, &params.r#ref, &params.argument, &trace_id).await?;
    Ok(CompleteResult::new(info))
}

/// The declared values (a `one_of`) that start with what was typed, at most MCP's count.
pub(super) fn complete_from(values: &[&str], typed: &str) -> Result<CompletionInfo, ErrorData> {
    let values = values.iter().filter(|value| value.starts_with(typed)).take(CompletionInfo::MAX_VALUES);
    CompletionInfo::with_all_values(values.map(|value| (*value).to_owned()).collect())
        .map_err(|error| ErrorData::internal_error(error, None))
}
