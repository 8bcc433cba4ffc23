//! W3C trace context (`traceparent`, `tracestate`) as a request carries it: in `params._meta`
//! (normative from MCP 2026-07-28; what stdio has) or as HTTP headers. A value that is not a
//! valid `traceparent` is ignored, as the W3C spec has a receiver do (the call starts a trace of
//! its own); it never fails the request.

use serde_json::{Map, Value};

/// Longest `tracestate` kept (the spec's own guidance for what to propagate).
const MAX_TRACESTATE: usize = 512;

/// A valid `traceparent`, and the `tracestate` beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TraceParent {
    /// 32 lowercase hex digits, not all zero.
    pub(crate) trace_id: String,
    /// The caller's span: 16 lowercase hex digits, not all zero.
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub(crate) parent_id: String,
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub(crate) sampled: bool,
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub(crate) state: Option<String>,
}

impl TraceParent {
    /// `traceparent` (version `00`, or a later one read as `00` as the spec says) and `tracestate`.
    pub(crate) fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceParent> {
        let value = traceparent.trim();
        let mut parts = value.split('-');
        let (version, trace_id, parent_id, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex =
            |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let valid = hex(version, 2)
            && version != "ff"
            // Version 00 has exactly four parts; later versions may append more.
            && (version != "00" || parts.next().is_none())
            && hex(trace_id, 32)
            && trace_id.bytes().any(|b| b != b'0')
            && hex(parent_id, 16)
            && parent_id.bytes().any(|b| b != b'0')
            && hex(flags, 2);
        if !valid {
            return None;
        }
        let sampled = u8::from_str_radix(flags, 16).is_ok_and(|f| f & 1 == 1);
        let state = tracestate.map(str::trim).filter(|s| !s.is_empty() && s.len() <= MAX_TRACESTATE).map(str::to_owned);
        Some(TraceParent { trace_id: trace_id.to_owned(), parent_id: parent_id.to_owned(), sampled, state })
    }

    /// From a request's `_meta`.
    pub(crate) fn from_meta(meta: &Map<String, Value>) -> Option<TraceParent> {
        let traceparent = meta.get("traceparent")?.as_str()?;
        TraceParent::parse(traceparent, meta.get("tracestate").and_then(Value::as_str))
    }

    /// From HTTP headers.
    pub(crate) fn from_headers(headers: &http::HeaderMap) -> Option<TraceParent> {
        let traceparent = headers.get("traceparent")?.to_str().ok()?;
        TraceParent::parse(traceparent, headers.get("tracestate").and_then(|v| v.to_str().ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_valid_traceparents_are_read() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let parsed = TraceParent::parse(good, Some("vendor=x")).unwrap();
        assert_eq!((parsed.trace_id.as_str(), parsed.sampled), ("4bf92f3577b34da6a3ce929d0e0e4736", true));
        assert_eq!(parsed.state.as_deref(), Some("vendor=x"));
        assert!(!TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", None).unwrap().sampled);
        // A later version may carry more; version ff is invalid.
        assert!(TraceParent::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", None).is_some());
        for bad in [
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "garbage",
            "",
        ] {
            assert_eq!(TraceParent::parse(bad, None), None, "{bad}");
        }
        let long = "k=".to_owned() + &"v".repeat(600);
        assert_eq!(TraceParent::parse(good, Some(&long)).unwrap().state, None);
    }
}
