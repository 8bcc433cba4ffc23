//! Instances as RDF (`runtime/guide/03-knowledge-graph.md`): `<base>/<Label>/<key>` a `<TypeIRI>`,
//! one triple per field value (typed literals per datatype, IRIs for references, one triple per
//! list item), and back.

use oxrdf::vocab::{rdf, xsd};
use oxrdf::{Literal, NamedNode, NamedNodeRef, Term};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::Deserialize;
use serde_json::{json, Map, Number, Value};

use super::store::Triples;
use crate::declare::{blob, Blob, Datatype, NodeTypeInfo, PredicateInfo};
use crate::validate::{FieldCode, FieldError};

/// What a key may contain unescaped in an IRI path segment (RFC 3986 unreserved).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// `<base>/<Label>/<key>`, the key percent-encoded. `.` and `..` are encoded too: IRI
/// normalisation (RFC 3986 dot segments) would otherwise collapse them into another IRI.
pub fn instance_iri(base: &str, label: &str, key: &str) -> String {
    match key {
        "." => format!("{base}/{label}/%2E"),
        ".." => format!("{base}/{label}/%2E%2E"),
        _ => format!("{base}/{label}/{}", utf8_percent_encode(key, SEGMENT)),
    }
}

/// What the IRIs of the `label` instances whose key starts with `prefix` start with (the key
/// encoded as [`instance_iri`] encodes it, character by character).
pub fn key_prefix_iri(base: &str, label: &str, prefix: &str) -> String {
    format!("{base}/{label}/{}", utf8_percent_encode(prefix, SEGMENT))
}

/// The named graph a node type's instances live in (the rule the macros publish too).
pub use trails_pattern::graph_iri;

/// The node types that extend `info`, directly or through others (nearest first), from the
/// app's linked declarations: the instances a read of `info` also sees under
/// `reasoning = "rdfs"`. Each keeps its own graph and IRIs.
pub fn subtypes(info: &NodeTypeInfo) -> &'static [&'static NodeTypeInfo] {
    static SUBTYPES: std::sync::OnceLock<std::collections::HashMap<&'static str, Vec<&'static NodeTypeInfo>>> =
        std::sync::OnceLock::new();
    let all = SUBTYPES.get_or_init(|| {
        let linked: Vec<&'static NodeTypeInfo> =
            crate::registry::SHAPES.iter().filter_map(|shape| shape.node_type()).collect();
        let mut subtypes = std::collections::HashMap::new();
        for node in &linked {
            // Breadth first: children, then theirs (an `extends` chain has no cycles: the
            // compiler follows it to a struct).
            let mut found: Vec<&'static NodeTypeInfo> = Vec::new();
            let mut next = 0;
            let mut parent = *node;
            loop {
                for child in &linked {
                    let extends = child.parent.is_some_and(|of| of.iri == parent.iri);
                    if extends && !found.iter().any(|seen| seen.iri == child.iri) {
                        found.push(child);
                    }
                }
                let Some(deeper) = found.get(next) else { break };
                parent = deeper;
                next += 1;
            }
            subtypes.insert(node.iri, found);
        }
        subtypes
    });
    all.get(info.iri).map_or(&[], Vec::as_slice)
}

/// The graphs of `info` and of its [`subtypes`]: where the runtime's own reads of a node type
/// (its resources, the `trails_kg_*` tools) find its instances.
pub fn graphs_with_subtypes(base: &str, info: &NodeTypeInfo) -> Vec<NamedNode> {
    std::iter::once(info.label)
        .chain(subtypes(info).iter().map(|node| node.label))
        .map(|label| NamedNode::new_unchecked(graph_iri(base, label)))
        .collect()
}

/// The node type among `info` and its [`subtypes`] whose instances' IRIs `iri` has (`<base>/<Label>/…`),
/// else `info`: the graph an instance read as `info` is in.
pub fn own_type<'a>(base: &str, info: &'a NodeTypeInfo, iri: &str) -> &'a NodeTypeInfo {
    let of = |label: &str| {
        iri.strip_prefix(base).and_then(|rest| rest.strip_prefix('/')?.strip_prefix(label)?.strip_prefix('/'))
    };
    if of(info.label).is_some() {
        return info;
    }
    subtypes(info).iter().copied().find(|node| of(node.label).is_some()).unwrap_or(info)
}

