//! OpenTelemetry (the `otel` feature): the server's `tracing` spans exported as OTel spans over
//! OTLP HTTP/protobuf, and the MCP semantic conventions' metrics. The spans themselves are plain
//! `tracing` spans whose fields are the conventions' attributes (`mcp/dispatch.rs`); this module
//! installs the exporter, continues the client's W3C trace, and records the durations.

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::metrics::Histogram;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, TracerProvider};
use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::registry::LookupSpan;

use crate::config::Telemetry;
use crate::wire::trace::TraceParent;

/// The exporters, flushed and shut down when dropped (at the end of `run`): what was recorded
/// last still leaves.
pub(crate) struct Exporting {
    traces: SdkTracerProvider,
    metrics: SdkMeterProvider,
}

impl Drop for Exporting {
    fn drop(&mut self) {
        let _ = self.traces.shutdown();
        let _ = self.metrics.shutdown();
    }
}

/// The layer that exports spans, and what keeps the exporters running; `None` when nothing asks
/// for export.
pub(crate) fn layer<S>(
    telemetry: &Telemetry,
    app_name: &str,
) -> Result<Option<(impl tracing_subscriber::Layer<S>, Exporting)>, String>
where
    S: tracing::Subscriber + for<'span> LookupSpan<'span>,
{
    if !telemetry.wanted() {
        return Ok(None);
    }
    let endpoint = |path: &str| telemetry.endpoint.as_ref().map(|base| format!("{base}{path}"));
    let mut spans = opentelemetry_otlp::SpanExporter::builder().with_http().with_protocol(Protocol::HttpBinary);
    if let Some(url) = endpoint("/v1/traces") {
        spans = spans.with_endpoint(url);
    }
    let spans = Reported::new(spans.build().map_err(|e| format!("the OTLP trace exporter: {e}"))?, "spans");
    let mut metrics = opentelemetry_otlp::MetricExporter::builder().with_http().with_protocol(Protocol::HttpBinary);
    if let Some(url) = endpoint("/v1/metrics") {
        metrics = metrics.with_endpoint(url);
    }
    let metrics = Reported::new(metrics.build().map_err(|e| format!("the OTLP metric exporter: {e}"))?, "metrics");
    // `OTEL_SERVICE_NAME` (read by the default resource) unless the file names one; else the app.
    let service = match (&telemetry.service_name, std::env::var("OTEL_SERVICE_NAME")) {
        (Some(name), _) => name.clone(),
        (None, Ok(name)) if !name.trim().is_empty() => name,
        _ => app_name.to_owned(),
    };
    let resource = Resource::builder().with_service_name(service).build();
    let traces = SdkTracerProvider::builder().with_batch_exporter(spans).with_resource(resource.clone()).build();
    let metrics = SdkMeterProvider::builder()
        .with_reader(opentelemetry_sdk::metrics::PeriodicReader::builder(metrics).build())
        .with_resource(resource)
        .build();
    opentelemetry::global::set_meter_provider(metrics.clone());
    let layer = tracing_opentelemetry::layer().with_tracer(traces.tracer("trails"));
    Ok(Some((layer, Exporting { traces, metrics })))
}

/// An exporter whose failures reach the log: the SDK's own reports are compiled out
/// (`internal-logs` off), and an operator must learn that the collector is unreachable. Failures
/// are warned about at most once a minute (with how many were held back); the recovery is one line.
#[derive(Debug)]
struct Reported<E> {
    exporter: E,
    what: &'static str,
    log: crate::throttle::Throttle,
    failing: std::sync::atomic::AtomicBool,
}

impl<E> Reported<E> {
    fn new(exporter: E, what: &'static str) -> Reported<E> {
        let log = crate::throttle::Throttle::new(Duration::from_secs(60));
        Reported { exporter, what, log, failing: std::sync::atomic::AtomicBool::new(false) }
    }

