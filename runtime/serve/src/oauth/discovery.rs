//! The issuer's metadata: where its keys and its introspection endpoint are. Discovered once
//! (RFC 8414 first, then OpenID Connect discovery, as the MCP authorization spec has clients do)
//! and kept; a failed discovery is retried by the next caller that needs it.

use serde_json::Value;

/// Largest document read from the issuer (metadata, key sets, introspection answers).
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// What this server needs of the issuer's metadata.
#[derive(Debug, Clone)]
pub(super) struct Metadata {
    pub(super) jwks_uri: Option<String>,
    pub(super) introspection_endpoint: Option<String>,
}

/// How long a failed discovery is answered from memory: callers queued behind it do not each
/// wait on the issuer again.
const FAILURE_KEPT: std::time::Duration = std::time::Duration::from_secs(5);

pub(super) struct Discovery {
    client: reqwest::Client,
    issuer: String,
    found: tokio::sync::Mutex<Found>,
}

#[derive(Default)]
enum Found {
    #[default]
    Nothing,
    Metadata(Metadata),
    Failed(std::time::Instant, String),
}

impl Discovery {
    pub(super) fn new(client: reqwest::Client, issuer: String) -> Discovery {
        Discovery { client, issuer, found: tokio::sync::Mutex::new(Found::Nothing) }
    }

    /// The metadata, discovered on first use (one request at a time asks the issuer).
    pub(super) async fn metadata(&self) -> Result<Metadata, String> {
        let mut found = self.found.lock().await;
        match &*found {
            Found::Metadata(metadata) => return Ok(metadata.clone()),
            Found::Failed(at, error) if at.elapsed() < FAILURE_KEPT => return Err(error.clone()),
            _ => {}
        }
        match self.discover().await {
            Ok(metadata) => {
                tracing::info!(issuer = %self.issuer, jwks_uri = metadata.jwks_uri.as_deref().unwrap_or("-"), "OAuth: discovered the issuer's metadata");
                *found = Found::Metadata(metadata.clone());
                Ok(metadata)
            }
            Err(error) => {
                *found = Found::Failed(std::time::Instant::now(), error.clone());
                Err(error)
            }
        }
    }

    async fn discover(&self) -> Result<Metadata, String> {
        let issuer = self.issuer.trim_end_matches('/');
        let (origin, path) = split_origin(issuer);
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{issuer}/.well-known/openid-configuration"),
        ];
        let mut failures = Vec::new();
        for url in candidates {
            match get_json(&self.client, &url).await {
                Ok(document) => {
                    // RFC 8414 §3.3: the metadata must name the issuer it was asked of, or an
                    // attacker's document could redirect key lookups.
                    if document.get("issuer").and_then(Value::as_str) != Some(self.issuer.as_str()) {
                        failures.push(format!("{url} names another issuer"));
                        continue;
                    }
                    let text = |name: &str| document.get(name).and_then(Value::as_str).map(str::to_owned);
                    return Ok(Metadata {
                        jwks_uri: text("jwks_uri"),
                        introspection_endpoint: text("introspection_endpoint"),
                    });
                }
                Err(error) => failures.push(error),
            }
        }
        Err(format!("cannot discover the metadata of issuer {}: {}", self.issuer, failures.join("; ")))
    }
}

/// `https://host:port` and the rest of the issuer identifier (`/tenant`, or empty).
fn split_origin(issuer: &str) -> (&str, &str) {
    let after_scheme = issuer.find("://").map_or(0, |i| i + 3);
    match issuer[after_scheme..].find('/') {
        Some(slash) => issuer.split_at(after_scheme + slash),
        None => (issuer, ""),
    }
}

/// GET `url` as JSON, its body bounded.
pub(super) async fn get_json(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    let response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("{url}: {}", chain(&e)))?;
    read_json(url, response).await
}

/// A response's JSON body (a 2xx, at most [`MAX_DOCUMENT_BYTES`]).
pub(super) async fn read_json(url: &str, mut response: reqwest::Response) -> Result<Value, String> {
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("{url}: {}", chain(&e)))? {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("{url} answered more than {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("{url} answered something other than JSON: {e}"))
}

/// An error with its causes (reqwest's own message hides them: "error sending request").
pub(super) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_well_known_path_goes_between_host_and_path() {
        assert_eq!(super::split_origin("https://id.example.com"), ("https://id.example.com", ""));
        assert_eq!(super::split_origin("https://id.example.com:8443/t/1"), ("https://id.example.com:8443", "/t/1"));
    }
}
