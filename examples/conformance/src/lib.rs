//! The fixture of the official MCP conformance suite (`@modelcontextprotocol/conformance`),
//! declared as any Trails app declares its capabilities: each tool, resource and prompt the
//! suite's scenarios name, with the answers they expect (the suite's reference server,
//! `everything-server.ts`, gives the same). `cargo xtask conformance` serves it and runs the
//! suite at each requirement set; `expected-failures-*.yaml` names what still fails, and why.

use base64::Engine as _;
use trails::prelude::*;

/// A 1×1 PNG (the suite's own test image).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV file with no samples (the suite's own test sound).
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn png() -> Vec<u8> {
    decode(PNG)
}

fn decode(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(text).expect("the fixtures are base64")
}

/// Answers with a fixed text block (the suite calls it without `arguments`).
#[capability(id = "test_simple_text", version = "1.0.0", side_effects(none), idempotent)]
async fn simple_text() -> Result<String> {
    Ok("This is a simple text response for testing.".to_owned())
}

/// Answers with an image.
#[capability(id = "test_image_content", version = "1.0.0", side_effects(none), idempotent)]
async fn image_content() -> Result<Content> {
    Ok(Content::image(png(), "image/png"))
}

/// Answers with a sound.
#[capability(id = "test_audio_content", version = "1.0.0", side_effects(none), idempotent)]
async fn audio_content() -> Result<Content> {
    Ok(Content::audio(decode(WAV), "audio/wav"))
}

/// Answers with a resource's contents, embedded.
#[capability(id = "test_embedded_resource", version = "1.0.0", side_effects(none), idempotent)]
async fn embedded_resource() -> Result<Content> {
    Ok(Content::embedded(Embedded::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )))
}

/// Answers with text, an image and an embedded resource.
#[capability(id = "test_multiple_content_types", version = "1.0.0", side_effects(none), idempotent)]
async fn multiple_content_types() -> Result<Vec<Content>> {
    Ok(vec![
        Content::text("Multiple content types test:"),
        Content::image(png(), "image/png"),
        Content::embedded(Embedded::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )),
    ])
}