    fn report(&self, result: &opentelemetry_sdk::error::OTelSdkResult) {
        let was_failing = self.failing.swap(result.is_err(), std::sync::atomic::Ordering::Relaxed);
        match result {
            Ok(()) if was_failing => tracing::info!(what = self.what, "OTLP export works again"),
            Ok(()) => {}
            Err(error) => {
                if let Some(held_back) = self.log.allow() {
                    tracing::warn!(what = self.what, %error, held_back, "OTLP export failed; what it carried is lost");
                }
            }
        }
    }
}

impl<E: opentelemetry_sdk::trace::SpanExporter> opentelemetry_sdk::trace::SpanExporter for Reported<E> {
    async fn export(&self, batch: Vec<opentelemetry_sdk::trace::SpanData>) -> opentelemetry_sdk::error::OTelSdkResult {
        let result = self.exporter.export(batch).await;
        self.report(&result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        self.exporter.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.exporter.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.exporter.set_resource(resource);
    }
}

impl<E: opentelemetry_sdk::metrics::exporter::PushMetricExporter>
    opentelemetry_sdk::metrics::exporter::PushMetricExporter for Reported<E>
{
    async fn export(
        &self,
        metrics: &opentelemetry_sdk::metrics::data::ResourceMetrics,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        let result = self.exporter.export(metrics).await;
        self.report(&result);
        result
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.exporter.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        self.exporter.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> opentelemetry_sdk::metrics::Temporality {
        self.exporter.temporality()
    }
}

/// Make `span` a child of the client's span, when the request carried a `traceparent`.
pub(crate) fn continue_trace(span: &tracing::Span, parent: Option<&TraceParent>) {
    let Some(parent) = parent else { return };
    let (Ok(trace_id), Ok(span_id)) = (TraceId::from_hex(&parent.trace_id), SpanId::from_hex(&parent.parent_id)) else {
        return;
    };
    let flags = if parent.sampled { TraceFlags::SAMPLED } else { TraceFlags::default() };
    let state = parent.state.as_deref().and_then(|s| s.parse::<TraceState>().ok()).unwrap_or_default();
    let remote = SpanContext::new(trace_id, span_id, flags, true, state);
    // Fails only when no OTel layer is installed (nothing is exported): then nothing to continue.
    let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(remote));
}

/// The OTel trace id of `span`, when an OTel layer is installed.
pub(crate) fn trace_id(span: &tracing::Span) -> Option<String> {
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context.is_valid().then(|| span_context.trace_id().to_string())
}

/// Histogram boundaries the conventions recommend for `mcp.server.*.duration` (seconds).
const BOUNDARIES: [f64; 14] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

fn histogram(name: &'static str, description: &'static str) -> Histogram<f64> {
    opentelemetry::global::meter("trails")
        .f64_histogram(name)
        .with_unit("s")
        .with_description(description)
        .with_boundaries(BOUNDARIES.to_vec())
        .build()
}

/// `mcp.server.operation.duration` of one request.
pub(crate) fn operation_done(method: &str, tool: Option<&str>, error_type: Option<&str>, took: Duration) {
    static OPERATION: OnceLock<Histogram<f64>> = OnceLock::new();
    let histogram = OPERATION.get_or_init(|| histogram("mcp.server.operation.duration", "MCP request duration"));
    let mut attributes = vec![KeyValue::new("mcp.method.name", method.to_owned())];
    if let Some(tool) = tool {
        attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
        attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
    }
    if let Some(error_type) = error_type {
        attributes.push(KeyValue::new("error.type", error_type.to_owned()));
    }
    histogram.record(took.as_secs_f64(), &attributes);
}

/// `mcp.server.session.duration` of a session that ended.
pub(crate) fn session_done(took: Duration, protocol_version: Option<&str>) {
    static SESSION: OnceLock<Histogram<f64>> = OnceLock::new();
    let histogram = SESSION.get_or_init(|| histogram("mcp.server.session.duration", "MCP session duration"));
    let attributes: Vec<KeyValue> =
        protocol_version.map(|v| KeyValue::new("mcp.protocol.version", v.to_owned())).into_iter().collect();
    histogram.record(took.as_secs_f64(), &attributes);
}
