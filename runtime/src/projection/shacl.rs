//! The SHACL shapes: each `#[shape]` and `#[node_type]`'s `sh:NodeShape`, emitted by the macro
//! as a Turtle document, served one by one or joined into one graph, in the RDF syntax the
//! client asks for (Turtle unless it asks otherwise).

use std::collections::BTreeMap;

use oxigraph::io::{RdfFormat, RdfParser, RdfSerializer};

use crate::registry::{ShapeEntry, ToolEntry};

/// The syntaxes a shape is served in, the first the default.
const FORMATS: [(&str, RdfFormat); 4] = [
    ("text/turtle", RdfFormat::Turtle),
    ("application/n-triples", RdfFormat::NTriples),
    ("application/rdf+xml", RdfFormat::RdfXml),
    ("application/ld+json", RdfFormat::JsonLd { profile: oxigraph::io::JsonLdProfileSet::empty() }),
];

/// The media types [`negotiate`] can answer with, for a `406`.
pub(crate) fn media_types() -> Vec<&'static str> {
    FORMATS.iter().map(|(media_type, _)| *media_type).collect()
}

/// Every shape, by Rust name (two modules may declare one name) and by IRI, and the shapes of
/// the capabilities' named parameters, served only to callers who may see the capability.
pub(crate) struct Shapes {
    by_name: BTreeMap<&'static str, Vec<&'static str>>,
    by_iri: BTreeMap<&'static str, &'static str>,
    /// (tool name, shape IRI, Turtle) of each capability with named parameters.
    inputs: Vec<(&'static str, &'static str, &'static str)>,
    /// The declared shapes' Turtle, in registry order.
    documents: Vec<&'static str>,
}

impl Shapes {
    /// The shapes and node types, then the input shapes of the capabilities with named parameters.
    pub(crate) fn new(shapes: &[&'static ShapeEntry], tools: &[&'static ToolEntry]) -> Shapes {
        let mut by_name: BTreeMap<&'static str, Vec<&'static str>> = BTreeMap::new();
        let mut by_iri = BTreeMap::new();
        let mut documents = Vec::new();
        for shape in shapes {
            by_name.entry(shape.name).or_default().push(shape.shacl);
            by_iri.insert(shape.iri, shape.shacl);
            documents.push(shape.shacl);
        }
        let inputs = tools
            .iter()
            .filter(|tool| !tool.shacl.is_empty())
            .map(|tool| (tool.name, shape_iri(tool.shacl), tool.shacl))
            .collect();
        Shapes { by_name, by_iri, inputs, documents }
    }

    /// The shapes named `key`: a Rust type name (every shape of that name), or a shape IRI —
    /// a capability's input shape only when `visible(tool name)`.
    pub(crate) fn named(&self, key: &str, visible: impl Fn(&str) -> bool) -> Option<String> {
        if let Some(turtle) = self.by_iri.get(key) {
            return Some((*turtle).to_owned());
        }
        if let Some((_, _, turtle)) = self.inputs.iter().find(|(tool, iri, _)| *iri == key && visible(tool)) {
            return Some((*turtle).to_owned());
        }
        self.by_name.get(key).map(|documents| join(documents))
    }

    /// Every shape as one Turtle graph: the declared shapes, then the input shapes of the
    /// capabilities `visible` lets through.
    pub(crate) fn graph(&self, visible: impl Fn(&str) -> bool) -> String {
        let mut documents = self.documents.clone();
        documents.extend(self.inputs.iter().filter(|(tool, _, _)| visible(tool)).map(|(_, _, turtle)| *turtle));
        join(&documents)
    }
}

/// The IRI a generated shape document describes: its first subject.
fn shape_iri(turtle: &'static str) -> &'static str {
    turtle.split_once("\n<").and_then(|(_, rest)| rest.split_once("> a sh:NodeShape")).map_or("", |(iri, _)| iri)
}

/// Turtle documents as one: the prefixes once, then every shape.
fn join(documents: &[&'static str]) -> String {
    let mut out = String::new();
    for (index, document) in documents.iter().enumerate() {
        let body = if index == 0 {
            document
        } else {
            // Each document repeats the same `@prefix` lines (the macro writes them all alike).
            out.push('\n');
            document.split_once("\n\n").map_or(*document, |(_, body)| body)
        };
        out.push_str(body);
    }
    out
}

/// The served syntax for an `Accept` header: the acceptable one the client prefers most
/// (`q`, then the order of [`FORMATS`]), Turtle when it states no preference, `None` when it
/// accepts none of them.
pub(crate) fn negotiate(accept: Option<&str>) -> Option<(&'static str, RdfFormat)> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else { return Some(FORMATS[0]) };
    let mut best: Option<(f32, usize)> = None;
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media_range = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .filter_map(|q| q.trim().parse::<f32>().ok())
            .next()
            .unwrap_or(1.0);
        if q <= 0.0 {
            continue;
        }
        for (index, (media_type, _)) in FORMATS.iter().enumerate() {
            let (kind, _) = media_type.split_once('/').unwrap_or_default();
            let matches = media_range == *media_type
                || media_range == "*/*"
                || media_range.strip_suffix("/*").is_some_and(|k| k == kind);
            let better = best.is_none_or(|(best_q, best_index)| q > best_q || (q == best_q && index < best_index));
            if matches && better {
                best = Some((q, index));
            }
        }
    }
    best.map(|(_, index)| FORMATS[index])
}

/// `turtle` in `format` (Turtle itself is sent as the macros wrote it).
pub(crate) fn render(turtle: &str, format: RdfFormat) -> Result<Vec<u8>, String> {
    if format == RdfFormat::Turtle {
        return Ok(turtle.as_bytes().to_vec());
    }
    let mut serializer = RdfSerializer::from_format(format).for_writer(Vec::new());
    for quad in RdfParser::from_format(RdfFormat::Turtle).for_slice(turtle.as_bytes()) {
        let quad = quad.map_err(|e| e.to_string())?;
        serializer.serialize_quad(&quad).map_err(|e| e.to_string())?;
    }
    serializer.finish().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_gets_the_syntax_it_prefers() {
        let chosen = |accept: Option<&str>| negotiate(accept).map(|(media_type, _)| media_type);
        assert_eq!(chosen(None), Some("text/turtle"));
        assert_eq!(chosen(Some("*/*")), Some("text/turtle"));
        assert_eq!(chosen(Some("application/ld+json")), Some("application/ld+json"));
        assert_eq!(chosen(Some("text/turtle;q=0.5, application/n-triples")), Some("application/n-triples"));
        assert_eq!(chosen(Some("application/*")), Some("application/n-triples"));
        assert_eq!(chosen(Some("text/html, */*;q=0.1")), Some("text/turtle"));
        assert_eq!(chosen(Some("text/turtle;q=0, application/rdf+xml")), Some("application/rdf+xml"));
        assert_eq!(chosen(Some("text/html")), None);
        assert_eq!(chosen(Some("application/json")), None);
    }

    #[test]
    fn turtle_converts_to_every_other_syntax() {
        let turtle = "@prefix sh: <http://www.w3.org/ns/shacl#> .\n\n<https://e.org/S> a sh:NodeShape ; \
                      sh:property [ sh:path <https://e.org/p> ; sh:maxCount 1 ] .\n";
        for (media_type, format) in FORMATS {
            let text = String::from_utf8(render(turtle, format).unwrap()).unwrap();
            assert!(text.contains("https://e.org/p"), "{media_type}: {text}");
        }
    }
}
