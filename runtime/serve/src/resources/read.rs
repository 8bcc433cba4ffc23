//! Answers to `resources/list`, `resources/templates/list` and `resources/read`.

use base64::Engine as _;
use oxrdf::NamedNode;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use rmcp::ErrorData;
use serde_json::{json, Map, Value};

use super::fixed;
use super::uri::{self, ListRequest, Target, UriError, SCHEME};
use super::{Live, Resources};
use crate::wire::errors;
use trails_core::auth::{Scope, ScopeSet};
use trails_core::declare::{Datatype, NodeTypeInfo};
use trails_core::pipeline::View;
use trails_kg::{mapping, store_failed, Find, Kg};

/// What an umbrella subscription costs the subscriber (said where it is chosen).
const UMBRELLA_NOTE: &str = "Subscribing to it sends an update for every change to any instance of this type; \
subscribe to single instances (trails://kg/<Type>/<id>) when only a few matter.";

/// One umbrella per node type (with a knowledge graph), then the fixed resources `scopes` may
/// read.
pub(crate) fn list(resources: &Resources, scopes: ScopeSet) -> Vec<Resource> {
    let kg = resources.kg.is_some();
    let node_types = if kg { &resources.node_types[..] } else { &[] };
    let mut listed: Vec<Resource> = node_types
        .iter()
        .map(|node| {
            Resource::new(format!("{SCHEME}kg/{}", node.label), node.label)
                .with_title(format!("{} instances", node.label))
                .with_description(format!(
                    "The {} instances in the knowledge graph, a page at a time ({{items, total, limit, offset, next}}; \
                     class {}). {UMBRELLA_NOTE}",
                    node.label, node.iri
                ))
                .with_mime_type("application/json")
        })
        .collect();
    let mut fixed = Vec::new();
    if resources.manifest {
        let description = "The capabilities this caller may call, as JSON-LD: each tool's id, scope, effects, \
                           input and output shapes, preconditions and policies.";
        fixed.push(("capabilities", "capabilities", "Capability manifest", description, "application/ld+json"));
    }
    if kg {
        let description = "Every node type with its class IRI and how many instances it has.";
        fixed.push(("kg/types", "kg-types", "Node types", description, "application/json"));
    }
    let description = "Every shape's JSON Schema and every node type's predicates (IRI, datatype, target).";
    fixed.push(("schema", "schema", "Schema", description, "application/json"));
    let description = match kg {
        true => "Instances per node type, provenance activities kept and pruned, tools, subscriptions, budgets.",
        false => "Tools, subscriptions and budgets.",
    };
    fixed.push(("stats", "stats", "Statistics", description, "application/json"));
    if scopes.contains(Scope::Builder) {
        let description = match kg {
            true => "Whether the store answers (and how fast), and what is registered.",
            false => "What is registered.",
        };
        fixed.push(("doctor", "doctor", "Health", description, "application/json"));
        if kg {
            let description = "The latest PROV-O activities, newest first.";
            fixed.push(("prov/latest", "prov-latest", "Latest provenance", description, "application/json"));
        }
    }
    for (path, name, title, description, mime) in fixed {
        listed.push(
            Resource::new(format!("{SCHEME}{path}"), name)
                .with_title(title)
                .with_description(description)
                .with_mime_type(mime),
        );
    }
    listed
}

/// A filtered page and a single instance, per node type.
pub(crate) fn templates(resources: &Resources) -> Vec<ResourceTemplate> {
    if resources.kg.is_none() {
        return Vec::new();
    }
    let mut templates = Vec::new();
    for node in &resources.node_types {
        let label = node.label;
        templates.push(
            ResourceTemplate::new(format!("{SCHEME}kg/{label}{{?where,limit,offset}}"), format!("{label}-page"))
                .with_title(format!("{label} instances, filtered"))
                .with_description(format!(
                    "A page of {label} instances. `where` is one clause `<field>=<value>` (only `=`), the value \
                     of the field's datatype; `limit` 1–1000 (default 100); follow `next` for the next page."
                ))
                .with_mime_type("application/json"),
        );
        templates.push(
            ResourceTemplate::new(format!("{SCHEME}kg/{label}/{{id}}"), format!("{label}-instance"))
                .with_title(format!("One {label}"))
                .with_description(format!(
                    "One {label} as JSON-LD, by its key{}.",
                    node.key.map(|key| format!(" (`{key}`)")).unwrap_or_default()
                ))
                .with_mime_type("application/ld+json"),
        );
    }
    templates
}