/// `rdf:JSON`, for nested shapes.
const RDF_JSON: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON";

fn rejected(field: &str, message: String, value: &Value, constraint: Value) -> FieldError {
    FieldError { field: field.to_owned(), code: FieldCode::TypeMismatch, message, value: value.clone(), constraint }
}

/// One JSON value as the RDF term of `predicate`'s datatype.
// A large error is fine here: it is built once per rejected value, never on the success path.
#[allow(clippy::result_large_err)]
pub fn term(predicate: &PredicateInfo, field: &str, value: &Value) -> Result<Term, FieldError> {
    let expected = json!(predicate.datatype.iri());
    let literal = |lexical: String, datatype| Term::Literal(Literal::new_typed_literal(lexical, datatype));
    match (predicate.datatype, value) {
        (Datatype::String, Value::String(s)) => Ok(Term::Literal(Literal::new_simple_literal(s))),
        (Datatype::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(literal(n.to_string(), xsd::INTEGER)),
        (Datatype::Double, Value::Number(n)) => Ok(literal(n.to_string(), xsd::DOUBLE)),
        (Datatype::Boolean, Value::Bool(b)) => Ok(literal(b.to_string(), xsd::BOOLEAN)),
        (Datatype::DateTime, Value::String(s)) => Ok(literal(s.clone(), xsd::DATE_TIME)),
        (Datatype::Iri, Value::String(s)) => NamedNode::new(s)
            .map(Term::NamedNode)
            .map_err(|e| rejected(field, format!("{field} is not an IRI the store accepts: {e}"), value, expected)),
        (Datatype::Json, other) => Ok(literal(other.to_string(), NamedNodeRef::new_unchecked(RDF_JSON))),
        (Datatype::Blob, value) => blob_of(field, value).map(|blob| blob_term(&blob)),
        (_, other) => Err(rejected(
            field,
            format!("{field} does not fit its RDF datatype {}", predicate.datatype.iri()),
            other,
            expected,
        )),
    }
}

/// The blob a `Blob` field's value (as `Blob` serialises, or as a client sends it) holds.
#[allow(clippy::result_large_err)]
fn blob_of(field: &str, value: &Value) -> Result<Blob, FieldError> {
    Blob::deserialize(value).map_err(|e| {
        rejected(
            field,
            format!("{field} is not a blob: {e}"),
            value,
            json!({"media_type": "type/subtype", "base64": "…"}),
        )
    })
}

/// What the graph keeps of a blob: a JSON literal of its media type, SHA-256 and size.
fn blob_term(blob: &Blob) -> Term {
    let kept = json!({ "media_type": blob.media_type(), "sha256": blob.sha256(), "size": blob.len() });
    Term::Literal(Literal::new_typed_literal(kept.to_string(), NamedNodeRef::new_unchecked(RDF_JSON)))
}

/// An instance as the store takes it: its triples and the bytes of its blobs.
pub struct Mapped {
    pub(crate) triples: Triples,
    pub(crate) blobs: Vec<Blob>,
}

/// One value's term; a blob's bytes go to `blobs`.
#[allow(clippy::result_large_err)]
fn value_term(
    predicate: &PredicateInfo,
    field: &str,
    value: &Value,
    blobs: &mut Vec<Blob>,
) -> Result<Term, FieldError> {
    if predicate.datatype != Datatype::Blob {
        return term(predicate, field, value);
    }
    let blob = blob_of(field, value)?;
    let term = blob_term(&blob);
    if !blobs.iter().any(|known| known.sha256() == blob.sha256()) {
        blobs.push(blob);
    }
    Ok(term)
}

/// The triples of an instance (serialised to JSON by serde), `rdf:type` first: one per class
/// up the `extends` chain, then one per field value.
pub fn triples(info: &NodeTypeInfo, instance: &Value) -> Result<Mapped, Vec<FieldError>> {
    let mut out = Vec::new();
    let mut class = Some(info);
    while let Some(node) = class {
        out.push((rdf::TYPE.into_owned(), Term::NamedNode(NamedNode::new_unchecked(node.iri))));
        class = node.parent;
    }
    let Some(object) = instance.as_object() else {
        return Err(vec![rejected(
            "",
            "an instance must serialise to a JSON object".into(),
            instance,
            json!("object"),
        )]);
    };
    let mut errors = Vec::new();
    let mut blobs = Vec::new();
    for predicate in info.all_predicates() {
        let iri = NamedNode::new_unchecked(predicate.iri);
        match object.get(predicate.field) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) if predicate.many => {
                // A set, not a scan: a list without `max_count` may hold every item a 4 MB body can.
                let mut seen: std::collections::HashSet<Term> = std::collections::HashSet::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    let path = format!("{}/{index}", predicate.field);
                    match value_term(predicate, &path, item, &mut blobs) {
                        // RDF holds a set: a repeated item would silently vanish, so refuse it.
                        // Reported like the validator's errors: at most MAX_FIELD_ERRORS kept.
                        Ok(_) if errors.len() >= crate::validate::MAX_FIELD_ERRORS => {}
                        Ok(t) if seen.contains(&t) => errors.push(FieldError {
                            field: path.clone(),
                            code: FieldCode::TypeMismatch,
                            message: format!(
                                "{path} repeats an earlier item; a node type's list is a set in the graph"
                            ),
                            value: item.clone(),
                            constraint: json!("unique items"),
                        }),
                        Ok(t) => {
                            seen.insert(t);
                        }
                        Err(e) => errors.push(e),
                    }
                }
                out.extend(seen.into_iter().map(|t| (iri.clone(), t)));
            }
            Some(value) => match value_term(predicate, predicate.field, value, &mut blobs) {
                Ok(t) => out.push((iri, t)),
                Err(e) => errors.push(e),
            },
        }
    }
    if errors.is_empty() {
        Ok(Mapped { triples: out, blobs })
    } else {
        Err(errors)
    }
}

