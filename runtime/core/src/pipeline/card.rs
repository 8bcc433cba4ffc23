//! Evidence cards: what a list of instances shows of each one when it is shown compactly (the
//! `trails_kg_list` pages, the KG resources, a capability's cut list of node-type instances). A
//! card is built from the fields the node type gives a display role and from nothing else
//! (PDPP: never from guessing at field names): the title as its label, a bounded excerpt of the
//! summary (else the body), the timestamp, status, identifier and url.

use serde_json::{json, Map, Value};

use crate::declare::DisplayRole;

/// Characters of a title a card shows: a label, not the text.
pub const TITLE_CHARS: usize = 160;
/// Characters of the summary (or body) a card shows; the rest is one call away.
pub const EXCERPT_CHARS: usize = 280;
/// Characters of a status or an identifier.
const SHORT_CHARS: usize = 128;
/// A longer url is left out: a cut one leads nowhere (and a card must fit the smallest window).
pub const URL_CHARS: usize = 512;

/// The card of one instance's values (its fields by name), given which field has which role.
pub fn card<F: AsRef<str>>(roles: &[(DisplayRole, F)], fields: &Value) -> Map<String, Value> {
    let value = |role: DisplayRole| {
        let (_, field) = roles.iter().find(|(r, _)| *r == role)?;
        fields.get(field.as_ref()).filter(|v| !v.is_null())
    };
    let text = |role: DisplayRole| value(role).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
    let mut card = Map::new();
    if let Some(title) = text(DisplayRole::Title) {
        card.insert("label".into(), json!(cut(title, TITLE_CHARS)));
    }
    if let Some(excerpt) = text(DisplayRole::Summary).or_else(|| text(DisplayRole::Body)) {
        card.insert("excerpt".into(), json!(cut(excerpt, EXCERPT_CHARS)));
    }
    if let Some(timestamp) = value(DisplayRole::Timestamp) {
        card.insert("timestamp".into(), timestamp.clone());
    }
    if let Some(status) = text(DisplayRole::Status) {
        card.insert("status".into(), json!(cut(status, SHORT_CHARS)));
    }
    match value(DisplayRole::Identifier) {
        Some(Value::String(id)) => {
            card.insert("identifier".into(), json!(cut(id, SHORT_CHARS)));
        }
        // An integer as it is; any other number as text (what the card's schema allows).
        Some(Value::Number(number)) if number.is_i64() || number.is_u64() => {
            card.insert("identifier".into(), json!(number));
        }
        Some(Value::Number(number)) => {
            card.insert("identifier".into(), json!(number.to_string()));
        }
        _ => {}
    }
    if let Some(url) = text(DisplayRole::Url).filter(|url| url.chars().count() <= URL_CHARS) {
        card.insert("url".into(), json!(url));
    }
    card
}

/// A shape's display roles as `Shape::DISPLAY_ROLES` writes them (`"title":"name","status":"state"`):
/// each role with its field. Unknown roles (there are none: the macro checks them) are skipped.
pub(crate) fn parse_roles(members: &str) -> Vec<(DisplayRole, Box<str>)> {
    if members.is_empty() {
        return Vec::new();
    }
    let Ok(Value::Object(roles)) = serde_json::from_str::<Value>(&format!("{{{members}}}")) else { return Vec::new() };
    roles
        .into_iter()
        .filter_map(|(role, field)| {
            let role = DisplayRole::ALL.iter().find(|(name, _)| *name == role)?.1;
            Some((role, field.as_str()?.into()))
        })
        .collect()
}

/// `text` up to `limit` characters, an ellipsis marking a cut.
fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles() -> Vec<(DisplayRole, &'static str)> {
        vec![
            (DisplayRole::Title, "name"),
            (DisplayRole::Summary, "summary"),
            (DisplayRole::Body, "text"),
            (DisplayRole::Identifier, "number"),
            (DisplayRole::Url, "link"),
            (DisplayRole::Timestamp, "at"),
            (DisplayRole::Status, "state"),
        ]
    }

    #[test]
    fn a_card_shows_the_roles_bounded() {
        let long = "é".repeat(EXCERPT_CHARS + 50);
        let fields = json!({"name": "Brakes", "text": long, "number": 12, "link": "x".repeat(3000),
                            "at": "2026-11-26T12:00:00Z", "state": "done"});
        let card = card(&roles(), &fields);
        assert_eq!((&card["timestamp"], &card["status"]), (&json!("2026-11-26T12:00:00Z"), &json!("done")));
        assert_eq!(card["label"], "Brakes");
        let excerpt = card["excerpt"].as_str().unwrap();
        assert_eq!(excerpt.chars().count(), EXCERPT_CHARS + 1, "cut at the bound, with an ellipsis");
        assert!(excerpt.ends_with('…'));
        assert_eq!(card["identifier"], 12);
        assert!(card.get("url").is_none(), "a url too long to show whole is left out");
    }

    #[test]
    fn the_summary_is_the_excerpt_before_the_body_and_blank_text_is_no_label() {
        let card = card(&roles(), &json!({"name": "  ", "summary": "short", "text": "long body"}));
        assert_eq!(card["excerpt"], "short");
        assert!(card.get("label").is_none(), "a blank title leaves the key as the label");
    }

    #[test]
    fn roles_are_read_as_the_macro_writes_them() {
        let roles = parse_roles(r#""title":"name","status":"state""#);
        assert_eq!(roles, vec![(DisplayRole::Title, "name".into()), (DisplayRole::Status, "state".into())]);
        assert!(parse_roles("").is_empty());
    }
}
