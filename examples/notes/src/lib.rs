//! The guide's first app (`runtime/guide/01-first-app.md`): capabilities and nothing else — no
//! node type, so no knowledge graph. What every app is served without one: the tools, the
//! manifest (over HTTP and as the resource `trails://capabilities`), `trails://schema` and
//! `trails://stats`.

use trails::prelude::*;

#[shape(iri = "https://example.org/notes#EchoInput")]
pub struct EchoInput {
    /// Text to echo.
    #[predicate(min_length = 1, max_length = 200)]
    pub text: String,
}

/// Echo the text back.
#[capability(id = "notes.echo", version = "1.0.0", side_effects(none), idempotent)]
async fn echo(input: EchoInput) -> Result<EchoInput> {
    Ok(input)
}

/// How many characters the text has.
#[capability(id = "notes.length", version = "1.0.0", side_effects(none), idempotent)]
async fn length(input: EchoInput) -> Result<u64> {
    Ok(input.text.chars().count() as u64)
}

/// Name this from `main` (`App::include`) so the linker keeps the capabilities above.
pub fn link() {}
