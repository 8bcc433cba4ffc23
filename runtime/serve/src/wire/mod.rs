//! What every transport says the same way, below all of them: the JSON-RPC framing checks and
//! the table of errors.

pub(crate) mod call;
pub(crate) mod errors;
#[cfg(any(feature = "http", feature = "stdio"))]
pub(crate) mod jsonrpc;
pub(crate) mod request_state;
pub(crate) mod trace;

/// rmcp's last step on a result: 2026-07-28 peers get cache hints, older ones no `resultType`
/// and no structured output that is not an object (SEP-2106).
pub(crate) fn shape_result(result: &mut rmcp::model::ServerResult, current: bool) {
    if current {
        result.fill_missing_cache_hints();
    } else {
        result.strip_result_type_for_legacy_peer();
        result.strip_non_object_output_for_legacy_peer();
    }
}
