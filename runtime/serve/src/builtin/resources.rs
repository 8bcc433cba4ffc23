//! `trails.resources.read`: every `trails://` resource as a read-only tool, for hosts that show
//! the model tool results but cannot read resources (the PDPP rule: resources are never the only
//! path). It reads through `resources::read`, with the caller's view, so the tool and
//! `resources/read` never disagree; what a `resource_link` in a result points at, this reads.

use rmcp::model::{ErrorCode, ResourceContents};
use serde_json::{json, Value};

use super::kg::shared;
use crate::resources::ReadError;
use trails_core::auth::Caller;
use trails_core::declare::{Output, ToolOutput};
use trails_core::error::{Error, Result};
use trails_core::validate::{FieldCode, FieldError};
use trails_core::Ctx;
use trails_macros::capability;

/// A resource's contents: structured content with an `outputSchema`, its JSON as the text.
#[doc(hidden)]
pub struct ResourceRead(Value);

impl ToolOutput for ResourceRead {
    const OUTPUT_SCHEMA_MEMBER: &'static str = r#","outputSchema":{"type":"object","properties":{"uri":{"type":"string"},"mime_type":{"type":"string"},"content":{"description":"The resource's JSON (JSON and JSON-LD resources)"},"text":{"type":"string","description":"The resource's text (other text resources)"},"bytes":{"type":"integer","description":"A binary resource's size: its bytes go only to hosts that read resources"}},"required":["uri","mime_type"]}"#;
    fn into_output(self) -> Result<Output> {
        Ok(Output::structured(self.0))
    }
}

/// Read a `trails://` resource: the schema (`trails://schema`), statistics (`trails://stats`),
/// the capability manifest (`trails://capabilities`), node types and their instance counts
/// (`trails://kg/types`), a page of instances (`trails://kg/<Type>?where=<field>=<value>`), one
/// instance (`trails://kg/<Type>/<id>`), the latest provenance (`trails://prov/latest`, builder)
/// or a link a tool result gave. A binary resource answers with its size and type only.
#[capability(id = "trails.resources.read", version = "1.0.0", side_effects(none), idempotent)]
async fn read(
    ctx: &Ctx,
    /// The resource's URI, `trails://…`.
    #[predicate(pattern = "^trails://", max_length = 4096)]
    uri: String,
) -> Result<ResourceRead> {
    let shared = shared(ctx)?;
    let caller =
        Caller { name: ctx.caller().map(str::to_owned), client: ctx.client().map(str::to_owned), scopes: ctx.scopes() };
    let view = shared.view(&caller);
    let read = crate::resources::read(&shared.resources, shared, &uri, ctx.trace_id(), view).await;
    let result = read.map_err(|error| match error {
        ReadError::Unknown => Error::not_found(format!("no resource {}", trails_core::validate::echo_name(&uri))),
        ReadError::Other(error) if error.code == ErrorCode::INVALID_PARAMS => {
            let constraint = json!("a trails:// URI as resources/templates/list describes");
            FieldError::refuse("uri", FieldCode::Pattern, error.message.into_owned(), &json!(uri), constraint)
        }
        // Logged where it happened, under this call's trace id.
        ReadError::Other(error) => Error::internal(error.message),
    })?;
    let Some(contents) = result.contents.into_iter().next() else {
        return Err(Error::internal(format!("{uri} read as no contents")));
    };
    Ok(ResourceRead(match contents {
        ResourceContents::TextResourceContents { mime_type, text, .. } => {
            let mime_type = mime_type.unwrap_or_else(|| "text/plain".into());
            match serde_json::from_str::<Value>(&text) {
                Ok(content) if mime_type.contains("json") => {
                    json!({ "uri": uri, "mime_type": mime_type, "content": content })
                }
                _ => json!({ "uri": uri, "mime_type": mime_type, "text": text }),
            }
        }
        ResourceContents::BlobResourceContents { mime_type, blob, .. } => {
            // Standard base64 with padding: three bytes per four characters, less the padding.
            let padding = blob.bytes().rev().take_while(|&b| b == b'=').count();
            let bytes = (blob.len() / 4 * 3).saturating_sub(padding);
            let mime_type = mime_type.unwrap_or_else(|| "application/octet-stream".into());
            json!({ "uri": uri, "mime_type": mime_type, "bytes": bytes })
        }
        _ => return Err(Error::internal(format!("{uri} read as contents of a kind this tool does not know"))),
    }))
}
