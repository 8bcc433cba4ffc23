//! IR → JSON Schema (`runtime/guide/02-declaring.md`: draft-07-shaped, inlined, `additionalProperties: false`,
//! `Option<T>` is `T`'s schema and simply not required).

use crate::args::Literal;
use crate::ir::{Constraints, Field, ObjectDecl, Scalar};
use crate::template::{json_string, Hole, Template};

/// `"description":"…",` or nothing.
pub fn description_member(description: Option<&str>) -> String {
    description.map(|d| format!("\"description\":{},", json_string(d))).unwrap_or_default()
}

/// The members of `properties` (no braces): the parent's first, then the object's own.
pub fn property_members(object: &ObjectDecl, parent: Option<&syn::Type>) -> Template {
    let mut t = Template::new();
    if let Some(parent) = parent {
        t.hole(Hole::ParentProperties(parent.clone()));
        if !object.fields.is_empty() {
            t.hole(Hole::IfParentHasProperties(parent.clone(), ","));
        }
    }
    for (index, field) in object.fields.iter().enumerate() {
        if index > 0 {
            t.text(",");
        }
        t.string(&field.name).text(":");
        t.append(&field_schema(field));
    }
    t
}

/// The items of `required` (no brackets): the parent's first, then the object's own.
pub fn required_members(object: &ObjectDecl, parent: Option<&syn::Type>) -> Template {
    let own: Vec<String> = object.fields.iter().filter(|f| f.required).map(|f| json_string(&f.name)).collect();
    let mut t = Template::new();
    if let Some(parent) = parent {
        t.hole(Hole::ParentRequired(parent.clone()));
        if !own.is_empty() {
            t.hole(Hole::IfParentHasRequired(parent.clone(), ","));
        }
    }
    t.text(&own.join(","));
    t
}

/// Members of an object schema: type, properties, required (only when something is),
/// additionalProperties. With a parent, its properties and required names come first.
pub fn object_members(object: &ObjectDecl, parent: Option<&syn::Type>) -> Template {
    let mut t = Template::new();
    t.text("\"type\":\"object\",\"properties\":{");
    t.append(&property_members(object, parent));
    t.text("}");
    let own_required = object.fields.iter().any(|f| f.required);
    match parent {
        _ if own_required => {
            t.text(",\"required\":[").append(&required_members(object, parent)).text("]");
        }
        Some(parent) => {
            t.hole(Hole::IfParentHasRequired(parent.clone(), ",\"required\":["));
            t.hole(Hole::ParentRequired(parent.clone()));
            t.hole(Hole::IfParentHasRequired(parent.clone(), "]"));
        }
        None => {}
    }
    t.text(",\"additionalProperties\":false");
    t
}

/// The schema object of one field.
pub fn field_schema(field: &Field) -> Template {
    let mut t = Template::new();
    t.text("{");
    t.text(&description_member(field.description.as_deref()));
    if field.ty.array {
        t.text("\"type\":\"array\",\"items\":{");
        scalar_members(&field.ty.scalar, &field.constraints, field.description.is_some(), &mut t);
        t.text("}");
        if let Some(min) = field.constraints.min_items {
            t.text(&format!(",\"minItems\":{min}"));
        }
        if let Some(max) = field.constraints.max_items {
            t.text(&format!(",\"maxItems\":{max}"));
        }
        if field.constraints.unique_items {
            t.text(",\"uniqueItems\":true");
        }
    } else {
        scalar_members(&field.ty.scalar, &field.constraints, field.description.is_some(), &mut t);
    }
    // SEP-2243: the argument is sent as the `Mcp-Param-<name>` header too (a string field only).
    if let Some(header) = &field.header {
        t.text(&format!(",\"x-mcp-header\":{}", json_string(header)));
    }
    t.text("}");
    t
}

fn scalar_members(scalar: &Scalar, c: &Constraints, described: bool, t: &mut Template) {
    match scalar {
        Scalar::String => {
            t.text("\"type\":\"string\"");
            if let Some(min) = c.min_length {
                t.text(&format!(",\"minLength\":{min}"));
            }
            if let Some(max) = c.max_length {
                t.text(&format!(",\"maxLength\":{max}"));
            }
            if let Some(pattern) = &c.pattern {
                t.text(",\"pattern\":").string(pattern);
            }
        }
        Scalar::Bool => {
            t.text("\"type\":\"boolean\"");
        }
        Scalar::Int(kind) => {
            t.text("\"type\":\"integer\"");
            let (min, max) = c.int_range(kind);
            t.text(&format!(",\"minimum\":{min},\"maximum\":{max}"));
        }
        Scalar::Float => {
            t.text("\"type\":\"number\"");
            if let Some(min) = c.min_value {
                t.text(&format!(",\"minimum\":{}", number_text(min.as_f64())));
            }
            if let Some(max) = c.max_value {
                t.text(&format!(",\"maximum\":{}", number_text(max.as_f64())));
            }
        }
        Scalar::DateTime => {
            t.text("\"type\":\"string\",\"format\":\"date-time\"");
        }
        Scalar::Ref(target) => {
            t.text("\"type\":\"string\",\"format\":\"iri\",\"trails:node_type\":\"");
            t.hole(Hole::NodeLabel(target.clone()));
            t.text("\"");
        }
        Scalar::Nested(ty) => {
            // The field's own doc comment wins over the nested type's.
            if !described {
                t.hole(Hole::DescriptionMember(ty.clone()));
            }
            t.hole(Hole::SchemaMembers(ty.clone()));
        }
    }
    if !c.one_of.is_empty() {
        let values: Vec<String> = c.one_of.iter().map(literal_json).collect();
        t.text(&format!(",\"enum\":[{}]", values.join(",")));
    }
    if let Some(default) = &c.default {
        t.text(&format!(",\"default\":{}", literal_json(default)));
    }
}

/// A literal as JSON text.
pub fn literal_json(literal: &Literal) -> String {
    match literal {
        Literal::Str(s) => json_string(s),
        Literal::Int(i) => i.to_string(),
        Literal::Float(f) => number_text(*f),
        Literal::Bool(b) => b.to_string(),
    }
}

fn number_text(value: f64) -> String {
    serde_json::Number::from_f64(value).map(|n| n.to_string()).unwrap_or_else(|| "null".into())
}

/// Members of a unit enum's schema: a string restricted to the variants' wire names.
pub fn enum_members(names: &[String]) -> String {
    let values: Vec<String> = names.iter().map(|n| json_string(n)).collect();
    format!("\"type\":\"string\",\"enum\":[{}]", values.join(","))
}