/// An RDF term back as the JSON value serde reads.
pub(crate) fn json_of(predicate: &PredicateInfo, term: &Term) -> Option<Value> {
    match (predicate.datatype, term) {
        (Datatype::Iri, Term::NamedNode(n)) => Some(Value::String(n.as_str().to_owned())),
        (Datatype::String, Term::Literal(l)) => Some(Value::String(l.value().to_owned())),
        (Datatype::DateTime, Term::Literal(l)) => Some(Value::String(l.value().to_owned())),
        (Datatype::Integer, Term::Literal(l)) => l
            .value()
            .parse::<i64>()
            .map(Number::from)
            .or_else(|_| l.value().parse::<u64>().map(Number::from))
            .ok()
            .map(Value::Number),
        (Datatype::Double, Term::Literal(l)) => {
            l.value().parse::<f64>().ok().and_then(Number::from_f64).map(Value::Number)
        }
        // Virtuoso answers booleans as "1"/"0" (`runtime/guide/03-knowledge-graph.md`).
        (Datatype::Boolean, Term::Literal(l)) => match l.value() {
            "true" | "1" => Some(Value::Bool(true)),
            "false" | "0" => Some(Value::Bool(false)),
            _ => None,
        },
        (Datatype::Json, Term::Literal(l)) => serde_json::from_str(l.value()).ok(),
        (Datatype::Blob, Term::Literal(l)) => {
            let kept: Value = serde_json::from_str(l.value()).ok()?;
            let sha256 = kept.get("sha256")?.as_str().filter(|sha| blob::is_sha256(sha))?;
            Some(blob::metadata(kept.get("media_type")?.as_str()?, kept.get("size")?.as_u64()?, sha256))
        }
        _ => None,
    }
}

/// The JSON object of an instance from its triples; a blob is its metadata (the bytes are the
/// store's, fetched by [`super::Kg`] for typed reads and by `trails://blob/<sha256>`). List items
/// come back in their values' order (numbers by magnitude, text by code point, `false` before `true`): RDF keeps no order, and
/// the values — unlike the terms' spelling, which differs between stores — are the same on all.
pub fn instance(info: &NodeTypeInfo, triples: &[(NamedNode, Term)]) -> Value {
    let mut object = Map::new();
    for predicate in info.all_predicates() {
        let mut values: Vec<Value> = triples
            .iter()
            .filter(|(p, _)| p.as_str() == predicate.iri)
            .filter_map(|(_, o)| json_of(predicate, o))
            .collect();
        if predicate.many {
            values.sort_by(value_order);
            object.insert(predicate.field.to_owned(), Value::Array(values));
        } else if let Some(value) = values.into_iter().next() {
            object.insert(predicate.field.to_owned(), value);
        }
    }
    Value::Object(object)
}