/// Reports its progress at 0, 50 and 100 of 100, then answers with the request's progress token.
#[capability(id = "test_tool_with_progress", version = "1.0.0", side_effects(none), idempotent)]
async fn tool_with_progress(ctx: &Ctx) -> Result<String> {
    for done in [0.0, 50.0, 100.0] {
        ctx.progress(done, Some(100.0), Some(&format!("Completed step {done} of 100"))).await;
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok(match ctx.request().progress_token() {
        Some(serde_json::Value::String(token)) => token.clone(),
        Some(token) => token.to_string(),
        None => "no progress token".to_owned(),
    })
}

/// Echoes its region, which the client sends as the `Mcp-Param-Region` header too (SEP-2243).
#[capability(id = "test_custom_headers", version = "1.0.0", side_effects(none), idempotent)]
async fn custom_headers(
    /// Where the caller is.
    #[predicate(header = "Region")]
    region: String,
) -> Result<String> {
    Ok(format!("Region: {region}"))
}

/// Fails as a tool fails: an `isError` result the model reads, not a protocol error.
#[capability(id = "test_error_handling", version = "1.0.0", side_effects(none), idempotent)]
async fn error_handling() -> Result<String> {
    Err(Error::precondition_failed("This tool intentionally returns an error for testing"))
}

/// Logs three messages at `info` as it runs (to a client that asked for them).
#[capability(id = "test_tool_with_logging", version = "1.0.0", side_effects(none), idempotent)]
async fn tool_with_logging(ctx: &Ctx) -> Result<String> {
    for message in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
        ctx.log(LogLevel::Info, message).await;
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok("Logged three messages.".to_owned())
}

/// Answers without logging: no `notifications/message` unless the request asks for a level.
#[capability(id = "test_logging_tool", version = "1.0.0", side_effects(none), idempotent)]
async fn logging_tool() -> Result<String> {
    Ok("Logged nothing: the request named no log level.".to_owned())
}

/// Who the user is (an elicitation's form).
#[shape(iri = "https://example.org/conformance#UserName")]
pub struct UserName {
    /// Their name.
    pub name: String,
}

/// Whether the user agrees (an elicitation's form).
#[shape(iri = "https://example.org/conformance#Confirmation")]
pub struct Confirmation {
    /// Yes or no.
    pub ok: bool,
}

/// The user's favourite colour (an elicitation's form).
#[shape(iri = "https://example.org/conformance#Colour")]
pub struct Colour {
    /// A colour.
    pub color: String,
}

/// What a prompt should be about (an elicitation's form).
#[shape(iri = "https://example.org/conformance#PromptContext")]
pub struct PromptContext {
    /// The context.
    pub context: String,
}

fn answer_of<T>(elicited: Elicited<T>) -> Result<T> {
    elicited.accepted().ok_or_else(|| Error::precondition_failed("the user gave no answer"))
}

/// Asks the user's name, then greets them.
#[capability(id = "test_input_required_result_elicitation", version = "1.0.0", side_effects(none), idempotent)]
async fn input_required_elicitation(ctx: &Ctx) -> Result<String> {
    let user = answer_of(ctx.elicit::<UserName>("user_name", "What is your name?").await?)?;
    Ok(format!("Hello, {}!", user.name))
}

/// Asks the client's model a question, and answers with what it said.
#[capability(id = "test_input_required_result_sampling", version = "1.0.0", side_effects(none), idempotent)]
async fn input_required_sampling(ctx: &Ctx) -> Result<String> {
    let sampled = ctx.sample("capital_question", Sample::user("What is the capital of France?", 100)).await?;
    Ok(format!("The model said: {}", sampled.text()))
}

/// Asks the client for its roots, and names them.
#[capability(id = "test_input_required_result_list_roots", version = "1.0.0", side_effects(none), idempotent)]
async fn input_required_list_roots(ctx: &Ctx) -> Result<String> {
    let roots = ctx.roots("client_roots").await?;
    let uris: Vec<_> = roots.iter().map(|root| root.uri.as_str()).collect();
    Ok(format!("The client's roots: {}", uris.join(", ")))
}

/// Asks for a confirmation; its answer comes back with the state the server sealed.
#[capability(id = "test_input_required_result_request_state", version = "1.0.0", side_effects(none), idempotent)]
async fn input_required_request_state(ctx: &Ctx) -> Result<String> {
    let confirmed = answer_of(ctx.elicit::<Confirmation>("confirm", "Please confirm").await?)?;
    Ok(format!("state-ok: confirmed = {}", confirmed.ok))
}

/// Asks the user, the client's model and the client's roots at once.
#[capability(id = "test_input_required_result_multiple_inputs", version = "1.0.0", side_effects(none), idempotent)]
async fn input_required_multiple_inputs(ctx: &Ctx) -> Result<String> {
    let (user, greeting, roots) = tokio::join!(
        ctx.elicit::<UserName>("user_name", "What is your name?"),
        ctx.sample("greeting", Sample::user("Generate a greeting", 50)),
        ctx.roots("client_roots"),
    );
    let (user, greeting, roots) = (answer_of(user?)?, greeting?, roots?);
    Ok(format!("{} {} ({} roots)", greeting.text(), user.name, roots.len()))
}

/// Asks two questions, one round after the other.
#[capability(id = "test_input_required_result_multi_round", version = "1.0.0", side_effects(none), idempotent)]
async fn input_required_multi_round(ctx: &Ctx) -> Result<String> {
    let user = answer_of(ctx.elicit::<UserName>("step1", "Step 1: What is your name?").await?)?;
    let colour = answer_of(ctx.elicit::<Colour>("step2", "Step 2: What is your favorite color?").await?)?;
    Ok(format!("{} likes {}", user.name, colour.color))
}

/// Asks for a confirmation under a state the server checks.
#[capability(id = "test_input_required_result_tampered_state", version = "1.0.0", side_effects(none), idempotent)]
async fn input_required_tampered_state(ctx: &Ctx) -> Result<String> {
    let confirmed = answer_of(ctx.elicit::<Confirmation>("confirm", "Please confirm").await?)?;
    Ok(format!("confirmed = {}", confirmed.ok))
}

/// Asks the user and the client's model, each only if the client can be asked it.
#[capability(id = "test_input_required_result_capabilities", version = "1.0.0", side_effects(none), idempotent)]
async fn input_required_capabilities(ctx: &Ctx) -> Result<String> {
    let (user, sampled) = tokio::join!(
        ctx.elicit::<UserName>("user_name", "What is your name?"),
        ctx.sample("question", Sample::user("What is the capital of France?", 100)),
    );
    // A client that cannot be asked one of them gets the other only.
    let name = user.ok().and_then(Elicited::accepted).map_or("someone".to_owned(), |user| user.name);
    let said = sampled.map_or_else(|error| error.to_string(), |sampled| sampled.text());
    Ok(format!("{name}: {said}"))
}

/// Needs the client's model: a client that did not declare `sampling` gets `-32021`.
#[capability(id = "test_missing_capability", version = "1.0.0", side_effects(none), idempotent)]
async fn missing_capability(ctx: &Ctx) -> Result<String> {
    let sampled = ctx.sample("question", Sample::user("What is the capital of France?", 100)).await?;
    Ok(sampled.text())
}

/// Asks the user on the request's own answer (an input-required result), never as a request
/// of the server's own.
#[capability(id = "test_streaming_elicitation", version = "1.0.0", side_effects(none), idempotent)]
async fn streaming_elicitation(ctx: &Ctx) -> Result<String> {
    let user = answer_of(ctx.elicit::<UserName>("user_name", "What is your name?").await?)?;
    Ok(format!("Hello, {}!", user.name))
}

/// Changes the tool list (`test_toggled_tool` comes or goes): listeners hear of it.
#[capability(id = "test_trigger_tool_change", version = "1.0.0", side_effects(none))]
async fn trigger_tool_change(ctx: &Ctx) -> Result<String> {
    let control = ctx.extension::<trails::serve::Control>().ok_or_else(|| Error::internal("no server control"))?;
    let enabled = TOGGLED.fetch_xor(true, std::sync::atomic::Ordering::SeqCst);
    control.set_tool_enabled("test_toggled_tool", !enabled).await.map_err(Error::internal)?;
    Ok(format!("test_toggled_tool is {}", if enabled { "off" } else { "on" }))
}

static TOGGLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Comes and goes with `test_trigger_tool_change`.
#[capability(id = "test_toggled_tool", version = "1.0.0", side_effects(none), idempotent)]
async fn toggled_tool() -> Result<String> {
    Ok("here".to_owned())
}

/// What `test_elicitation` asks for.
#[shape(iri = "https://example.org/conformance#Contact")]
pub struct Contact {
    /// User's response
    pub username: String,
    /// User's email address
    pub email: String,
}

/// What the user answered, as the suite reads it.
fn described<T: serde::Serialize>(elicited: Elicited<T>) -> String {
    match elicited {
        Elicited::Accepted(content) => {
            format!("action=accept, content={}", serde_json::to_string(&content).unwrap_or_default())
        }
        Elicited::Declined => "action=decline".to_owned(),
        Elicited::Cancelled => "action=cancel".to_owned(),
    }
}

/// Asks the client's model `prompt` (a 2025 session's `sampling/createMessage`).
#[capability(id = "test_sampling", version = "1.0.0", side_effects(none), idempotent)]
async fn sampling(
    ctx: &Ctx,
    /// The prompt to send to the LLM.
    prompt: String,
) -> Result<String> {
    let sampled = ctx.sample("prompt", Sample::user(prompt, 100)).await?;
    Ok(format!("LLM response: {}", sampled.text()))
}

/// Asks the user `message` (a 2025 session's `elicitation/create`).
#[capability(id = "test_elicitation", version = "1.0.0", side_effects(none), idempotent)]
async fn elicitation(
    ctx: &Ctx,
    /// The message to show the user.
    message: String,
) -> Result<String> {
    let answer = ctx.elicit::<Contact>("contact", &message).await?;
    Ok(format!("User response: {}", described(answer)))
}

/// A form whose every field starts with a value (SEP-1034).
#[shape(iri = "https://example.org/conformance#Defaults")]
pub struct Defaults {
    /// A name.
    #[predicate(default = "John Doe")]
    pub name: Option<String>,
    /// An age.
    #[predicate(default = 30)]
    pub age: Option<i64>,
    /// A score.
    #[predicate(default = 95.5)]
    pub score: Option<f64>,
    /// A status.
    #[predicate(one_of = ["active", "inactive", "pending"], default = "active")]
    pub status: Option<String>,
    /// Whether it is verified.
    #[predicate(default = true)]
    pub verified: Option<bool>,
}

/// Asks for a form whose fields have defaults.
#[capability(id = "test_elicitation_sep1034_defaults", version = "1.0.0", side_effects(none), idempotent)]
async fn elicitation_defaults(ctx: &Ctx) -> Result<String> {
    let answer = ctx.elicit::<Defaults>("defaults", "Please review the defaults").await?;
    Ok(format!("Elicitation completed: {}", described(answer)))
}

/// Three options, named as they are sent.
#[shape(iri = "https://example.org/conformance#Option", rename_all = "lowercase")]
pub enum Choice {
    /// The first.
    Option1,
    /// The second.
    Option2,
    /// The third.
    Option3,
}

/// A string field whose schema is written by hand (`trails::declare::Schema`): the forms of enum
/// SEP-1330 names that a `#[shape]` enum does not produce (titled values, legacy `enumNames`).
macro_rules! choice {
    ($name:ident, $members:literal, [$($value:literal),*]) => {
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(serde_json::Value);

        impl trails::declare::Schema for $name {
            const SCHEMA_MEMBERS: &'static str = $members;
            // A choice a form shows (`ctx.elicit` takes it).
            const FORM_FIELD: bool = true;
            fn validate_at(value: &serde_json::Value, path: &mut trails::error::Path, errors: &mut trails::error::Errors) {
                let allowed = [$($value),*];
                let one = |item: &serde_json::Value| item.as_str().is_some_and(|text| allowed.contains(&text));
                let fits = match value {
                    serde_json::Value::Array(items) => $members.starts_with(r#""type":"array""#) && items.iter().all(one),
                    item => !$members.starts_with(r#""type":"array""#) && one(item),
                };
                if !fits {
                    let field = path.current();
                    let message = format!("{field} must be {}", allowed.join(" or "));
                    let constraint = serde_json::json!(allowed);
                    errors.push(FieldError { field, code: FieldCode::OneOf, message, value: value.clone(), constraint });
                }
            }
        }
    };
}

choice!(
    TitledSingle,
    r#""type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]"#,
    ["value1", "value2", "value3"]
);
choice!(
    LegacyTitled,
    r#""type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]"#,
    ["opt1", "opt2", "opt3"]
);
choice!(
    TitledMulti,
    r#""type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}"#,
    ["value1", "value2", "value3"]
);

/// A form with every kind of enum (SEP-1330).
#[shape(iri = "https://example.org/conformance#Enums")]
#[allow(non_snake_case)]
pub struct Enums {
    /// An untitled single choice.
    pub untitledSingle: Option<Choice>,
    /// A titled single choice.
    pub titledSingle: Option<TitledSingle>,
    /// A titled single choice, the legacy way.
    pub legacyEnum: Option<LegacyTitled>,
    /// An untitled multiple choice.
    pub untitledMulti: Option<Vec<Choice>>,
    /// A titled multiple choice.
    pub titledMulti: Option<TitledMulti>,
}

/// Asks for a form with every kind of enum.
#[capability(id = "test_elicitation_sep1330_enums", version = "1.0.0", side_effects(none), idempotent)]
async fn elicitation_enums(ctx: &Ctx) -> Result<String> {
    let answer = ctx.elicit::<Enums>("enums", "Please choose").await?;
    Ok(format!("Elicitation completed: {}", described(answer)))
}

/// A JSON Schema 2020-12 input the macros do not write (`$defs`, `$ref`, `allOf`/`anyOf`,
/// `if`/`then`/`else`), written by hand with its own validator (`trails::declare::Schema`).
macro_rules! contact_schema {
    () => {
        r##""$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false"##
    };
}

#[derive(serde::Serialize, serde::Deserialize)]
pub struct ContactInput(serde_json::Map<String, serde_json::Value>);

impl trails::declare::Schema for ContactInput {
    const SCHEMA_MEMBERS: &'static str = contact_schema!();
    fn validate_at(value: &serde_json::Value, path: &mut trails::error::Path, errors: &mut trails::error::Errors) {
        let mut refuse = |field: &str, code: FieldCode, message: String, constraint: serde_json::Value| {
            let field =
                if path.current().is_empty() { field.to_owned() } else { format!("{}/{field}", path.current()) };
            let value = value.get(&field).cloned().unwrap_or(serde_json::Value::Null);
            errors.push(FieldError { field, code, message, value, constraint });
        };
        let Some(object) = value.as_object() else {
            refuse("", FieldCode::Type, "the arguments must be an object".into(), serde_json::json!("object"));
            return;
        };
        for (name, value) in object {
            let fits = match name.as_str() {
                "name" | "phone" | "email" => value.is_string(),
                "contactMethod" => matches!(value.as_str(), Some("phone" | "email")),
                "address" => {
                    value.as_object().is_some_and(|address| address.values().all(serde_json::Value::is_string))
                }
                _ => {
                    refuse(
                        name,
                        FieldCode::UnknownField,
                        format!("{name} is not an argument"),
                        serde_json::json!(false),
                    );
                    continue;
                }
            };
            if !fits {
                refuse(name, FieldCode::Type, format!("{name} does not fit its schema"), serde_json::Value::Null);
            }
        }
        let needs = if object.get("contactMethod").and_then(|method| method.as_str()) == Some("phone") {
            "phone"
        } else {
            "email"
        };
        if !object.contains_key(needs) {
            refuse(
                needs,
                FieldCode::Required,
                format!("{needs} is required for this contact method"),
                serde_json::json!(needs),
            );
        }
    }
}

impl trails::declare::Shape for ContactInput {
    const NAME: &'static str = "ContactInput";
    const IRI: &'static str = "https://example.org/conformance#ContactInput";
    const IRI_JSON: &'static str = "\"https://example.org/conformance#ContactInput\"";
    const SCHEMA: &'static str = concat!("{", contact_schema!(), "}");
    const LIST_OUTPUT_SCHEMA_MEMBER: &'static str = "";
}

/// Tool with JSON Schema 2020-12 features
#[capability(id = "json_schema_2020_12_tool", version = "1.0.0", side_effects(none), idempotent)]
async fn json_schema_2020_12_tool(input: ContactInput) -> Result<String> {
    Ok(format!("{} fields", input.0.len()))
}

// The Tasks extension's fixtures (`tasks-*`): capabilities declared `task` run as MCP tasks
// when they outlast `[tasks] inline_ms` (500 ms here, the default), or at once with
// `ctx.become_task()`.

/// Greets `name` at once (never a task).
#[capability(id = "greet", version = "1.0.0", side_effects(none), idempotent)]
async fn greet(
    /// Who to greet.
    name: String,
) -> Result<String> {
    Ok(format!("Hello, {name}!"))
}

/// Waits `seconds`, then answers: a task when that is longer than the inline bound; cancelled
/// as soon as it is asked to be.
#[capability(id = "slow_compute", version = "1.0.0", side_effects(none), idempotent, task)]
async fn slow_compute(
    ctx: &Ctx,
    /// How long to work.
    #[predicate(min_value = 0, max_value = 3600)]
    seconds: u64,
    /// What to call the result.
    label: Option<String>,
) -> Result<String> {
    tokio::select! {
        () = tokio::time::sleep(std::time::Duration::from_secs(seconds)) => {}
        () = ctx.cancelled() => return Err(Error::precondition_failed("cancelled")),
    }
    Ok(format!("{} done after {seconds} s", label.as_deref().unwrap_or("compute")))
}

/// Fails as a tool does (an error result) after about a second; always a task.
#[capability(id = "failing_job", version = "1.0.0", side_effects(none), idempotent, task = "required")]
async fn failing_job() -> Result<String> {
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    Err(Error::precondition_failed("the job failed, as it always does"))
}

/// Breaks (a panic: a protocol error) after about a second.
#[capability(id = "protocol_error_job", version = "1.0.0", side_effects(none), idempotent, task)]
async fn protocol_error_job() -> Result<String> {
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    panic!("the job broke");
}

/// Whether to go ahead (a task's elicitation form).
#[shape(iri = "https://example.org/conformance#DeleteConfirmation")]
pub struct DeleteConfirmation {
    /// Yes or no.
    pub confirm: bool,
}

/// A name, confirmed (a task's elicitation form).
#[shape(iri = "https://example.org/conformance#NamedConfirmation")]
pub struct NamedConfirmation {
    /// A name.
    pub name: String,
    /// Yes or no.
    pub confirm: bool,
}

/// Becomes a task, then asks the user to confirm the deletion of `filename`.
#[capability(id = "confirm_delete", version = "1.0.0", side_effects(none), task)]
async fn confirm_delete(
    ctx: &Ctx,
    /// The file to delete.
    filename: String,
) -> Result<String> {
    ctx.become_task().await;
    let answer = ctx.elicit::<DeleteConfirmation>("confirm", &format!("Delete {filename}?")).await?;
    match answer.accepted() {
        Some(DeleteConfirmation { confirm: true }) => Ok(format!("Deleted {filename}")),
        _ => Ok(format!("Kept {filename}")),
    }
}

/// Becomes a task, then asks two questions at once.
#[capability(id = "multi_input", version = "1.0.0", side_effects(none), task)]
async fn multi_input(ctx: &Ctx) -> Result<String> {
    ctx.become_task().await;
    let (first, second) = tokio::join!(
        ctx.elicit::<NamedConfirmation>("first", "The first name?"),
        ctx.elicit::<NamedConfirmation>("second", "The second name?"),
    );
    let (first, second) = (answer_of(first?)?, answer_of(second?)?);
    Ok(format!("{} and {}", first.name, second.name))
}

/// Asks the user's name first (as input-required results), then works on as a task.
#[capability(id = "test_tool_with_task", version = "1.0.0", side_effects(none), task = "required")]
async fn tool_with_task(ctx: &Ctx) -> Result<String> {
    let user = answer_of(ctx.elicit::<UserName>("user_name", "What is your name?").await?)?;
    ctx.become_task().await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    Ok(format!("Hello, {}! Your task is done.", user.name))
}

/// A prompt that asks the user what it should be about.
#[prompt(name = "test_input_required_result_prompt")]
async fn input_required_prompt(ctx: &Ctx) -> Result<String> {
    let context = answer_of(ctx.elicit::<PromptContext>("user_context", "What context should the prompt use?").await?)?;
    Ok(format!("Write about {}.", context.context))
}

/// A prompt without arguments.
#[prompt(name = "test_simple_prompt", title = "Simple prompt")]
async fn simple_prompt() -> Result<String> {
    Ok("This is a simple prompt for testing.".to_owned())
}

/// A prompt with two required arguments.
#[prompt(name = "test_prompt_with_arguments")]
async fn prompt_with_arguments(
    /// The first argument.
    arg1: String,
    /// The second argument.
    arg2: String,
) -> Result<String> {
    Ok(format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))
}

/// A prompt that embeds the resource it is given.
#[prompt(name = "test_prompt_with_embedded_resource")]
#[allow(non_snake_case)]
async fn prompt_with_embedded_resource(
    /// The URI of the resource to embed.
    resourceUri: String,
) -> Result<Vec<PromptMessage>> {
    Ok(vec![
        PromptMessage::user(Content::embedded(Embedded::text(
            resourceUri,
            "text/plain",
            "Embedded resource content for testing.",
        ))),
        PromptMessage::user("Please process the embedded resource above."),
    ])
}

/// A prompt that shows an image.
#[prompt(name = "test_prompt_with_image")]
async fn prompt_with_image() -> Result<Vec<PromptMessage>> {
    Ok(vec![
        PromptMessage::user(Content::image(png(), "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ])
}

/// A fixed text resource.
#[resource(uri = "test://static-text", name = "static-text", title = "Static Text Resource", mime_type = "text/plain")]
async fn static_text() -> Result<String> {
    Ok("This is the content of the static text resource.".to_owned())
}

/// A fixed binary resource: an image.
#[resource(uri = "test://static-binary", name = "static-binary", mime_type = "image/png")]
async fn static_binary() -> Result<Vec<u8>> {
    Ok(png())
}

/// A resource clients subscribe to.
#[resource(uri = "test://watched-resource", name = "watched-resource", mime_type = "text/plain")]
async fn watched_resource() -> Result<String> {
    Ok("Watched resource content".to_owned())
}

/// The data of one item, by id.
#[resource(uri = "test://template/{id}/data", name = "template", mime_type = "application/json")]
async fn template_data(
    /// The item's id.
    id: String,
) -> Result<String> {
    Ok(serde_json::json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") }).to_string())
}

/// Name this from `main` (`App::include`) so the linker keeps the declarations above.
pub fn link() {}
