//! The blocks of a tool result's `content` (and of a prompt's messages): text, images, audio,
//! embedded resources and links to resources, each with MCP's optional annotations. They
//! serialise in MCP's own shape, so every transport sends them as they are. A capability returns
//! one ([`Content`]) or several (`Vec<Content>`: mixed content); bytes are given as bytes and
//! sent base64-encoded, as MCP requires.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// One block of a result's `content`.
///
/// ```
/// use trails::prelude::*;
///
/// /// The chart of this week's sales.
/// #[capability(id = "sales.chart", version = "1.0.0", side_effects(none))]
/// async fn chart() -> Result<Vec<Content>> {
///     let png: &[u8] = b"\x89PNG\r\n\x1a\n";
///     Ok(vec![Content::text("Sales, this week:"), Content::image(png, "image/png").for_user()])
/// }
/// # fn main() {}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Who it is for, how much it matters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// An image: base64 data and its MIME type.
    #[serde(rename_all = "camelCase")]
    Image {
        /// The bytes, base64-encoded.
        data: String,
        /// `image/png`, `image/jpeg`, ….
        mime_type: String,
        /// Who it is for, how much it matters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// Audio: base64 data and its MIME type.
    #[serde(rename_all = "camelCase")]
    Audio {
        /// The bytes, base64-encoded.
        data: String,
        /// `audio/wav`, `audio/mpeg`, ….
        mime_type: String,
        /// Who it is for, how much it matters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A resource's contents, embedded.
    Resource {
        /// The resource.
        resource: Embedded,
        /// Who it is for, how much it matters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A link to a resource the client can read (`resources/read`), MCP 2025-06-18+.
    #[serde(rename_all = "camelCase")]
    ResourceLink {
        /// Its URI.
        uri: String,
        /// What it is, readable: `Requirement REQ-1`.
        name: String,
        /// What `resources/read` answers with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its size in bytes, when known (a blob).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
        /// Who it is for, how much it matters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
}

/// An embedded resource's contents: text or bytes, under its URI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Embedded {
    /// Text contents.
    #[serde(rename_all = "camelCase")]
    Text {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its text.
        text: String,
    },
    /// Binary contents.
    #[serde(rename_all = "camelCase")]
    Blob {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its bytes, base64-encoded.
        blob: String,
    },
}

/// MCP's annotations on a block: whom it is for and how much it matters (hosts may use them to
/// show a block to the user only, or to drop the least important first).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Whom the block is for; empty: unsaid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audience: Vec<Audience>,
    /// How much it matters, from 0 (least) to 1 (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
}

/// Who a block is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Audience {
    /// The person using the host.
    User,
    /// The model.
    Assistant,
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text { text: text.into(), annotations: None }
    }
    /// An image of these bytes (sent base64-encoded) and MIME type.
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Content {
        Content::Image { data: base64(bytes.as_ref()), mime_type: mime_type.into(), annotations: None }
    }
    /// Audio of these bytes (sent base64-encoded) and MIME type.
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Content {
        Content::Audio { data: base64(bytes.as_ref()), mime_type: mime_type.into(), annotations: None }
    }
    /// An embedded resource.
    pub fn embedded(resource: Embedded) -> Content {
        Content::Resource { resource, annotations: None }
    }
    /// A link to the resource at `uri`, named `name`.
    pub fn link(uri: impl Into<String>, name: impl Into<String>) -> Content {
        Content::ResourceLink { uri: uri.into(), name: name.into(), mime_type: None, size: None, annotations: None }
    }

    /// The same block for the person using the host, not the model (`audience: ["user"]`).
    pub fn for_user(self) -> Content {
        self.annotated(|annotations| annotations.audience = vec![Audience::User])
    }
    /// The same block for the model only (`audience: ["assistant"]`).
    pub fn for_assistant(self) -> Content {
        self.annotated(|annotations| annotations.audience = vec![Audience::Assistant])
    }
    /// The same block with this priority, from 0 (least) to 1 (required), clamped.
    pub fn with_priority(self, priority: f64) -> Content {
        let priority = if priority.is_nan() { 0.0 } else { priority.clamp(0.0, 1.0) };
        self.annotated(|annotations| annotations.priority = Some(priority))
    }
    /// The block's annotations, if any.
    pub fn annotations(&self) -> Option<&Annotations> {
        match self {
            Content::Text { annotations, .. }
            | Content::Image { annotations, .. }
            | Content::Audio { annotations, .. }
            | Content::Resource { annotations, .. }
            | Content::ResourceLink { annotations, .. } => annotations.as_ref(),
        }
    }

    fn annotated(mut self, change: impl FnOnce(&mut Annotations)) -> Content {
        let (Content::Text { annotations, .. }
        | Content::Image { annotations, .. }
        | Content::Audio { annotations, .. }
        | Content::Resource { annotations, .. }
        | Content::ResourceLink { annotations, .. }) = &mut self;
        change(annotations.get_or_insert_with(Annotations::default));
        self
    }
}

impl Embedded {
    /// Text contents at `uri`.
    pub fn text(uri: impl Into<String>, mime_type: impl Into<String>, text: impl Into<String>) -> Embedded {
        Embedded::Text { uri: uri.into(), mime_type: Some(mime_type.into()), text: text.into() }
    }
    /// These bytes (sent base64-encoded) at `uri`.
    pub fn blob(uri: impl Into<String>, mime_type: impl Into<String>, bytes: impl AsRef<[u8]>) -> Embedded {
        Embedded::Blob { uri: uri.into(), mime_type: Some(mime_type.into()), blob: base64(bytes.as_ref()) }
    }
    /// Its URI.
    pub fn uri(&self) -> &str {
        match self {
            Embedded::Text { uri, .. } | Embedded::Blob { uri, .. } => uri,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_block_serialises_in_mcps_shape() {
        let blocks = vec![
            Content::text("hi"),
            Content::image([1, 2, 3], "image/png").for_user().with_priority(2.0),
            Content::audio(b"RIFF", "audio/wav"),
            Content::embedded(Embedded::text("test://e", "text/plain", "body")),
            Content::embedded(Embedded::blob("test://b", "image/png", [0xff])),
            Content::link("trails://kg/Requirement/R-1", "Requirement R-1"),
        ];
        let wire = serde_json::to_value(&blocks).unwrap();
        assert_eq!(
            wire,
            json!([
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AQID", "mimeType": "image/png", "annotations": {"audience": ["user"], "priority": 1.0}},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "test://e", "mimeType": "text/plain", "text": "body"}},
                {"type": "resource", "resource": {"uri": "test://b", "mimeType": "image/png", "blob": "/w=="}},
                {"type": "resource_link", "uri": "trails://kg/Requirement/R-1", "name": "Requirement R-1"},
            ])
        );
        let read: Vec<Content> = serde_json::from_value(wire).unwrap();
        assert_eq!(read, blocks, "and reads back as it was (the idempotency ledger keeps results as JSON)");
    }
}
