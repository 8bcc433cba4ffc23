//! The capability manifest: the canonical descriptors the macros emitted, joined.

use crate::registry::{Registry, ToolEntry};

/// JSON-LD context under which every canonical term expands (none is dropped: checked with a
/// JSON-LD processor in `tests/tests/it/manifest.rs`). Shapes are IRIs (they resolve at
/// `/shapes/{iri}`); `deprecates` is a capability id, a plain string, not an IRI.
pub const CONTEXT: &str = r#"{"@vocab":"https://w3id.org/trails/capability#","xsd":"http://www.w3.org/2001/XMLSchema#","input_shape":{"@type":"@id"},"output_shape":{"@type":"@id"},"parameters":{"@type":"@json"},"display_roles":{"@type":"@json"}}"#;

/// The whole manifest. Descriptors are spliced in as emitted, so their canonical field order
/// survives (a JSON map round-trip would sort it).
pub fn render(registry: &Registry) -> String {
    render_tools(registry.tools().map(ToolEntry::canonical))
}

/// The manifest of these canonical descriptors (the tools one caller may see, each as the
/// server publishes it: `side_effects` under its own `[kg] base`, its provenance).
pub fn render_tools<'a>(canonicals: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::from("{\"@context\":");
    out.push_str(CONTEXT);
    out.push_str(",\"@graph\":[");
    for (index, canonical) in canonicals.into_iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str(canonical);
    }
    out.push_str("]}");
    out
}

impl Registry {
    /// The capability manifest (JSON-LD) of every tool: what `GET /.well-known/capabilities`
    /// serves a caller who may see them all.
    pub fn manifest(&self) -> String {
        render(self)
    }
}
