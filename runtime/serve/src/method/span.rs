//! The span of one MCP server operation (the MCP semantic conventions of OpenTelemetry: its
//! fields are the attributes; exported with the `otel` feature, and in the log's span context
//! anyway), and how it ended.

use tracing::field::Empty;

use super::CallInfo;

/// The span of one MCP server operation, `{method} {target}`, with the MCP semantic conventions'
/// attributes as its fields (the operation-specific ones — `gen_ai.*`, `mcp.resource.uri` —
/// recorded by the caller), continuing the client's trace with the `otel` feature.
pub(crate) fn request_span(method: &'static str, target: &str, info: &CallInfo) -> tracing::Span {
    let span = tracing::debug_span!(
        target: trails_core::SPANS,
        "mcp",
        otel.name = %format_args!("{method} {target}"),
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = method,
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        mcp.resource.uri = Empty,
        jsonrpc.request.id = info.request_id.as_deref(),
        mcp.session.id = info.session_id.as_deref(),
        mcp.protocol.version = info.protocol_version.as_deref(),
        error.type = Empty,
    );
    #[cfg(feature = "otel")]
    crate::otel::continue_trace(&span, info.trace.as_ref());
    span
}

/// How the operation of [`request_span`] ended: `error.type` and an error status when it failed,
/// and (with `otel`) its duration in `mcp.server.operation.duration`.
pub(crate) fn request_done(
    span: &tracing::Span,
    method: &'static str,
    tool: Option<&str>,
    error_type: Option<&str>,
    started: std::time::Instant,
) {
    if let Some(error_type) = error_type {
        span.record("error.type", error_type);
        span.record("otel.status_code", "ERROR");
    }
    #[cfg(feature = "otel")]
    crate::otel::operation_done(method, tool, error_type, started.elapsed());
    #[cfg(not(feature = "otel"))]
    let _ = (method, tool, started);
}
