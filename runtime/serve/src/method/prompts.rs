//! `prompts/list`, `prompts/get` and the completion of a prompt's arguments: the app's
//! `#[prompt]`s, each seen by callers that hold its scope (the others are told it does not
//! exist, as `[mcp] mask_denied` tells of tools).

use std::sync::Arc;

use rmcp::model::{
    ArgumentInfo, CompletionInfo, ErrorData, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    ListPromptsResult, PromptMessage,
};
use serde_json::{json, Value};

use super::span::{request_done, request_span};
use super::{Request, Rounds, Unfinished};
use crate::state::Shared;
use crate::wire;
use trails_core::auth::Caller;
use trails_core::pipeline::Refusal;
use trails_core::registry::PromptEntry;
use trails_core::validate::echo_name;

/// The prompt `name`, if `caller` may see it.
fn visible(shared: &Shared, caller: &Caller, name: &str) -> Option<&'static PromptEntry> {
    let (entry, _) = shared.prompts.iter().find(|(entry, _)| entry.name() == name)?;
    caller.scopes.contains(entry.scope()).then_some(*entry)
}

fn unknown(name: &str) -> ErrorData {
    let name = echo_name(name);
    ErrorData::invalid_params(format!("unknown prompt: {name}"), Some(json!({ "prompt": name })))
}

pub(crate) fn list_prompts(shared: &Shared, request: &Request) -> ListPromptsResult {
    let scopes = request.caller.scopes;
    let prompts = shared.prompts.iter().filter(|(entry, _)| scopes.contains(entry.scope()));
    ListPromptsResult::with_all_items(prompts.map(|(_, listed)| listed.clone()).collect())
}

/// `prompts/get`: the prompt's function, in rounds of input-required results from 2026-07-28 on.
pub(crate) async fn get_prompt(
    shared: &Arc<Shared>,
    request: Request,
    params: GetPromptRequestParams,
) -> Result<GetPromptResponse, ErrorData> {
    let Some(entry) = visible(shared, &request.caller, &params.name) else { return Err(unknown(&params.name)) };
    let (state, responses) = (params.request_state, params.input_responses);
    let target = ("prompts/get", entry.name());
    let rounds = Rounds::of(shared, &request, target, params.arguments.as_ref(), state, responses)?;
    let info = request.info(shared, rounds.as_ref());
    let (span, started) = (request_span("prompts/get", entry.name(), &info), std::time::Instant::now());
    span.record("gen_ai.prompt.name", entry.name());
    let arguments = params.arguments.map(Value::Object).unwrap_or(Value::Null);
    let got = super::run_function(shared, &request.caller, info, "a prompt's function", |ctx| async move {
        let messages = entry.get(ctx, arguments).await?;
        messages.into_iter().map(super::as_rmcp::<PromptMessage>).collect::<Result<Vec<_>, _>>()
    });
    let outcome = match tracing::Instrument::instrument(got, span.clone()).await {
        Ok(messages) => Ok(GetPromptResponse::Complete(GetPromptResult::new(messages))),
        Err(Unfinished::Asked(asked)) => {
            super::input::asked(shared, rounds.as_ref(), asked).map(GetPromptResponse::InputRequired)
        }
        Err(Unfinished::Failed(error, trace_id)) => Err(wire::call::refusal(&Refusal::Failed { error, trace_id })),
    };
    let error_type = outcome.as_ref().err().map(|error| error.code.0.to_string());
    request_done(&span, "prompts/get", Some(entry.name()), error_type.as_deref(), started);
    outcome
}

/// The values argument `argument` of prompt `name` may take (its `one_of`) that start with what
/// was typed.
pub(crate) fn complete(
    shared: &Shared,
    caller: &Caller,
    name: &str,
    argument: &ArgumentInfo,
) -> Result<CompletionInfo, ErrorData> {
    let entry = visible(shared, caller, name).ok_or_else(|| unknown(name))?;
    super::resources::complete_from(entry.completions(&argument.name), &argument.value)
}
