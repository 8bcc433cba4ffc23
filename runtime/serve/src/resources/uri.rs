//! `trails://` resource URIs (`runtime/guide/03-knowledge-graph.md`): the one parser of what a client may ask to read.
//!
//! ```text
//! trails://schema | trails://kg/types | trails://stats | trails://doctor | trails://prov/latest
//! trails://capabilities[#<capability id>]
//! trails://kg/<Type>[?where=<field>=<value>][&limit=<n>][&offset=<n>][&after=<iri>]
//! trails://kg/<Type>/<id>
//! trails://blob/<sha256>
//! ```
//! `where` is one clause with `=` only; its value is parsed under the field's datatype here and
//! bound as an RDF term by the store, never spliced into query text. `"`, `\` and line breaks are
//! refused before anything else is looked at.

use percent_encoding::percent_decode_str;
use serde_json::Value;

use trails_core::declare::{Datatype, NodeTypeInfo, PredicateInfo};
use trails_kg::{DEFAULT_LIMIT, MAX_LIMIT};

/// The scheme every Trails resource URI starts with.
pub(crate) const SCHEME: &str = "trails://";

/// The capability manifest as a resource (the stdio descriptors' `manifest_uri` points into it).
pub(crate) const MANIFEST_URI: &str = "trails://capabilities";

/// What a resource URI names.
#[derive(Debug)]
pub(crate) enum Target {
    /// The capability manifest (JSON-LD) the caller sees.
    Capabilities,
    /// Every shape and node type with its JSON Schema and predicate IRIs.
    Schema,
    /// Node types with instance counts.
    Types,
    /// Runtime statistics.
    Stats,
    /// Health checks (`builder` scope).
    Doctor,
    /// The latest provenance activities (`builder` scope).
    ProvLatest,
    /// A page of a node type's instances.
    List(ListRequest),
    /// One instance.
    Instance {
        /// Its node type.
        node: &'static NodeTypeInfo,
        /// Its key (percent-decoded), or its generated id.
        id: String,
    },
    /// The bytes of a stored [`trails_core::Blob`], by SHA-256 (64 lowercase hex digits).
    Blob {
        /// The SHA-256.
        sha256: String,
    },
}

/// `trails://kg/<Type>?where=…&limit=…&offset=…`
#[derive(Debug)]
pub(crate) struct ListRequest {
    pub(crate) node: &'static NodeTypeInfo,
    pub(crate) filter: Option<Filter>,
    pub(crate) limit: usize,
    pub(crate) offset: usize,
    /// The cursor of a `next` link: only instances whose IRI sorts after it.
    pub(crate) after: Option<String>,
    /// The limit asked for when it was over [`MAX_LIMIT`] (the page says it was clamped).
    pub(crate) clamped_from: Option<usize>,
}

/// One `field=value` clause, the value already of the field's type.
#[derive(Debug)]
pub(crate) struct Filter {
    pub(crate) predicate: &'static PredicateInfo,
    pub(crate) value: Value,
}