/// Why a read failed: told apart by type, so the read tool answers *not found* for a URI that
/// names nothing without reading an MCP message.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The URI names nothing this caller may read (a builder-only resource, to anyone else).
    Unknown,
    /// Outside the grammar, a value of the wrong datatype, or the store failed: as MCP sends it.
    Other(ErrorData),
}

impl From<ErrorData> for ReadError {
    fn from(error: ErrorData) -> ReadError {
        ReadError::Other(error)
    }
}

impl ReadError {
    /// The error `resources/read` answers for `uri`.
    pub(crate) fn into_mcp(self, uri: &str) -> ErrorData {
        match self {
            ReadError::Unknown => errors::unknown_resource(uri),
            ReadError::Other(error) => error,
        }
    }
}

/// `resources/read`.
pub(crate) async fn read(
    resources: &Resources,
    live: &dyn Live,
    uri: &str,
    trace_id: &str,
    (view, authenticated): (View, bool),
) -> Result<ReadResourceResult, ReadError> {
    let scopes = view.scopes();
    let builder = scopes.contains(Scope::Builder);
    // Builder-only resources are unknown to others, as masked tools are — whatever follows the
    // path, so no answer tells them apart from a URI that names nothing.
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    if !builder && [format!("{SCHEME}doctor"), format!("{SCHEME}prov/latest")].iter().any(|p| p == path) {
        return Err(ReadError::Unknown);
    }
    let target = match uri::parse(uri, &resources.node_types) {
        Ok(target) => target,
        Err(UriError::Unknown { .. }) => return Err(ReadError::Unknown),
        Err(error) => return Err(refused(uri, error).into()),
    };
    let kg = resources.kg.as_ref();
    let (mime, body) = match target {
        // Builder-only resources are unknown to others, as masked tools are.
        Target::Doctor | Target::ProvLatest if !builder => return Err(ReadError::Unknown),
        Target::Capabilities => {
            let Some(manifest) = live.manifest(view) else { return Err(ReadError::Unknown) };
            // The manifest's own bytes (cached per scope set), not a parse and re-serialisation.
            let text = String::from_utf8_lossy(&manifest).into_owned();
            let contents = ResourceContents::text(text, uri).with_mime_type("application/ld+json");
            return Ok(ReadResourceResult::new(vec![contents]));
        }
        Target::Doctor => ("application/json", Ok(fixed::doctor(resources, live, kg).await)),
        Target::Schema => ("application/json", Ok(fixed::schema(resources, live, view))),
        Target::Stats => ("application/json", fixed::stats(resources, live, kg, view, authenticated).await),
        // The rest is the knowledge graph's, which an app without node types has not.
        target => {
            let Some(kg) = kg else { return Err(ReadError::Unknown) };
            if let Target::Blob { sha256 } = target {
                return blob(kg, sha256, uri, trace_id).await;
            }
            read_kg(resources, kg, uri, target).await?
        }
    };
    let body = body.map_err(|error| errors::from_error(error, trace_id))?;
    let text = serde_json::to_string(&body).expect("JSON values serialise");
    Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type(mime)]))
}

/// The knowledge graph's documents: `(mime, body)`.
async fn read_kg(
    resources: &Resources,
    kg: &Kg,
    uri: &str,
    target: Target,
) -> Result<(&'static str, trails_core::Result<Value>), ReadError> {
    Ok(match target {
        Target::ProvLatest => ("application/json", fixed::prov_latest(kg).await),
        Target::Types => ("application/json", types(resources, kg).await),
        Target::List(request) => ("application/json", page(kg, uri, request, true).await),
        Target::Instance { node, id } => {
            let iri = mapping::instance_iri(kg.base(), node.label, &id);
            match instance(kg, node, &iri).await {
                Ok(Some(document)) => ("application/ld+json", Ok(document)),
                Ok(None) => return Err(ReadError::Unknown),
                Err(error) => ("application/ld+json", Err(error)),
            }
        }
        // Read above (not the knowledge graph's, or not a document).
        Target::Capabilities | Target::Schema | Target::Stats | Target::Doctor | Target::Blob { .. } => {
            return Err(ReadError::Unknown)
        }
    })
}

