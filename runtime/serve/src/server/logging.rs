//! Logs, and with the `otel` feature the OpenTelemetry export: set up the same way whether an
//! app runs `App::run` or serves a `Server` itself.

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::Registry;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

use crate::config::Settings;
use crate::part::BuildError;

/// The log filter when `TRAILS_LOG` is unset.
pub(crate) const DEFAULT_LOG_FILTER: &str = "info,rmcp=error";

/// The logging [`init_logging`] set up: keep it while serving; dropping it flushes what
/// OpenTelemetry has not exported yet.
#[must_use = "dropping it stops the OpenTelemetry export"]
pub struct Logging {
    _exporting: Option<Box<dyn std::any::Any + Send>>,
}

/// Log to stderr (`TRAILS_LOG` filters, `info,rmcp=error` by default; never stdout, which is
/// the stdio wire), and with the `otel` feature and an export configured (`[telemetry]` or the
/// `OTEL_EXPORTER_OTLP_*` variables), export spans and metrics over OTLP: what `App::run` does
/// before it serves. Logging already set up by the program stays as it is.
pub fn init_logging(settings: &Settings, service: &str) -> Result<Logging, BuildError> {
    logging(settings, service, true)
}

/// [`init_logging`]; `serving`: export telemetry (not for the CLI's one-shot commands).
pub(crate) fn logging(settings: &Settings, service: &str, serving: bool) -> Result<Logging, BuildError> {
    // rmcp logs every request at info and every error answer in full at warn: per-request noise
    // a client controls (a 4 MB tool name became an 8 MB log line), so only its errors by default.
    let filter = tracing_subscriber::EnvFilter::try_from_env("TRAILS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false).with_filter(filter);
    let wanted = serving && settings.telemetry.wanted();
    let (spans, exporting) = if wanted { telemetry(settings, service)? } else { (None, None) };
    let exported = exporting.is_some();
    let _ = tracing_subscriber::registry().with(spans).with(log).try_init();
    if exported {
        let to = settings.telemetry.endpoint.as_deref().unwrap_or("the OTEL_EXPORTER_OTLP_* endpoint");
        tracing::info!(to, "exporting spans and metrics over OTLP/HTTP");
    }
    Ok(Logging { _exporting: exporting })
}

type Spans = Option<Box<dyn Layer<Registry> + Send + Sync>>;
type Exporting = Option<Box<dyn std::any::Any + Send>>;

/// The layer that exports Trails' own spans (whatever `TRAILS_LOG` keeps in the log), and what
/// keeps the exporters running.
#[cfg(feature = "otel")]
fn telemetry(settings: &Settings, service: &str) -> Result<(Spans, Exporting), BuildError> {
    let targets = tracing_subscriber::filter::Targets::new()
        .with_target(trails_core::SPANS, tracing::Level::DEBUG)
        .with_target("trails_serve", tracing::Level::INFO)
        .with_target("trails_core", tracing::Level::INFO)
        .with_target("trails_kg", tracing::Level::INFO)
        .with_target("trails_governance", tracing::Level::INFO);
    Ok(match crate::otel::layer(&settings.telemetry, service).map_err(BuildError::Telemetry)? {
        Some((layer, exporting)) => (Some(Box::new(layer.with_filter(targets))), Some(Box::new(exporting))),
        None => (None, None),
    })
}

/// Built without `otel`: nothing is exported, and an export asked for is warned about.
#[cfg(not(feature = "otel"))]
fn telemetry(_: &Settings, _: &str) -> Result<(Spans, Exporting), BuildError> {
    tracing::warn!("an OTLP endpoint is configured ([telemetry] or OTEL_EXPORTER_OTLP_*), but this binary was built without trails-mcp's `otel` feature: nothing is exported");
    Ok((None, None))
}