/// The order of two values of one field (see [`instance`]).
fn value_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
            (Some(a), Some(b), _, _) => a.cmp(&b),
            (_, _, Some(a), Some(b)) => a.cmp(&b),
            _ => a.as_f64().unwrap_or_default().total_cmp(&b.as_f64().unwrap_or_default()),
        },
        (Value::String(a), Value::String(b)) => a.cmp(b),
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        _ => a.to_string().cmp(&b.to_string()),
    }
}

/// The predicate of a field, up the `extends` chain.
pub fn predicate<'a>(info: &'a NodeTypeInfo, field: &str) -> Option<&'a PredicateInfo> {
    info.all_predicates().into_iter().find(|p| p.field == field)
}

/// Every way the instance `triples` describe breaks `info`'s declaration today (which may be
/// newer than the write, or the data may have been written around Trails): values [`instance`]
/// cannot read as the field's datatype (it drops them), several values for a single-valued field
/// (it shows one), then the type's own validator on what it reads. A blob is checked by its
/// stored media type (its bytes were checked when written). At most `MAX_FIELD_ERRORS`.
pub fn recheck(info: &NodeTypeInfo, triples: &[(NamedNode, Term)]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for predicate in info.all_predicates() {
        let values: Vec<&Term> = triples.iter().filter(|(p, _)| p.as_str() == predicate.iri).map(|(_, o)| o).collect();
        for term in values.iter().filter(|term| json_of(predicate, term).is_none()) {
            errors.push(FieldError::rejecting(
                predicate.field,
                FieldCode::TypeMismatch,
                format!(
                    "{} holds {}, which is not a {} value",
                    predicate.field,
                    crate::validate::cut_text(&term.to_string(), crate::validate::NAME_ECHO_LIMIT),
                    predicate.datatype.iri()
                ),
                &Value::String(term.to_string()),
                json!(predicate.datatype.iri()),
            ));
        }
        if !predicate.many && values.len() > 1 {
            errors.push(FieldError::rejecting(
                predicate.field,
                FieldCode::MaxCount,
                format!("{} holds {} values; the declaration allows one", predicate.field, values.len()),
                &json!(values.len()),
                json!(1),
            ));
        }
    }
    let mut value = instance(info, triples);
    for predicate in info.all_predicates().into_iter().filter(|p| p.datatype == Datatype::Blob) {
        let stand_in = |blob: &mut Value| *blob = json!({ "media_type": blob["media_type"], "base64": "" });
        match value.get_mut(predicate.field) {
            Some(Value::Array(items)) => items.iter_mut().for_each(stand_in),
            Some(blob @ Value::Object(_)) => stand_in(blob),
            _ => {}
        }
    }
    errors.extend(info.check(&value));
    errors.truncate(crate::validate::MAX_FIELD_ERRORS);
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_come_back_in_value_order() {
        let mut numbers: Vec<Value> = serde_json::from_str("[10, 9, -3, 18446744073709551615, 2.5]").unwrap();
        numbers.sort_by(value_order);
        assert_eq!(Value::Array(numbers).to_string(), "[-3,2.5,9,10,18446744073709551615]");
        let mut texts: Vec<Value> = serde_json::from_str(r#"[" ", "", "b", "a"]"#).unwrap();
        texts.sort_by(value_order);
        assert_eq!(Value::Array(texts).to_string(), r#"[""," ","a","b"]"#);
    }

    #[test]
    fn keys_are_percent_encoded_into_one_segment() {
        assert_eq!(instance_iri("https://x.org/kg", "Requirement", "REQ-1"), "https://x.org/kg/Requirement/REQ-1");
        assert_eq!(instance_iri("https://x.org/kg", "Person", "a b/c@d"), "https://x.org/kg/Person/a%20b%2Fc%40d");
        assert_eq!(instance_iri("https://x.org/kg", "Note", ".."), "https://x.org/kg/Note/%2E%2E");
        assert_eq!(instance_iri("https://x.org/kg", "Note", "v1.2"), "https://x.org/kg/Note/v1.2");
    }
}