/// The bytes of a stored blob, as MCP blob contents (base64) of its media type. Only a host that
/// reads resources gets here: tool results show a blob's metadata and this URI.
async fn blob(kg: &Kg, sha256: String, uri: &str, trace_id: &str) -> Result<ReadResourceResult, ReadError> {
    let stored = kg.store().blob(sha256).await.map_err(|e| errors::from_error(store_failed(e), trace_id))?;
    let Some(blob) = stored else { return Err(ReadError::Unknown) };
    let encoded = base64::engine::general_purpose::STANDARD.encode(blob.bytes());
    Ok(ReadResourceResult::new(vec![ResourceContents::blob(encoded, uri).with_mime_type(blob.media_type())]))
}

pub(super) fn refused(uri: &str, error: UriError) -> ErrorData {
    // The message quotes parts of the URI: cut like the URI itself, so the error stays small.
    let uri = &*trails_core::validate::echo_name(uri);
    match error {
        UriError::Unknown { .. } => errors::unknown_resource(uri),
        UriError::Grammar { message, .. } => {
            let message = trails_core::validate::cut_text(&message, 1024).into_owned();
            ErrorData::invalid_params(message, Some(json!({ "uri": uri })))
        }
        UriError::TypeMismatch { field, value, expected_datatype } => ErrorData::invalid_params(
            format!("`{}` is not a valid {expected_datatype} for {field}", trails_core::validate::echo_name(&value)),
            Some(
                json!({ "uri": uri, "field": field, "reason": "type_mismatch", "expected_datatype": expected_datatype }),
            ),
        ),
    }
}

async fn types(resources: &Resources, kg: &Kg) -> trails_core::Result<Value> {
    let mut types = Vec::new();
    for node in &resources.node_types {
        types.push(json!({
            "label": node.label,
            "class": node.iri,
            "instances": fixed::count(kg, node).await?,
            "uri": format!("{SCHEME}kg/{}", node.label),
        }));
    }
    Ok(json!({ "types": types }))
}

/// A page of instances; with `cards`, each item has its evidence card (`card`).
pub(super) async fn page(kg: &Kg, uri: &str, request: ListRequest, cards: bool) -> trails_core::Result<Value> {
    let ListRequest { node, filter, limit, offset, after, clamped_from } = request;
    let mut filters = Vec::new();
    if let Some(filter) = &filter {
        let term = mapping::term(filter.predicate, filter.predicate.field, &filter.value)
            .map_err(|error| trails_core::Error::validation(vec![error]))?;
        filters.push((NamedNode::new_unchecked(filter.predicate.iri), term));
    }
    // One more than the page: whether there is a next page, without a second count.
    let find = Find {
        graphs: mapping::graphs_with_subtypes(kg.base(), node),
        class: NamedNode::new_unchecked(node.iri),
        filters,
        limit: limit + 1,
        offset,
        after: after.as_deref().map(NamedNode::new_unchecked),
    };
    let mut found = kg.store().find(find).await.map_err(trails_kg::store_failed)?;
    let more = found.subjects.len() > limit;
    found.subjects.truncate(limit);
    let cards = if cards {
        super::card::cards(kg, node, &found.subjects).await?
    } else {
        vec![Map::new(); found.subjects.len()]
    };
    let items: Vec<Value> = found
        .subjects
        .iter()
        .zip(cards)
        .map(|(iri, mut card)| {
            // An instance of a type that extends this one is listed as its own type: its id,
            // URI and `node_type` are the ones `trails_kg_get` and `resources/read` take.
            let own = mapping::own_type(kg.base(), node, iri.as_str());
            // The IRI's last segment is the key already percent-encoded: the instance URI reuses it.
            let segment = iri.as_str().rsplit('/').next().unwrap_or_default();
            let id = label_of(own, iri.as_str(), kg.base());
            let label = card.remove("label").unwrap_or_else(|| json!(id));
            let mut item = Map::new();
            item.insert("iri".into(), json!(iri.as_str()));
            item.insert("id".into(), json!(id));
            item.insert("label".into(), label);
            item.insert("uri".into(), json!(format!("{SCHEME}kg/{}/{segment}", own.label)));
            if own.label != node.label {
                item.insert("node_type".into(), json!(own.label));
            }
            item.extend(card);
            Value::Object(item)
        })
        .collect();
    // The next page starts after this one's last IRI, not at an offset: instances created or
    // deleted between two reads never make a page repeat or skip one that was there.
    let next = found.subjects.last().filter(|_| more).map(|last| next_uri(uri, last.as_str()));
    let mut body = json!({ "items": items, "total": found.total, "limit": limit, "offset": offset, "next": next });
    if let Some(after) = after {
        body["after"] = json!(after);
    }
    if let Some(asked) = clamped_from {
        body["clamped"] = json!(format!("limit {asked} is over the maximum; clamped to {limit}"));
    }
    Ok(body)
}

