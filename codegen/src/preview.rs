//! Render projections from source text, without compiling anything: what the tests snapshot
//! and what a scaffolder can show. Holes (references to other types) render as placeholders:
//! a nested shape becomes `"$nested":"Type"`, a node label becomes the type's name.

use proc_macro2::TokenStream;
use serde_json::Value;

use crate::capability;
use crate::diag::Diagnostics;
use crate::ir::CapabilityDecl;
use crate::schema::description_member;
use crate::shape;
use crate::template::{Hole, Template};

fn fill(hole: &Hole) -> String {
    let ty = hole.type_text();
    match hole {
        Hole::SchemaMembers(_) => format!("\"$nested\":\"{ty}\""),
        Hole::DescriptionMember(_) => String::new(),
        Hole::NodeLabel(_) => ty,
        Hole::ShapeIri(_) => format!("urn:trails:shape:{ty}"),
        Hole::RdfDatatype(_) => format!("urn:trails:datatype:{ty}"),
        Hole::OutputSchemaMember(_) => format!(",\"outputSchema\":{{\"$output\":\"{ty}\"}}"),
        Hole::OutputShape(_) => format!("\"urn:trails:output:{ty}\""),
        // Known only to the output type; a preview shows none.
        Hole::OutputRoles(_) => String::new(),
        Hole::ParentProperties(_) => format!("\"$extends\":\"{ty}\""),
        Hole::ParentRequired(_) => format!("\"$required_of:{ty}\""),
        Hole::IfParentHasProperties(_, text) | Hole::IfParentHasRequired(_, text) => (*text).to_owned(),
    }
}

fn parse_json(template: &Template) -> Value {
    let text = template.render(&fill);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("projection is not JSON ({e}): {text}"))
}

/// The JSON Schema of a `#[shape]` / `#[node_type]` item, or every error message.
pub fn shape_schema(kind: shape::Kind, attr: TokenStream, item: &str) -> Result<Value, Vec<String>> {
    let mut diags = Diagnostics::new();
    let item: syn::Item = syn::parse_str(item).map_err(|e| vec![e.to_string()])?;
    let decl = shape::parse(kind, attr, &item, &mut diags);
    match decl {
        Some(decl) if !diags.has_errors() => {
            diags.discard();
            let mut t = Template::new();
            t.text("{").text(&description_member(shape::description(&decl).as_deref()));
            t.append(&shape::schema_members(&decl)).text("}");
            Ok(parse_json(&t))
        }
        _ => Err(diags.into_messages()),
    }
}

/// The SHACL Turtle of a `#[shape]` / `#[node_type]` item, or every error message.
pub fn shape_shacl(kind: shape::Kind, attr: TokenStream, item: &str) -> Result<String, Vec<String>> {
    let mut diags = Diagnostics::new();
    let item: syn::Item = syn::parse_str(item).map_err(|e| vec![e.to_string()])?;
    match shape::parse(kind, attr, &item, &mut diags) {
        Some(decl) if !diags.has_errors() => {
            diags.discard();
            Ok(crate::shacl::node_shape(&decl, shape::description(&decl).as_deref()).render(&fill))
        }
        _ => Err(diags.into_messages()),
    }
}

/// Tool descriptor and canonical descriptor of a capability handler, or every error message.
pub fn capability(kind: capability::Kind, attr: TokenStream, item: &str) -> Result<(Value, Value), Vec<String>> {
    let mut diags = Diagnostics::new();
    let function: syn::ItemFn = syn::parse_str(item).map_err(|e| vec![e.to_string()])?;
    let decl: Option<CapabilityDecl> = capability::parse(kind, attr, &function, &mut diags);
    match decl {
        Some(decl) if !diags.has_errors() => {
            diags.discard();
            Ok((parse_json(&capability::descriptor(&decl)), parse_json(&capability::canonical(&decl))))
        }
        _ => Err(diags.into_messages()),
    }
}

/// Every error message a declaration produces (empty when it is valid).
pub fn errors(kind: &str, attr: TokenStream, item: &str) -> Vec<String> {
    let result = match kind {
        "shape" => shape_schema(shape::Kind::Shape, attr, item).map(|_| ()),
        "node_type" => shape_schema(shape::Kind::NodeType, attr, item).map(|_| ()),
        "capability" => capability(capability::Kind::Runtime, attr, item).map(|_| ()),
        "meta_capability" => capability(capability::Kind::Meta, attr, item).map(|_| ()),
        other => panic!("unknown attribute {other}"),
    };
    result.err().unwrap_or_default()
}