/// Why a URI names nothing readable. Each is a `-32602`.
#[derive(Debug, PartialEq, thiserror::Error)]
pub(crate) enum UriError {
    /// Not a resource this server has.
    #[error("unknown resource: {uri}")]
    Unknown { uri: String },
    /// A resource, asked for in a way the grammar does not allow.
    #[error("{message}")]
    Grammar { uri: String, message: String },
    /// A `where` value that is not of its field's datatype.
    #[error("`{value}` is not a valid {expected_datatype} for {field}")]
    TypeMismatch { field: String, value: String, expected_datatype: &'static str },
}

/// What the filter grammar allows, said in every grammar error.
const WHERE_GRAMMAR: &str =
    "`where` takes exactly one clause `<field>=<value>` (only `=`; no other operators, no conjunctions, no nested paths)";

/// Parse `uri` against the node types this server has.
pub(crate) fn parse(uri: &str, node_types: &[&'static NodeTypeInfo]) -> Result<Target, UriError> {
    let grammar = |message: String| UriError::Grammar { uri: uri.to_owned(), message };
    let unknown = || UriError::Unknown { uri: uri.to_owned() };
    if uri.contains(['"', '\\', '\n', '\r']) {
        return Err(grammar("a resource URI may not contain `\"`, `\\` or line breaks".into()));
    }
    let rest = uri.strip_prefix(SCHEME).ok_or_else(unknown)?;
    // A descriptor's `manifest_uri` names its capability by fragment; the whole manifest answers.
    if rest.split_once('#').map_or(rest, |(path, _)| path) == "capabilities" {
        return Ok(Target::Capabilities);
    }
    if rest.contains('#') {
        return Err(grammar("a resource URI has no fragment (`#…`)".into()));
    }
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    let fixed = match path {
        "schema" => Some(Target::Schema),
        "capabilities" => Some(Target::Capabilities),
        "kg/types" => Some(Target::Types),
        "stats" => Some(Target::Stats),
        "doctor" => Some(Target::Doctor),
        "prov/latest" => Some(Target::ProvLatest),
        _ => None,
    };
    if let Some(target) = fixed {
        return match query {
            None => Ok(target),
            Some(_) => Err(grammar(format!("{SCHEME}{path} takes no query"))),
        };
    }
    if let Some(sha256) = path.strip_prefix("blob/") {
        if !trails_core::declare::blob::is_sha256(sha256) {
            return Err(grammar(format!("a blob URI is {SCHEME}blob/<sha256>: 64 lowercase hex digits")));
        }
        return match query {
            None => Ok(Target::Blob { sha256: sha256.to_owned() }),
            Some(_) => Err(grammar("a blob URI takes no query".into())),
        };
    }
    let mut segments = path.strip_prefix("kg/").ok_or_else(unknown)?.split('/');
    let label = segments.next().unwrap_or_default();
    let node = node_types.iter().copied().find(|node| node.label == label).ok_or_else(unknown)?;
    match (segments.next(), segments.next()) {
        (None, _) => list(uri, node, query),
        (Some(id), None) if !id.is_empty() => {
            if query.is_some() {
                return Err(grammar("an instance URI takes no query".into()));
            }
            Ok(Target::Instance { node, id: decode(uri, id)? })
        }
        _ => Err(unknown()),
    }
}

fn decode(uri: &str, text: &str) -> Result<String, UriError> {
    // Encoded `"`, `\` and line breaks are plain characters of an instance id (keys may hold
    // them; the store binds values as terms); a `where` value refuses them decoded too.
    let decoded = percent_decode_str(text).decode_utf8().map_err(|_| UriError::Grammar {
        uri: uri.to_owned(),
        message: "a percent-encoded part of the URI is not UTF-8".into(),
    })?;
    Ok(decoded.into_owned())
}

fn list(uri: &str, node: &'static NodeTypeInfo, query: Option<&str>) -> Result<Target, UriError> {
    let grammar = |message: String| UriError::Grammar { uri: uri.to_owned(), message };
    let (mut filter, mut limit, mut offset, mut after) = (None, None, None, None);
    for pair in query.unwrap_or_default().split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let number = |what: &str| {
            decode(uri, value)?
                .parse::<usize>()
                .map_err(|_| grammar(format!("`{what}` takes a non-negative integer, not `{value}`")))
        };
        match key {
            "where" if filter.is_some() => return Err(grammar(format!("{WHERE_GRAMMAR}; this URI has two"))),
            "where" => {
                // Decoded too: `%22` is a quote all the same (the value is bound as a term, never
                // spliced; this is the seed's second belt).
                let value = decode(uri, value)?;
                if value.contains(['"', '\\', '\n', '\r']) {
                    return Err(grammar(
                        "a `where` value may not contain `\"`, `\\` or line breaks, encoded or not".into(),
                    ));
                }
                filter = Some(clause(uri, node, &value)?);
            }
            "limit" if limit.is_none() => limit = Some(number("limit")?),
            "offset" if offset.is_none() => offset = Some(number("offset")?),
            "after" if after.is_none() => {
                let iri = decode(uri, value)?;
                if oxrdf::NamedNode::new(iri.as_str()).is_err() {
                    return Err(grammar(format!("`after` is the IRI a page ended at (from `next`), not `{iri}`")));
                }
                after = Some(iri);
            }
            "limit" | "offset" | "after" => return Err(grammar(format!("`{key}` is given twice"))),
            other => {
                return Err(grammar(format!(
                "unknown query parameter `{other}`: a list takes `where`, `limit`, `offset` (and `after`, from `next`)"
            )))
            }
        }
    }
    let asked = limit.unwrap_or(DEFAULT_LIMIT);
    if asked == 0 {
        return Err(grammar(format!("`limit` is 1 to {MAX_LIMIT}")));
    }
    Ok(Target::List(ListRequest {
        node,
        filter,
        limit: asked.min(MAX_LIMIT),
        offset: offset.unwrap_or(0),
        after,
        clamped_from: (asked > MAX_LIMIT).then_some(asked),
    }))
}

/// `field=value`, the value parsed under the field's datatype.
fn clause(uri: &str, node: &'static NodeTypeInfo, clause: &str) -> Result<Filter, UriError> {
    let grammar = |message: String| UriError::Grammar { uri: uri.to_owned(), message };
    let fields = || node.all_predicates().iter().map(|p| p.field).collect::<Vec<_>>().join(", ");
    let Some((field, value)) = clause.split_once('=') else {
        return Err(grammar(format!("{WHERE_GRAMMAR}; got `{clause}`")));
    };
    if field.ends_with(['!', '<', '>', '~']) || value.starts_with('=') {
        return Err(grammar(format!("{WHERE_GRAMMAR}; got `{clause}`")));
    }
    if field.contains(['.', '/']) {
        return Err(grammar(format!("{WHERE_GRAMMAR}; `{field}` is a nested path")));
    }
    let Some(predicate) = node.all_predicates().into_iter().find(|p| p.field == field) else {
        return Err(grammar(format!("{} has no field `{field}` (its fields: {})", node.label, fields())));
    };
    let mismatch = || UriError::TypeMismatch {
        field: field.to_owned(),
        value: value.to_owned(),
        expected_datatype: xsd_name(predicate.datatype),
    };
    let value = match predicate.datatype {
        Datatype::String => Value::String(value.to_owned()),
        Datatype::Integer => match (value.parse::<i64>(), value.parse::<u64>()) {
            (Ok(n), _) => Value::from(n),
            (_, Ok(n)) => Value::from(n),
            _ => return Err(mismatch()),
        },
        Datatype::Double => {
            value.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number).ok_or_else(mismatch)?
        }
        // xsd:boolean's lexical space.
        Datatype::Boolean => match value {
            "true" | "1" => Value::Bool(true),
            "false" | "0" => Value::Bool(false),
            _ => return Err(mismatch()),
        },
        // Stored in UTC, spelt as `trails::DateTime` serialises: any offset is brought to that.
        Datatype::DateTime => match chrono::DateTime::parse_from_rfc3339(value) {
            Ok(at) => {
                Value::String(at.with_timezone(&chrono::Utc).to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
            }
            Err(_) => return Err(mismatch()),
        },
        Datatype::Iri => match oxrdf::NamedNode::new(value) {
            Ok(_) => Value::String(value.to_owned()),
            Err(_) => return Err(mismatch()),
        },
        Datatype::Json => {
            return Err(grammar(format!("{field} holds a nested shape, which `where` cannot compare")));
        }
        Datatype::Blob => {
            return Err(grammar(format!("{field} holds binary content, which `where` cannot compare")));
        }
    };
    Ok(Filter { predicate, value })
}

/// The datatype as a client reads it in an error (`xsd:integer`, not the full IRI).
fn xsd_name(datatype: Datatype) -> &'static str {
    match datatype {
        Datatype::String => "xsd:string",
        Datatype::Integer => "xsd:integer",
        Datatype::Double => "xsd:double",
        Datatype::Boolean => "xsd:boolean",
        Datatype::DateTime => "xsd:dateTime",
        Datatype::Iri => "xsd:anyURI",
        Datatype::Json | Datatype::Blob => "rdf:JSON",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPES: &[&NodeTypeInfo] = &[&crate::__fuzz::REQUIREMENT];

    fn grammar_error(uri: &str) -> String {
        match parse(uri, TYPES) {
            Err(UriError::Grammar { message, .. }) => message,
            other => panic!("{uri}: expected a grammar error, got {other:?}"),
        }
    }

    #[test]
    fn fixed_resources_lists_and_instances_parse() {
        assert!(matches!(parse("trails://schema", TYPES), Ok(Target::Schema)));
        assert!(matches!(parse("trails://kg/types", TYPES), Ok(Target::Types)));
        assert!(matches!(parse("trails://stats", TYPES), Ok(Target::Stats)));
        assert!(matches!(parse("trails://doctor", TYPES), Ok(Target::Doctor)));
        assert!(matches!(parse("trails://prov/latest", TYPES), Ok(Target::ProvLatest)));
        assert!(grammar_error("trails://stats?limit=1").contains("takes no query"));
        let Ok(Target::List(list)) = parse("trails://kg/Requirement", TYPES) else { panic!() };
        assert_eq!((list.limit, list.offset, list.clamped_from, list.filter.is_none()), (100, 0, None, true));
        let Ok(Target::List(list)) = parse("trails://kg/Requirement?where=priority%3D2&offset=5&limit=5000", TYPES)
        else {
            panic!()
        };
        assert_eq!((list.limit, list.offset, list.clamped_from), (1000, 5, Some(5000)));
        let filter = list.filter.unwrap();
        assert_eq!((filter.predicate.field, filter.value.clone()), ("priority", Value::from(2)));
        let Ok(Target::Instance { id, .. }) = parse("trails://kg/Requirement/REQ%201", TYPES) else { panic!() };
        assert_eq!(id, "REQ 1");
        // A `where` value refuses quotes, backslashes and line breaks decoded as well as raw.
        for encoded in ["status=x%22%20%7D%20%3B%20DROP%20ALL%20%23", "status=a%0Ab", "status=a%5Cb", "status=a%0Db"] {
            let refused = grammar_error(&format!("trails://kg/Requirement?where={encoded}"));
            assert!(refused.contains("encoded or not"), "{encoded}: {refused}");
        }
        let Ok(Target::List(list)) =
            parse("trails://kg/Requirement?limit=2&after=urn%3At%2FRequirement%2FREQ-1", TYPES)
        else {
            panic!()
        };
        assert_eq!(list.after.as_deref(), Some("urn:t/Requirement/REQ-1"));
        // `=` inside the value belongs to the value.
        let Ok(Target::List(list)) = parse("trails://kg/Requirement?where=req_id=a=b", TYPES) else { panic!() };
        assert_eq!(list.filter.unwrap().value, Value::from("a=b"));
        let sha = "0123456789abcdef".repeat(4);
        let Ok(Target::Blob { sha256 }) = parse(&format!("trails://blob/{sha}"), TYPES) else { panic!() };
        assert_eq!(sha256, sha);
        for bad in
            [format!("trails://blob/{}", sha.to_uppercase()), format!("trails://blob/{sha}0"), "trails://blob/".into()]
        {
            assert!(grammar_error(&bad).contains("64 lowercase hex digits"), "{bad}");
        }
        assert!(grammar_error(&format!("trails://blob/{sha}?x=1")).contains("no query"));
    }

    #[test]
    fn unknown_resources_are_unknown() {
        for uri in [
            "trails://nothing",
            "https://kg/Requirement",
            "trails://kg/Nope",
            "trails://kg/Requirement/a/b",
            "trails://kg/Requirement/",
        ] {
            assert_eq!(parse(uri, TYPES).unwrap_err(), UriError::Unknown { uri: uri.into() }, "{uri}");
        }
    }

    #[test]
    fn the_filter_grammar_refuses_what_it_does_not_support_and_says_what_it_does() {
        for uri in [
            "trails://kg/Requirement?where=priority>2",
            "trails://kg/Requirement?where=priority>=2",
            "trails://kg/Requirement?where=priority!=2",
            "trails://kg/Requirement?where=priority==2",
            "trails://kg/Requirement?where=owner.name=x",
            "trails://kg/Requirement?where=priority=1&where=done=true",
        ] {
            assert!(grammar_error(uri).contains("exactly one clause"), "{uri}");
        }
        assert!(grammar_error("trails://kg/Requirement?where=nope=1")
            .contains("its fields: req_id, priority, score, done, due, owner, details, attachment"));
        assert!(grammar_error("trails://kg/Requirement?where=details=1").contains("nested shape"));
        assert!(grammar_error("trails://kg/Requirement?where=attachment=1").contains("binary content"));
        assert!(grammar_error("trails://kg/Requirement?sort=priority").contains("unknown query parameter"));
        assert!(grammar_error("trails://kg/Requirement?limit=0").contains("1 to 1000"));
        assert!(grammar_error("trails://kg/Requirement?after=not%20an%20iri").contains("from `next`"));
        assert!(grammar_error("trails://kg/Requirement?limit=-1").contains("non-negative integer"));
        assert!(grammar_error("trails://kg/Requirement/REQ-1?limit=2").contains("no query"));
        for uri in ["trails://kg/Requirement?where=req_id=\"x\"", "trails://kg/Requirement?where=req_id=a\\b"] {
            assert!(grammar_error(uri).contains("line breaks"), "{uri}");
        }
        // Encoded, a `where` value refuses them all the same; an instance id (a key may hold
        // them) takes them as characters.
        assert!(grammar_error("trails://kg/Requirement?where=req_id=a%22%0Ab").contains("encoded or not"));
        let Ok(Target::Instance { id, .. }) = parse("trails://kg/Requirement/a%5Cb", TYPES) else { panic!() };
        assert_eq!(id, "a\\b");
    }

    #[test]
    fn values_are_read_in_their_datatypes_lexical_space() {
        let value = |uri: &str| match parse(uri, TYPES) {
            Ok(Target::List(list)) => list.filter.unwrap().value,
            other => panic!("{uri}: {other:?}"),
        };
        assert_eq!(value("trails://kg/Requirement?where=done=1"), Value::Bool(true));
        assert_eq!(value("trails://kg/Requirement?where=done=false"), Value::Bool(false));
    }

    #[test]
    fn a_value_of_the_wrong_datatype_says_which_was_expected() {
        assert_eq!(
            parse("trails://kg/Requirement?where=priority=high", TYPES).unwrap_err(),
            UriError::TypeMismatch { field: "priority".into(), value: "high".into(), expected_datatype: "xsd:integer" }
        );
        assert!(matches!(
            parse("trails://kg/Requirement?where=done=yes", TYPES),
            Err(UriError::TypeMismatch { expected_datatype: "xsd:boolean", .. })
        ));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_text_is_answered_never_a_panic(text in "\\PC*", tail in "[ -~]{0,40}") {
                let _ = parse(&text, TYPES);
                let _ = parse(&format!("trails://kg/Requirement?{tail}"), TYPES);
                let _ = parse(&format!("trails://kg/Requirement/{tail}"), TYPES);
            }

            #[test]
            fn an_instance_id_survives_its_encoding(id in "\\PC{1,40}") {
                let encoded = percent_encoding::utf8_percent_encode(&id, percent_encoding::NON_ALPHANUMERIC);
                match parse(&format!("trails://kg/Requirement/{encoded}"), TYPES) {
                    Ok(Target::Instance { id: parsed, .. }) => prop_assert_eq!(parsed, id),
                    other => prop_assert!(false, "{:?}", other),
                }
            }

            #[test]
            fn limits_are_clamped_and_say_so(limit in 1usize..100_000, offset in 0usize..1_000_000, priority in any::<i64>()) {
                let uri = format!("trails://kg/Requirement?where=priority={priority}&limit={limit}&offset={offset}");
                let Ok(Target::List(list)) = parse(&uri, TYPES) else { return Err(TestCaseError::fail(uri)) };
                prop_assert_eq!(list.limit, limit.min(MAX_LIMIT));
                prop_assert_eq!(list.clamped_from, (limit > MAX_LIMIT).then_some(limit));
                prop_assert_eq!(list.offset, offset);
                prop_assert_eq!(list.filter.map(|f| f.value), Some(Value::from(priority)));
            }
        }
    }
}
