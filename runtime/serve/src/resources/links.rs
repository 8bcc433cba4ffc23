//! `resource_link` blocks on tool results (MCP 2025-06-18+): a result that returns node-type
//! instances, references to them or blobs links each to its `trails://` URI, so a host that reads
//! resources can open it. Nothing depends on that: every target is also reachable through a tool
//! (`trails_kg_get`, `trails_resources_read`), the PDPP rule that resources are never the only path.
//!
//! What is linked is found from the declarations, never guessed from field names: the instances
//! of a tool whose declared output is a keyed node type (by their key), every string that is the
//! IRI of an instance of a declared node type exactly as the store makes it (a `Ref<T>`, or an
//! IRI a handler returns), and every blob's `uri`. A link names where the instance lives; one the
//! result names but the store does not hold (a preview, a blob not yet stored) reads as unknown.

use std::collections::BTreeSet;

use serde_json::Value;

use super::uri::SCHEME;
use super::Resources;
use trails_core::declare::NodeTypeInfo;
use trails_core::pipeline::{Content, ToolResult};
use trails_core::registry::ToolEntry;
use trails_kg::mapping;

/// Most links one result carries: a long list links its first items (the rest are in the result,
/// and reachable the same way).
pub(crate) const MAX_LINKS: usize = 32;
const BLOB_PREFIX: &str = "trails://blob/";

/// Append to `result` a `resource_link` for each instance, reference and blob it returns.
pub(crate) fn attach(resources: &Resources, tool: &ToolEntry, result: &mut ToolResult) {
    let Some(kg) = &resources.kg else { return };
    if result.is_error {
        return;
    }
    let mut links = Links { base: kg.base(), resources, seen: BTreeSet::new(), out: Vec::new() };
    match &result.structured_content {
        Some(structured) => {
            if let Some(node) = output_node_type(resources, tool) {
                // A list result is `{"items": […]}`; a single instance is the object itself.
                match structured.get("items").and_then(Value::as_array) {
                    Some(items) if tool.returns_list() => items.iter().for_each(|item| links.instance(node, item)),
                    _ => links.instance(node, structured),
                }
            }
            links.scan(structured);
        }
        // A text result that is one IRI (a handler returning a created instance's IRI).
        None => {
            if let [Content::Text { text, .. }] = &result.content[..] {
                links.iri(text.trim());
            }
        }
    }
    result.content.extend(links.out);
}

/// The keyed node type a tool returns (itself, or a list of it): a node type's shape IRI is its
/// class, so only the node types are looked through, not every shape.
fn output_node_type(resources: &Resources, tool: &ToolEntry) -> Option<&'static NodeTypeInfo> {
    let shape = tool.output_shape()?;
    resources.node_types.iter().copied().find(|node| node.iri == shape && node.key.is_some())
}

struct Links<'a> {
    base: &'a str,
    resources: &'a Resources,
    seen: BTreeSet<String>,
    out: Vec<Content>,
}

impl Links<'_> {
    fn push(&mut self, uri: String, name: String, mime_type: Option<String>, size: Option<u64>) {
        if self.out.len() < MAX_LINKS && self.seen.insert(uri.clone()) {
            self.out.push(Content::ResourceLink { uri, name, mime_type, size, annotations: None });
        }
    }

    /// An instance of `node` by its key.
    fn instance(&mut self, node: &'static NodeTypeInfo, value: &Value) {
        let Some(field) = node.key else { return };
        let key = match value.get(field) {
            Some(Value::String(key)) => key.clone(),
            Some(Value::Number(key)) => key.to_string(),
            _ => return,
        };
        let iri = mapping::instance_iri(self.base, node.label, &key);
        self.iri(&iri);
    }

    /// `text`, when it is the IRI of an instance of a declared node type: `<base>/<Label>/<key>`.
    fn iri(&mut self, text: &str) {
        let Some(rest) = text.strip_prefix(self.base).and_then(|rest| rest.strip_prefix('/')) else { return };
        let Some((label, segment)) = rest.split_once('/') else { return };
        if segment.is_empty() || segment.contains(['/', '?', '#']) {
            return;
        }
        let Some(node) = self.resources.node_types.iter().find(|node| node.label == label) else { return };
        let Ok(key) = percent_encoding::percent_decode_str(segment).decode_utf8() else { return };
        // Only the IRI the store itself makes for that key: what `resources/read` reads back.
        if mapping::instance_iri(self.base, node.label, &key) != text {
            return;
        }
        let uri = format!("{SCHEME}kg/{}/{segment}", node.label);
        self.push(uri, format!("{} {key}", node.label), Some("application/ld+json".into()), None);
    }

    /// Every IRI and blob in `value`, depth first, in document order.
    fn scan(&mut self, value: &Value) {
        if self.out.len() >= MAX_LINKS {
            return;
        }
        match value {
            Value::String(text) => self.iri(text),
            Value::Array(items) => items.iter().for_each(|item| self.scan(item)),
            Value::Object(object) => {
                let blob = object.get("uri").and_then(Value::as_str).filter(|uri| {
                    uri.strip_prefix(BLOB_PREFIX).is_some_and(|sha256| {
                        sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                    })
                });
                if let Some(uri) = blob {
                    let media_type = object.get("media_type").and_then(Value::as_str).map(str::to_owned);
                    let size = object.get("size").and_then(Value::as_u64);
                    let name = format!("blob {}", &uri[BLOB_PREFIX.len()..]);
                    self.push(uri.to_owned(), name, media_type, size);
                    return;
                }
                object.values().for_each(|member| self.scan(member));
            }
            _ => {}
        }
    }
}
