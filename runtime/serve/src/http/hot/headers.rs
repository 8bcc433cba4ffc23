//! rmcp's header rules, as predicates: does rmcp let this request through? The hot path answers
//! only requests every rule passes; anything else goes to rmcp, which gives its own answer. So
//! these must never say "passes" where rmcp refuses (rmcp 3.9, `streamable_http_server/tower.rs`
//! and `common/mcp_headers.rs`); saying "fails" where rmcp passes only costs speed.

use axum::http::{header, HeaderMap};
use base64::Engine;

/// Whether `Accept` names both `application/json` and `text/event-stream` (wildcards do not
/// count; an entry with an explicit zero weight does not either).
pub(super) fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for essence in accepted_media_types(headers) {
        json |= essence.eq_ignore_ascii_case("application/json");
        sse |= essence.eq_ignore_ascii_case("text/event-stream");
    }
    json && sse
}

/// Whether `Accept` names `text/event-stream` (what rmcp requires of a `GET`).
pub(super) fn accepts_sse(headers: &HeaderMap) -> bool {
    accepted_media_types(headers).any(|essence| essence.eq_ignore_ascii_case("text/event-stream"))
}

fn accepted_media_types(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| split_unquoted(value, ','))
        .filter_map(|entry| {
            let mut parts = split_unquoted(entry, ';');
            let essence = parts.next()?.trim();
            parts
                .all(|parameter| {
                    let Some((name, value)) = parameter.split_once('=') else { return true };
                    !name.trim().eq_ignore_ascii_case("q") || weight_is_not_zero(value.trim())
                })
                .then_some(essence)
        })
}

/// Splits on `delimiter` outside quoted strings (a quoted pair keeps an escaped quote inside).
fn split_unquoted(value: &str, delimiter: char) -> impl Iterator<Item = &str> {
    let (mut quoted, mut escaped) = (false, false);
    value.split(move |character| {
        if escaped {
            escaped = false;
        } else if quoted && character == '\\' {
            escaped = true;
        } else if character == '"' {
            quoted = !quoted;
        } else if !quoted && character == delimiter {
            return true;
        }
        false
    })
}

/// Only an explicit zero weight excludes a media range; a malformed one does not.
fn weight_is_not_zero(weight: &str) -> bool {
    let (whole, fraction) = weight.split_once('.').unwrap_or((weight, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|digit| digit.is_ascii_digit()) {
        return true;
    }
    whole != "0" || fraction.bytes().any(|digit| digit != b'0')
}

/// Whether the first `Content-Type` is `application/json` (parameters aside).
pub(super) fn content_type_is_json(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).is_some_and(|value| {
        let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
        essence.trim().eq_ignore_ascii_case("application/json")
    })
}

/// Whether the SEP-2243 headers rmcp requires from `MCP-Protocol-Version: 2026-07-28` on agree
/// with the body: exactly one `Mcp-Method` equal to `method`, and for `tools/call` and
/// `resources/read` exactly one `Mcp-Name` equal to `name` (plain, or in rmcp's `=?base64?…?=`
/// form).
pub(super) fn standard_headers_agree(headers: &HeaderMap, method: &str, name: Option<&str>) -> bool {
    if single(headers, "mcp-method") != Some(method) {
        return false;
    }
    match name {
        None => true,
        Some(expected) => single(headers, "mcp-name").and_then(decode_header_value).is_some_and(|n| n == expected),
    }
}

/// The one value of `name`, if it appears exactly once and is visible ASCII.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    if values.next().is_some() {
        return None;
    }
    first.to_str().ok()
}

fn decode_header_value(value: &str) -> Option<String> {
    match value.strip_prefix("=?base64?").and_then(|inner| inner.strip_suffix("?=")) {
        Some(inner) => String::from_utf8(base64::prelude::BASE64_STANDARD.decode(inner).ok()?).ok(),
        None => Some(value.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn with(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn accept_needs_both_types_by_name() {
        assert!(accepts_json_and_sse(&with(&[("accept", "application/json, text/event-stream")])));
        assert!(accepts_json_and_sse(&with(&[("accept", "text/event-stream"), ("accept", "Application/JSON;q=0.5")])));
        assert!(!accepts_json_and_sse(&with(&[("accept", "*/*")])));
        assert!(!accepts_json_and_sse(&with(&[("accept", "application/json")])));
        assert!(!accepts_json_and_sse(&with(&[("accept", "application/json;q=0, text/event-stream")])));
        assert!(accepts_json_and_sse(&with(&[("accept", "application/json;q=0.x, text/event-stream")])));
        assert!(!accepts_json_and_sse(&with(&[("accept", "application/json;q=0.000, text/event-stream")])));
    }

    #[test]
    fn content_type_is_json_with_or_without_parameters() {
        assert!(content_type_is_json(&with(&[("content-type", "application/json; charset=utf-8")])));
        assert!(!content_type_is_json(&with(&[("content-type", "text/plain")])));
        assert!(!content_type_is_json(&HeaderMap::new()));
    }

    #[test]
    fn standard_headers_must_be_single_and_agree() {
        let ok = with(&[("mcp-method", "tools/call"), ("mcp-name", "echo")]);
        assert!(standard_headers_agree(&ok, "tools/call", Some("echo")));
        assert!(!standard_headers_agree(&ok, "tools/call", Some("other")));
        assert!(!standard_headers_agree(&ok, "tools/list", None));
        let base64 = with(&[("mcp-method", "tools/call"), ("mcp-name", "=?base64?ZWNobw==?=")]);
        assert!(standard_headers_agree(&base64, "tools/call", Some("echo")));
        let twice = with(&[("mcp-method", "tools/list"), ("mcp-method", "tools/list")]);
        assert!(!standard_headers_agree(&twice, "tools/list", None));
        assert!(!standard_headers_agree(&HeaderMap::new(), "tools/list", None));
    }
}
