//! `trails.dry_run`: a dry run of another tool's call (`pipeline::DryRun`), for hosts that cannot
//! set `_meta.trails.dry_run` — the same checks, the same verdict, nothing recorded or charged.

use serde_json::{Map, Value};

use super::kg::shared;
use trails_core::auth::Caller;
use trails_core::declare::{Output, ToolOutput};
use trails_core::error::{Error, Result};
use trails_core::pipeline::{Attach, CallRequest, ValidationFailures};
use trails_core::validate::{FieldCode, FieldError};
use trails_core::Ctx;
use trails_macros::capability;

/// A call's arguments as the checked tool takes them: any JSON object (that tool's validation
/// says the rest, as a reason).
#[doc(hidden)]
#[derive(serde::Deserialize)]
pub struct Arguments(Map<String, Value>);

// Not suggested to an app's author whose own type lacks a schema (as no generated impl is).
#[diagnostic::do_not_recommend]
impl trails_core::declare::Schema for Arguments {
    const SCHEMA_MEMBERS: &'static str = r#""type":"object","properties":{}"#;
    fn validate_at(value: &Value, path: &mut trails_core::validate::Path, errors: &mut trails_core::validate::Errors) {
        if !value.is_object() {
            let field = path.current();
            let message = format!("{field} must be an object: the arguments of the call");
            errors.push(FieldError::rejecting(&field, FieldCode::Type, message, value, serde_json::json!("object")));
        }
    }
}

/// The verdict: structured content with its `outputSchema`, its JSON as the text.
#[doc(hidden)]
pub struct Verdict(Value);

impl ToolOutput for Verdict {
    const OUTPUT_SCHEMA_MEMBER: &'static str = r#","outputSchema":{"type":"object","properties":{"would_run":{"type":"boolean","description":"Whether the call would run if it were made now"},"reasons":{"type":"array","description":"What the checks found: each a kind (precondition, validation, scope_denied, policy_denied, confirmation, cost, …), a message, and whether it keeps the call from running","items":{"type":"object","properties":{"kind":{"type":"string"},"message":{"type":"string"},"blocking":{"type":"boolean"}},"required":["kind","message","blocking"]}}},"required":["would_run","reasons"]}"#;
    fn into_output(self) -> Result<Output> {
        Ok(Output::structured(self.0))
    }
}

/// Check whether a call of another tool would run now, without running it: its arguments, the
/// caller's scopes, policies, declared preconditions, the confirmation it would ask for and its
/// cost are checked, and nothing is recorded, charged or changed. Answers `would_run` and the
/// reasons found.
#[capability(id = "trails.dry_run", version = "1.0.0", side_effects(none), idempotent)]
async fn dry_run(
    ctx: &Ctx,
    /// The tool to check: its name (`requirements_update`) or id (`requirements.update`).
    #[predicate(min_length = 1, max_length = 128)]
    tool: String,
    /// The arguments the call would have, as the checked tool's input schema says.
    arguments: Option<Arguments>,
) -> Result<Verdict> {
    let shared = shared(ctx)?;
    let catalog = &shared.pipeline.catalog;
    let Some(name) = catalog.name_of(&tool).filter(|name| *name != "trails_dry_run") else {
        let constraint = Value::String("a tool this server lists (other than trails_dry_run)".into());
        let message = format!("no tool {} to check", trails_core::validate::echo_name(&tool));
        return Err(FieldError::refuse("tool", FieldCode::OneOf, message, &Value::String(tool), constraint));
    };
    let caller =
        Caller { name: ctx.caller().map(str::to_owned), client: ctx.client().map(str::to_owned), scopes: ctx.scopes() };
    let request = CallRequest {
        tool: name,
        arguments: arguments.map(|Arguments(object)| Value::Object(object)).unwrap_or(Value::Null),
        caller,
        failures: ValidationFailures::AsError,
        attach: Attach::default(),
        dry_run: true,
    };
    match shared.pipeline.call(request).await {
        Ok(answer) => {
            let text = answer.result().text().unwrap_or_default();
            serde_json::from_str(text).map(Verdict).map_err(Error::internal)
        }
        // The checked tool is not one this caller can see (the answer a call would get).
        Err(refused) => Err(FieldError::refuse(
            "tool",
            FieldCode::OneOf,
            refused.message(),
            &Value::String(tool),
            Value::String("a tool this server lists".into()),
        )),
    }
}
