//! `[telemetry]` and the standard `OTEL_*` variables: where OpenTelemetry exports to, if
//! anywhere. Read before the server is built: logging starts first.

use super::file::TelemetryConfig;
use super::{ConfigError, Env};

/// Where OpenTelemetry exports to, if anywhere.
#[derive(Debug, Clone, Default)]
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) struct Telemetry {
    /// `[telemetry] otlp_endpoint`, the base URL.
    pub(crate) endpoint: Option<String>,
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (the exporter
    /// reads it itself).
    pub(crate) from_env: bool,
    pub(crate) service_name: Option<String>,
}

impl Telemetry {
    /// Export is asked for (and `OTEL_SDK_DISABLED` does not turn it off).
    pub(crate) fn wanted(&self) -> bool {
        self.endpoint.is_some() || self.from_env
    }

    pub(super) fn resolve(config: TelemetryConfig, env: &Env) -> Result<Telemetry, ConfigError> {
        let disabled = env.get("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let set = |name| env.get(name).is_some_and(|v| !v.trim().is_empty());
        let endpoint = config.otlp_endpoint.map(|e| e.trim().trim_end_matches('/').to_owned());
        if let Some(endpoint) = &endpoint {
            if !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
                || endpoint.parse::<http::Uri>().is_err()
            {
                let expected = "the collector's OTLP/HTTP base URL, e.g. http://collector:4318";
                return Err(ConfigError::Value { key: "[telemetry] otlp_endpoint", value: endpoint.clone(), expected });
            }
        }
        Ok(Telemetry {
            endpoint: endpoint.filter(|_| !disabled),
            from_env: !disabled && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
            service_name: config.service_name,
        })
    }
}