/// The instance's key (what follows `<base>/<Label>/`, decoded): its `id` in a list, and its
/// label there unless the type has a title.
fn label_of(node: &NodeTypeInfo, iri: &str, base: &str) -> String {
    let prefix = format!("{base}/{}/", node.label);
    let key = iri.strip_prefix(&prefix).unwrap_or(iri);
    percent_encoding::percent_decode_str(key).decode_utf8_lossy().into_owned()
}

/// `uri` continued after `last`: its `where` and `limit` kept, `offset` and `after` replaced.
fn next_uri(uri: &str, last: &str) -> String {
    let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
    let mut pairs: Vec<String> = query
        .split('&')
        .filter(|pair| !pair.is_empty() && !pair.starts_with("offset=") && !pair.starts_with("after="))
        .map(str::to_owned)
        .collect();
    pairs.push(format!("after={}", percent_encoding::utf8_percent_encode(last, percent_encoding::NON_ALPHANUMERIC)));
    format!("{path}?{}", pairs.join("&"))
}

/// One instance as JSON-LD: `@id`, `@type`, one property per field keyed by its predicate IRI,
/// and an `@context` that types each predicate so expansion keeps every value.
async fn instance(kg: &Kg, node: &'static NodeTypeInfo, iri: &str) -> trails_core::Result<Option<Value>> {
    let Ok(subject) = NamedNode::new(iri) else { return Ok(None) };
    let graph = NamedNode::new_unchecked(mapping::graph_iri(kg.base(), node.label));
    let triples = kg.store().describe(graph, subject).await.map_err(trails_kg::store_failed)?;
    let is_a = triples
        .iter()
        .any(|(p, o)| p.as_str() == oxrdf::vocab::rdf::TYPE.as_str() && o.to_string() == format!("<{}>", node.iri));
    if !is_a {
        return Ok(None);
    }
    let fields = mapping::instance(node, &triples);
    let mut context = Map::new();
    // 1.1: `@json` values (nested shapes) need it.
    context.insert("@version".into(), json!(1.1));
    context.insert("xsd".into(), json!("http://www.w3.org/2001/XMLSchema#"));
    let mut document = Map::new();
    document.insert("@id".into(), json!(iri));
    // Every class the store types it with: its own and each one up the `extends` chain.
    let mut classes = vec![node.iri];
    let mut parent = node.parent;
    while let Some(class) = parent {
        classes.push(class.iri);
        parent = class.parent;
    }
    document.insert("@type".into(), json!(classes));
    for predicate in node.all_predicates() {
        let Some(value) = fields.get(predicate.field) else { continue };
        let value = match (predicate.datatype, predicate.many, value) {
            // A list of nested shapes is one `rdf:JSON` value per item; a `@json` term in the
            // context would make the whole array one value, so each item is typed in place.
            // A blob is its metadata object (never its bytes: fetch them at its `uri`).
            (Datatype::Json | Datatype::Blob, true, Value::Array(items)) => {
                json!(items.iter().map(|item| json!({ "@value": item, "@type": "@json" })).collect::<Vec<_>>())
            }
            _ => {
                let coercion = match predicate.datatype {
                    Datatype::Iri => json!({ "@type": "@id" }),
                    Datatype::Json | Datatype::Blob => json!({ "@type": "@json" }),
                    Datatype::String => json!({}),
                    other => json!({ "@type": other.iri() }),
                };
                context.insert(predicate.iri.to_owned(), coercion);
                value.clone()
            }
        };
        document.insert(predicate.iri.to_owned(), value);
    }
    document.insert("@context".into(), Value::Object(context));
    Ok(Some(Value::Object(document)))
}
