//! The SHACL shapes: each `#[shape]` and `#[node_type]`'s `sh:NodeShape`, emitted by the macro
//! as a Turtle document, served one by one or joined into one graph (`http/shapes.rs` converts
//! them to the RDF syntax a client asks for).

use std::collections::BTreeMap;

use crate::registry::{Registry, ShapeEntry, ToolEntry};

/// Which tools are made of each shape (their input or output, nested or extended shapes
/// included). A shape is part of those tools' contracts: a caller who sees none of them is not
/// shown it, as `tools/list` does not show them. A shape no tool is made of (a node type only
/// the knowledge graph holds) is everyone's.
pub struct ShapeUsers(BTreeMap<&'static str, Vec<&'static str>>);

impl ShapeUsers {
    pub fn new<'a>(tools: impl IntoIterator<Item = &'a &'static ToolEntry>) -> ShapeUsers {
        let mut users: BTreeMap<&'static str, Vec<&'static str>> = BTreeMap::new();
        for tool in tools {
            for iri in tool.shapes() {
                let names = users.entry(iri).or_default();
                if !names.contains(&tool.name) {
                    names.push(tool.name);
                }
            }
        }
        ShapeUsers(users)
    }

    /// Whether the shape `iri` is shown to a caller who sees the tools `visible` lets through.
    pub fn shown(&self, iri: &str, visible: impl Fn(&str) -> bool) -> bool {
        self.0.get(iri).is_none_or(|tools| tools.iter().any(|tool| visible(tool)))
    }
}

/// Every shape, by Rust name (two modules may declare one name) and by IRI, and the shapes of
/// the capabilities' named parameters, served only to callers who may see the capability; a
/// declared shape is served to those who see a tool made of it ([`ShapeUsers`]).
pub struct Shapes {
    /// (IRI, Turtle) of each shape of a Rust name.
    by_name: BTreeMap<&'static str, Vec<(&'static str, &'static str)>>,
    by_iri: BTreeMap<&'static str, &'static str>,
    /// (tool name, shape IRI, Turtle) of each capability with named parameters.
    inputs: Vec<(&'static str, &'static str, &'static str)>,
    /// The declared shapes' (IRI, Turtle), in registry order.
    documents: Vec<(&'static str, &'static str)>,
    users: ShapeUsers,
}

impl Shapes {
    /// The shapes and node types, then the input shapes of the capabilities with named parameters.
    pub fn new(shapes: &[&'static ShapeEntry], tools: &[&'static ToolEntry]) -> Shapes {
        let mut by_name: BTreeMap<&'static str, Vec<(&'static str, &'static str)>> = BTreeMap::new();
        let mut by_iri = BTreeMap::new();
        let mut documents = Vec::new();
        for shape in shapes {
            by_name.entry(shape.name).or_default().push((shape.iri, shape.shacl));
            by_iri.insert(shape.iri, shape.shacl);
            documents.push((shape.iri, shape.shacl));
        }
        let inputs = tools
            .iter()
            .filter(|tool| !tool.shacl.is_empty())
            .map(|tool| (tool.name, shape_iri(tool.shacl), tool.shacl))
            .collect();
        Shapes { by_name, by_iri, inputs, documents, users: ShapeUsers::new(tools) }
    }

    /// The shapes named `key`: a Rust type name (every shape of that name), or a shape IRI —
    /// a capability's input shape only when `visible(tool name)`.
    pub fn named(&self, key: &str, visible: impl Fn(&str) -> bool) -> Option<String> {
        if let Some(turtle) = self.by_iri.get(key).filter(|_| self.users.shown(key, &visible)) {
            return Some((*turtle).to_owned());
        }
        if let Some((_, _, turtle)) = self.inputs.iter().find(|(tool, iri, _)| *iri == key && visible(tool)) {
            return Some((*turtle).to_owned());
        }
        let shown: Vec<&'static str> = self
            .by_name
            .get(key)?
            .iter()
            .filter(|(iri, _)| self.users.shown(iri, &visible))
            .map(|(_, turtle)| *turtle)
            .collect();
        (!shown.is_empty()).then(|| join(&shown))
    }

    /// Every shape as one Turtle graph: the declared shapes a caller who sees the tools `visible`
    /// lets through is shown, then the input shapes of those tools.
    pub fn graph(&self, visible: impl Fn(&str) -> bool) -> String {
        let mut documents: Vec<&'static str> = self
            .documents
            .iter()
            .filter(|(iri, _)| self.users.shown(iri, &visible))
            .map(|(_, turtle)| *turtle)
            .collect();
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

impl Registry {
    /// Every SHACL `sh:NodeShape` — each shape's and node type's, then each capability's named
    /// parameters' — as one Turtle graph, as `GET /shapes.ttl` serves it to a caller who may see
    /// every capability.
    pub fn shacl(&self) -> String {
        Shapes::new(&self.shapes().collect::<Vec<_>>(), &self.tools().collect::<Vec<_>>()).graph(|_| true)
    }
}
