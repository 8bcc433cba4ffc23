//! `trails.resources.read`: every `trails://` resource as a read-only tool, for hosts that show
//! the model tool results but cannot read resources (the PDPP rule: resources are never the only
//! path). It reads through `resources::read`, with the caller's view, so the tool and
//! `resources/read` never disagree; what a `resource_link` in a result points at, this reads.

use base64::Engine as _;
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
    const OUTPUT_SCHEMA_MEMBER: &'static str = r#","outputSchema":{"type":"object","properties":{"uri":{"type":"string"},"mime_type":{"type":"string"},"content":{"description":"The resource's JSON (JSON and JSON-LD resources)"},"text":{"type":"string","description":"The resource's text (other text resources)"},"bytes":{"type":"integer","description":"A binary resource's size"},"offset":{"type":"integer","description":"Where this chunk of a binary resource starts, in bytes"},"base64":{"type":"string","description":"The chunk's bytes, base64 (standard, padded)"},"chunk_bytes":{"type":"integer"},"next_offset":{"type":["integer","null"]},"next_call":{"type":["object","null"],"description":"The call that reads the next chunk"}},"required":["uri","mime_type"]}"#;
    fn into_output(self) -> Result<Output> {
        Ok(Output::structured(self.0))
    }
}

/// Read a `trails://` resource: the schema (`trails://schema`), statistics (`trails://stats`),
/// the capability manifest (`trails://capabilities`), node types and their instance counts
/// (`trails://kg/types`), a page of instances (`trails://kg/<Type>?where=<field>=<value>`), one
/// instance (`trails://kg/<Type>/<id>`), the latest provenance (`trails://prov/latest`, builder)
/// or a link a tool result gave. A binary resource (a blob, `trails://blob/<sha256>`) answers with
/// its size and type and its bytes a chunk at a time, base64, from `offset`: follow `next_call`
/// to the end (`next_offset` null).
#[capability(id = "trails.resources.read", version = "1.0.0", side_effects(none), idempotent)]
async fn read(
    ctx: &Ctx,
    /// The resource's URI, `trails://…`.
    #[predicate(pattern = "^trails://", max_length = 4096)]
    uri: String,
    /// A binary resource's chunk to read, from this byte (default 0): the previous chunk's
    /// `next_offset`.
    #[predicate(min_value = 0)]
    offset: Option<i64>,
) -> Result<ResourceRead> {
    let shared = shared(ctx)?;
    // A blob's bytes straight from the store: a chunk is read without encoding the whole blob.
    if let Some(sha256) = uri.strip_prefix("trails://blob/").filter(|sha| trails_core::declare::blob::is_sha256(sha)) {
        let kg = shared.resources.kg.as_ref().ok_or_else(|| Error::not_found(format!("no resource {uri}")))?;
        let stored = kg.store().blob(sha256.to_owned()).await.map_err(trails_kg::store_failed)?;
        let blob = stored.ok_or_else(|| Error::not_found(format!("no resource {uri}")))?;
        let offset = offset.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
        return chunk(&uri, blob.media_type(), blob.bytes(), offset, shared.mcp.tool_window_chars).map(ResourceRead);
    }
    if let Some(offset) = offset {
        let message =
            "`offset` reads a binary resource (trails://blob/<sha256>) in chunks; this resource is read whole";
        return Err(FieldError::refuse("offset", FieldCode::OneOf, message, &json!(offset), json!("a blob URI")));
    }
    let caller =
        Caller { name: ctx.caller().map(str::to_owned), client: ctx.client().map(str::to_owned), scopes: ctx.scopes() };
    let view = shared.view(&caller);
    let reader = (view, caller.is_authenticated());
    let read = crate::resources::read(&shared.resources, shared, &uri, ctx.trace_id(), reader).await;
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
        // Blobs are read above; no other resource is binary.
        ResourceContents::BlobResourceContents { mime_type, .. } => {
            return Err(Error::internal(format!("{uri} read as binary ({mime_type:?}) outside the blob store")))
        }
        _ => return Err(Error::internal(format!("{uri} read as contents of a kind this tool does not know"))),
    }))
}

/// The chunk of `bytes` from `offset` whose answer — base64 and the call that reads on — fits
/// `window` characters (at least one byte, so reading always advances).
pub(crate) fn chunk(uri: &str, mime_type: &str, bytes: &[u8], offset: usize, window: usize) -> Result<Value> {
    if offset > bytes.len() {
        let message = format!("offset {offset} is past the end of {uri} ({} bytes)", bytes.len());
        return Err(FieldError::refuse("offset", FieldCode::MaxValue, message, &json!(offset), json!(bytes.len())));
    }
    let answer = |end: usize| {
        let next = (end < bytes.len()).then_some(end);
        let next_call = next.map_or(
            Value::Null,
            |next| json!({ "tool": "trails_resources_read", "arguments": { "uri": uri, "offset": next } }),
        );
        json!({ "uri": uri, "mime_type": mime_type, "bytes": bytes.len(), "offset": offset,
                "chunk_bytes": end - offset, "base64": base64::engine::general_purpose::STANDARD.encode(&bytes[offset..end]),
                "next_offset": next, "next_call": next_call })
    };
    let fits = |end: usize| super::kg::text_len(&answer(end)) <= window;
    // Base64 is 4 characters per 3 bytes: start from what the room left allows, then step down.
    let room = window.saturating_sub(super::kg::text_len(&answer(offset)));
    let mut end = bytes.len().min(offset + (room / 4 * 3).max(1));
    while end > offset + 1 && !fits(end) {
        end -= 1;
    }
    Ok(answer(end))
}
