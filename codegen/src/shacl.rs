//! IR → SHACL: every `#[shape]` and `#[node_type]` as one `sh:NodeShape` in Turtle, stating the
//! same constraints as its JSON Schema, over the RDF the store writes (`runtime/guide/03-knowledge-graph.md`): one
//! predicate per field (`#[predicate(iri)]`, else the type IRI's namespace + the field name),
//! typed literals, IRIs for references, nested shapes and blobs as `rdf:JSON` literals.
//!
//! A node type's shape targets its class (`sh:targetClass`), so a SHACL engine checks the
//! store's instances with it; a plain shape targets nothing and describes a capability's input
//! or output. A child (`extends`) adds `sh:node <parent>`: the parent's constraints hold too.
//! A field's display role is the property's `trails:displayRole`.

use crate::args::Literal;
use crate::ir::{Field, ObjectDecl, Scalar, ShapeBody, ShapeDecl};
use crate::names;
use crate::template::{Hole, Template};

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// The term a property's display role is published under.
pub const DISPLAY_ROLE: &str = "https://w3id.org/trails/capability#displayRole";

/// The prefixes every shape's Turtle declares (each shape is a document of its own; the joined
/// graph repeats them, which Turtle allows).
pub const PREFIXES: &str = "@prefix sh: <http://www.w3.org/ns/shacl#> .\n\
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .\n\
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n";

/// The Turtle document of one declaration.
pub fn node_shape(decl: &ShapeDecl, description: Option<&str>) -> Template {
    let label = decl.ident.to_string();
    let target = decl.node_type.as_ref().map(|_| decl.iri.as_str());
    let parent = decl.extends.as_ref().map(|e| &e.parent);
    match &decl.body {
        ShapeBody::Object(object) => object_shape(&decl.iri, &label, description, target, parent, object),
        ShapeBody::Enum(variants) => {
            let mut t = head(&decl.iri, &label, description);
            let values: Vec<String> = variants.iter().map(|(_, name)| turtle_string(name)).collect();
            t.text(&format!(" ;\n    sh:in ( {} ) .\n", values.join(" ")));
            t
        }
    }
}

/// The Turtle document of an object shape at `iri`: `target` is the class whose instances it
/// checks (node types), `parent` the shape it extends.
pub fn object_shape(
    iri: &str,
    label: &str,
    description: Option<&str>,
    target: Option<&str>,
    parent: Option<&syn::Type>,
    object: &ObjectDecl,
) -> Template {
    let mut t = head(iri, label, description);
    if let Some(target) = target {
        t.text(&format!(" ;\n    sh:targetClass <{target}>"));
    }
    if let Some(parent) = parent {
        t.text(" ;\n    sh:node <").hole(Hole::ShapeIri(parent.clone())).text(">");
    }
    properties(iri, object, &mut t);
    t.text(" .\n");
    t
}

fn head(iri: &str, label: &str, description: Option<&str>) -> Template {
    let mut t = Template::new();
    t.text(PREFIXES).text("\n");
    t.text(&format!("<{iri}> a sh:NodeShape ;\n    rdfs:label {}", turtle_string(label)));
    if let Some(description) = description {
        t.text(&format!(" ;\n    rdfs:comment {}", turtle_string(description)));
    }
    t
}

fn properties(iri: &str, object: &ObjectDecl, t: &mut Template) {
    let namespace = names::iri_namespace(iri);
    for field in &object.fields {
        let path = field.iri.clone().unwrap_or_else(|| format!("{namespace}{}", field.name));
        t.text(&format!(
            " ;\n    sh:property [\n        sh:path <{path}> ;\n        sh:name {}",
            turtle_string(&field.name)
        ));
        if let Some(description) = &field.description {
            t.text(&format!(" ;\n        sh:description {}", turtle_string(description)));
        }
        if let Some((role, _)) = field.role {
            // Not a constraint: how a list shows the instances (the manifest's vocabulary).
            t.text(&format!(" ;\n        <{DISPLAY_ROLE}> {}", turtle_string(role.name())));
        }
        property_constraints(field, t);
        t.text("\n    ]");
    }
}

