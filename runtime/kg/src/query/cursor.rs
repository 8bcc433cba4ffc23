//! [`Page::next`](super::Page::next): where a keyset page starts, as an opaque token. It holds
//! the last instance's sort-key values and IRI, and a digest of the ordering it was made for,
//! so a cursor given to another ordering is refused rather than misread. Every value is
//! checked again when it comes back: a client may alter it, which moves it within the same
//! query's results at most (the filters are not in it), as an altered offset would.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use oxrdf::{Literal, NamedNode, Term};
use serde_json::{json, Value};

use super::sparql::{Key, Position};
use crate::declare::{Datatype, NodeTypeInfo, PredicateInfo};
use crate::error::{Error, Result};
use crate::validate::{FieldCode, FieldError};

/// The ordering a cursor belongs to: the node type and its keys.
fn ordering(info: &NodeTypeInfo, keys: &[Key]) -> String {
    let mut text = info.iri.to_owned();
    for (predicate, descending) in keys {
        text.push(' ');
        text.push_str(predicate.iri);
        text.push_str(if *descending { " desc" } else { " asc" });
    }
    trails_core::sha256_hex(&text)[..16].to_owned()
}

pub(super) fn encode(info: &NodeTypeInfo, keys: &[Key], position: &Position) -> String {
    let values: Vec<Value> = position
        .keys
        .iter()
        .map(|term| match term {
            None => Value::Null,
            Some(Term::Literal(literal)) => Value::String(literal.value().to_owned()),
            Some(Term::NamedNode(iri)) => Value::String(iri.as_str().to_owned()),
            Some(other) => Value::String(other.to_string()),
        })
        .collect();
    let token = json!({ "o": ordering(info, keys), "k": values, "s": position.iri.as_str() });
    URL_SAFE_NO_PAD.encode(token.to_string())
}

pub(super) fn decode(info: &NodeTypeInfo, keys: &[Key], cursor: &str) -> Result<Position> {
    let refused = |why: &str| {
        Error::validation(vec![FieldError {
            field: "cursor".into(),
            code: FieldCode::Type,
            message: format!("not a cursor of this query: {why}"),
            value: Value::String(cursor.chars().take(200).collect()),
            constraint: json!("the `next` of a page of the same query"),
        }])
    };
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| refused("it does not decode"))?;
    let token: Value = serde_json::from_slice(&bytes).map_err(|_| refused("it does not decode"))?;
    if token["o"].as_str() != Some(ordering(info, keys).as_str()) {
        return Err(refused("it was made for another ordering"));
    }
    let iri = token["s"]
        .as_str()
        .and_then(|s| NamedNode::new(s).ok())
        .ok_or_else(|| refused("its instance is not an IRI"))?;
    let values =
        token["k"].as_array().filter(|v| v.len() == keys.len()).ok_or_else(|| refused("its keys do not fit"))?;
    let mut terms = Vec::with_capacity(values.len());
    for ((predicate, _), value) in keys.iter().zip(values) {
        let term = match value {
            Value::Null => None,
            Value::String(lexical) => {
                Some(key_term(predicate, lexical).ok_or_else(|| refused("a key does not fit its field"))?)
            }
            _ => return Err(refused("a key does not decode")),
        };
        terms.push(term);
    }
    Ok(Position { keys: terms, iri })
}

/// A key's value as the page query compares it: text for the keys compared as text, else a
/// literal of the field's datatype whose value parses as one.
fn key_term(predicate: &PredicateInfo, lexical: &str) -> Option<Term> {
    if super::sparql::textual(predicate) {
        return Some(Term::Literal(Literal::new_simple_literal(lexical)));
    }
    let fits = match predicate.datatype {
        Datatype::Integer => lexical.parse::<i64>().is_ok() || lexical.parse::<u64>().is_ok(),
        Datatype::Double => lexical.parse::<f64>().is_ok(),
        Datatype::DateTime => chrono::DateTime::parse_from_rfc3339(lexical).is_ok(),
        _ => true,
    };
    let literal = match predicate.datatype {
        Datatype::String => Literal::new_simple_literal(lexical),
        other => Literal::new_typed_literal(lexical, NamedNode::new_unchecked(other.iri())),
    };
    fits.then_some(Term::Literal(literal))
}

#[cfg(test)]
mod tests {
    use super::*;

    static INFO: NodeTypeInfo = NodeTypeInfo {
        label: "Thing",
        iri: "https://example.org/Thing",
        parent: None,
        unique: &[],
        key: None,
        predicates: &[],
        validate: |_, _, _| {},
    };

    #[test]
    fn a_cursor_round_trips_and_refuses_what_does_not_decode_and_other_orderings() {
        let position = Position {
            keys: vec![Some(Term::Literal(Literal::from(3))), None],
            iri: NamedNode::new("https://example.org/Thing/a").unwrap(),
        };
        let keys: &[Key] = &[];
        // No keys: only the IRI is kept; keys are checked against the ordering.
        let plain = Position { keys: Vec::new(), iri: position.iri.clone() };
        let cursor = encode(&INFO, keys, &plain);
        assert_eq!(decode(&INFO, keys, &cursor).unwrap(), plain);
        let wrong_keys = encode(&INFO, keys, &position);
        assert!(decode(&INFO, keys, &wrong_keys).is_err(), "two keys for an ordering of none");
        let mut bytes = URL_SAFE_NO_PAD.decode(&cursor).unwrap();
        bytes[0] = b'[';
        assert!(decode(&INFO, keys, &URL_SAFE_NO_PAD.encode(bytes)).is_err(), "not a cursor's JSON");
        let injected = json!({"o": ordering(&INFO, keys), "k": [], "s": "x> } DELETE"}).to_string();
        assert!(decode(&INFO, keys, &URL_SAFE_NO_PAD.encode(injected)).is_err(), "not an IRI");
        assert!(decode(&INFO, keys, "not base64 !").is_err());
        let forged = URL_SAFE_NO_PAD.encode(json!({"o": "0000", "k": [], "s": "urn:x"}).to_string());
        assert!(decode(&INFO, keys, &forged).is_err(), "another ordering");
    }

    static BADGE: PredicateInfo = PredicateInfo {
        field: "badge",
        iri: "https://example.org/badge",
        datatype: Datatype::Integer,
        required: true,
        many: false,
        target: None,
        role: None,
    };

    #[test]
    fn a_key_comes_back_as_its_fields_datatype_or_is_refused() {
        let keys: &[Key] = &[(&BADGE, true)];
        let seven = Term::Literal(Literal::new_typed_literal("7", oxrdf::vocab::xsd::INTEGER));
        let iri = NamedNode::new("https://example.org/Thing/a").unwrap();
        let at = Position { keys: vec![Some(seven)], iri: iri.clone() };
        assert_eq!(decode(&INFO, keys, &encode(&INFO, keys, &at)).unwrap(), at);
        let absent = Position { keys: vec![None], iri };
        assert_eq!(decode(&INFO, keys, &encode(&INFO, keys, &absent)).unwrap(), absent);
        for key in [json!("seven"), json!("7\" } DELETE"), json!(7), json!({"l": "7"})] {
            let forged = json!({"o": ordering(&INFO, keys), "k": [key], "s": "urn:x"}).to_string();
            assert!(decode(&INFO, keys, &URL_SAFE_NO_PAD.encode(forged)).is_err(), "{key}");
        }
    }
}
