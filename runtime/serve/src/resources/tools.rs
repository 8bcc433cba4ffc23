//! What the `trails.kg.*` tools (`builtin/kg`) read, through the same parser and queries as the
//! resources, so a tool and a resource never disagree about a page or an instance.

use oxrdf::NamedNode;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde_json::{json, Map, Value};

use super::read;
use super::uri::{self, Target, UriError, SCHEME};
use super::Resources;
use trails_core::declare::NodeTypeInfo;
use trails_core::error::{Error, Result};
use trails_core::validate::{FieldCode, FieldError};
use trails_kg::{mapping, Kg, Triples};

/// The node type labelled `label`, or a FieldError on `node_type` listing the labels.
pub(crate) fn node_type(resources: &Resources, label: &str) -> Result<&'static NodeTypeInfo> {
    resources.node_types.iter().copied().find(|node| node.label == label).ok_or_else(|| {
        let labels: Vec<&str> = resources.node_types.iter().map(|node| node.label).collect();
        FieldError::refuse(
            "node_type",
            FieldCode::OneOf,
            format!("no node type `{label}`; one of: {}", labels.join(", ")),
            &json!(label),
            json!(labels),
        )
    })
}

/// One page of `node`'s instances, exactly as `trails://kg/<Type>?where=…&limit=…&after=…`
/// reads it: `{items, total, limit, offset, next}`; without `cards`, the items are only
/// `{iri, id, label, uri}` (the label then is the key).
pub(crate) async fn page(
    resources: &Resources,
    kg: &Kg,
    node: &'static NodeTypeInfo,
    filter: Option<&str>,
    limit: usize,
    cursor: Option<&str>,
    cards: bool,
) -> Result<Value> {
    let mut uri = format!("{SCHEME}kg/{}?limit={limit}", node.label);
    if let Some(filter) = filter {
        uri.push_str(&format!("&where={}", utf8_percent_encode(filter, NON_ALPHANUMERIC)));
    }
    if let Some(cursor) = cursor {
        uri.push_str(&format!("&after={}", utf8_percent_encode(cursor, NON_ALPHANUMERIC)));
    }
    let request = match uri::parse(&uri, &resources.node_types) {
        Ok(Target::List(request)) => request,
        Ok(_) | Err(UriError::Unknown { .. }) => return Err(Error::internal(format!("{uri} is not a list"))),
        Err(UriError::Grammar { message, .. }) if message.contains("`after`") => {
            let constraint = json!("the cursor of the previous page");
            return Err(FieldError::refuse("cursor", FieldCode::Pattern, message, &json!(cursor), constraint));
        }
        Err(UriError::Grammar { message, .. }) => {
            let constraint = json!("<field>=<value>");
            return Err(FieldError::refuse("filter", FieldCode::Pattern, message, &json!(filter), constraint));
        }
        Err(error @ UriError::TypeMismatch { expected_datatype, .. }) => {
            let (message, constraint) = (error.to_string(), json!(expected_datatype));
            return Err(FieldError::refuse("filter", FieldCode::TypeMismatch, message, &json!(filter), constraint));
        }
    };
    read::page(kg, &uri, request, cards).await
}

/// `node`'s instance with key (or generated id) `id`: its IRI and its fields by name.
pub(crate) async fn instance(kg: &Kg, node: &'static NodeTypeInfo, id: &str) -> Result<(String, Map<String, Value>)> {
    let (iri, triples) = described(kg, node, id).await?;
    match mapping::instance(node, &triples) {
        Value::Object(fields) => Ok((iri, fields)),
        _ => Err(Error::internal(format!("{iri} does not map to an object"))),
    }
}

/// `node`'s instance with key (or generated id) `id`: its IRI and what the store holds about it.
pub(crate) async fn described(kg: &Kg, node: &'static NodeTypeInfo, id: &str) -> Result<(String, Triples)> {
    let iri = mapping::instance_iri(kg.base(), node.label, id);
    let unreadable = || {
        FieldError::refuse(
            "id",
            FieldCode::Reference,
            format!("`{id}` cannot be a {} id", node.label),
            &json!(id),
            json!("the id of a stored instance (`label` in trails_kg_list)"),
        )
    };
    // Well-formed, and nothing is stored under it: the caller's to act on.
    let missing = || {
        Error::not_found(format!(
            "there is no {} with id `{id}` (the ids are the `label`s of trails_kg_list)",
            node.label
        ))
    };
    let subject = NamedNode::new(&iri).map_err(|_| unreadable())?;
    let graph = NamedNode::new_unchecked(mapping::graph_iri(kg.base(), node.label));
    let triples = kg.store().describe(graph, subject).await.map_err(trails_kg::store_failed)?;
    let is_a = triples.iter().any(|(p, o)| {
        p.as_ref() == oxrdf::vocab::rdf::TYPE
            && matches!(o, oxrdf::Term::NamedNode(class) if class.as_str() == node.iri)
    });
    if !is_a {
        return Err(missing());
    }
    Ok((iri, triples))
}