fn property_constraints(field: &Field, t: &mut Template) {
    let mut line = |text: String| {
        t.text(&format!(" ;\n        {text}"));
    };
    let c = &field.constraints;
    // A list is one triple per item: an empty (but present) list has none, so only `min_count`
    // asks for items; a required single value is one triple.
    let min_count = match (field.ty.array, field.required) {
        (true, _) => c.min_items.unwrap_or(0),
        (false, true) => 1,
        (false, false) => 0,
    };
    if min_count > 0 {
        line(format!("sh:minCount {min_count}"));
    }
    match (field.ty.array, c.max_items) {
        (false, _) => line("sh:maxCount 1".into()),
        (true, Some(max)) => line(format!("sh:maxCount {max}")),
        (true, None) => {}
    }
    match &field.ty.scalar {
        Scalar::String => {
            line("sh:datatype xsd:string".into());
            if let Some(min) = c.min_length {
                line(format!("sh:minLength {min}"));
            }
            if let Some(max) = c.max_length {
                line(format!("sh:maxLength {max}"));
            }
            if let Some(pattern) = &c.pattern {
                line(format!("sh:pattern {}", turtle_string(&trails_pattern::to_xpath(pattern))));
            }
        }
        Scalar::Bool => line("sh:datatype xsd:boolean".into()),
        Scalar::Int(kind) => {
            line("sh:datatype xsd:integer".into());
            let (min, max) = c.int_range(kind);
            line(format!("sh:minInclusive {min}"));
            line(format!("sh:maxInclusive {max}"));
        }
        Scalar::Float => {
            line("sh:datatype xsd:double".into());
            if let Some(min) = c.min_value {
                line(format!("sh:minInclusive {}", double(min.as_f64())));
            }
            if let Some(max) = c.max_value {
                line(format!("sh:maxInclusive {}", double(max.as_f64())));
            }
        }
        Scalar::DateTime => line("sh:datatype xsd:dateTime".into()),
        Scalar::Ref(target) => {
            t.text(" ;\n        sh:nodeKind sh:IRI ;\n        sh:class <")
                .hole(Hole::ShapeIri(target.clone()))
                .text(">");
        }
        Scalar::Nested(ty) => {
            t.text(" ;\n        sh:datatype <").hole(Hole::RdfDatatype(ty.clone())).text(">");
        }
    }
    if !c.one_of.is_empty() {
        let values: Vec<String> = c.one_of.iter().map(|value| literal(value, &field.ty.scalar)).collect();
        t.text(&format!(" ;\n        sh:in ( {} )", values.join(" ")));
    }
}

/// A `one_of` literal as the store writes a value of that field.
fn literal(value: &Literal, scalar: &Scalar) -> String {
    match (value, scalar) {
        (Literal::Str(s), _) => turtle_string(s),
        (Literal::Int(i), Scalar::Float) => double(*i as f64),
        (Literal::Int(i), _) => format!("\"{i}\"^^<{XSD}integer>"),
        (Literal::Float(f), _) => double(*f),
        (Literal::Bool(b), _) => format!("\"{b}\"^^<{XSD}boolean>"),
    }
}

/// A double as the store writes one (serde_json's number text, typed `xsd:double`).
fn double(value: f64) -> String {
    let text = serde_json::Number::from_f64(value).map(|n| n.to_string()).unwrap_or_else(|| "NaN".into());
    format!("\"{text}\"^^<{XSD}double>")
}

/// A Turtle string literal; control characters, whitespace other than the space and the BOM as
/// `\uXXXX` escapes (what a reader cannot see stays visible in the document).
pub fn turtle_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || (c.is_whitespace() && c != ' ') || c == '\u{feff}' => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
