//! What a `#[prompt]` returns: the messages of MCP's `GetPromptResult`, each a role and one
//! content block (text, an image, an embedded resource, …).

use serde::{Deserialize, Serialize};

use super::content::Content;
use crate::error::Error;

/// Who says a prompt's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageRole {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: MessageRole,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A message the user says.
    pub fn user(content: impl Into<Content>) -> PromptMessage {
        PromptMessage { role: MessageRole::User, content: content.into() }
    }
    /// A message the model says.
    pub fn assistant(content: impl Into<Content>) -> PromptMessage {
        PromptMessage { role: MessageRole::Assistant, content: content.into() }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Content {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Content {
        Content::text(text)
    }
}

/// What a `#[prompt]` may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    note = "return `String` (one user message), a `PromptMessage`, or `Vec<PromptMessage>`"
)]
pub trait PromptOutput {
    /// The messages.
    fn into_messages(self) -> Result<Vec<PromptMessage>, Error>;
}

impl PromptOutput for String {
    fn into_messages(self) -> Result<Vec<PromptMessage>, Error> {
        Ok(vec![PromptMessage::user(self)])
    }
}

impl PromptOutput for PromptMessage {
    fn into_messages(self) -> Result<Vec<PromptMessage>, Error> {
        Ok(vec![self])
    }
}

impl PromptOutput for Vec<PromptMessage> {
    fn into_messages(self) -> Result<Vec<PromptMessage>, Error> {
        Ok(self)
    }
}

/// The declared return type of a prompt: `trails::Result<T>` with `T: PromptOutput`.
#[diagnostic::on_unimplemented(
    message = "a prompt must return `trails::Result<T>`, found `{Self}`",
    note = "change the return type to `trails::Result<T>` where `T` is `String`, `PromptMessage` or `Vec<PromptMessage>`"
)]
pub trait PromptResult {
    /// The messages, or the handler's error.
    fn into_messages(self) -> Result<Vec<PromptMessage>, Error>;
}

impl<T: PromptOutput> PromptResult for Result<T, Error> {
    fn into_messages(self) -> Result<Vec<PromptMessage>, Error> {
        self?.into_messages()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn messages_serialise_as_mcp_prompt_messages() {
        let messages =
            vec![PromptMessage::user("Review this."), PromptMessage::assistant(Content::image([1], "image/png"))];
        assert_eq!(
            serde_json::to_value(&messages).unwrap(),
            json!([
                { "role": "user", "content": { "type": "text", "text": "Review this." } },
                { "role": "assistant", "content": { "type": "image", "data": "AQ==", "mimeType": "image/png" } },
            ])
        );
        assert_eq!(Ok::<_, Error>("hi".to_owned()).into_messages().unwrap(), vec![PromptMessage::user("hi")]);
    }
}
