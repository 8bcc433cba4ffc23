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
