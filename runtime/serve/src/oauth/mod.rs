//! This server as an OAuth 2.1 resource server (the MCP authorization spec): which access tokens
//! it accepts and who their callers are. JWT access tokens (RFC 9068) are checked against the
//! issuer's published keys (`keys.rs`, `jwt.rs`); opaque ones are asked about at the issuer's
//! introspection endpoint when one is configured (`introspect.rs`, RFC 7662). The HTTP side —
//! the RFC 9728 metadata route and the 401/403 challenges — is in `http/`, built from
//! [`ResourceServer::metadata`] and [`ResourceServer::challenge`].
//!
//! A presented token is never logged, stored or echoed: rejections name what was wrong with it.

mod discovery;
mod introspect;
mod jwt;
mod keys;
mod settings;

use std::sync::Arc;

use serde_json::{json, Value};
use trails_core::auth::{Caller, Scope, ScopeSet};

pub(crate) use settings::{resolve as resolve_settings, OAuthSettings};

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Rejection {
    /// The token is not one this server accepts (a 401 `invalid_token`); the text says why
    /// without quoting it.
    #[error("{0}")]
    Invalid(String),
    /// The token cannot be checked now: the issuer's keys or introspection endpoint cannot be
    /// reached (a 503; the client may retry).
    #[error("{0}")]
    Unavailable(String),
}

impl Rejection {
    fn invalid(why: impl Into<String>) -> Rejection {
        Rejection::Invalid(why.into())
    }
}

/// Who an accepted token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    /// `sub`, else `client_id` (a client acting for itself).
    pub(crate) subject: String,
    pub(crate) client_id: Option<String>,
    /// The token's OAuth scopes (space-separated `scope`, or `scp`).
    pub(crate) scopes: Vec<String>,
}

/// The resource server: its settings, the issuer's keys, the introspection client.
pub(crate) struct ResourceServer {
    settings: OAuthSettings,
    keys: Arc<keys::Keys>,
    introspection: Option<introspect::Introspector>,
}

/// Why the resource server could not be set up (an unreadable CA file).
#[derive(Debug, thiserror::Error)]
#[error("[auth.oauth]: {0}")]
pub(crate) struct SetupError(String);

impl ResourceServer {
    pub(crate) fn new(settings: OAuthSettings) -> Result<ResourceServer, SetupError> {
        // The signature checks use aws-lc-rs (as rustls does). Installed explicitly: should
        // another crate in the app enable jsonwebtoken's other backend, the crate would no longer
        // choose one by itself and would panic on the first token.
        let _ = jsonwebtoken::crypto::CryptoProvider::install_default(&jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER);
        let client = http_client(&settings)?;
        let discovery = Arc::new(discovery::Discovery::new(client.clone(), settings.issuer.clone()));
        let keys = Arc::new(keys::Keys::new(client.clone(), discovery.clone(), settings.key_refetch));
        let introspection = settings
            .introspection
            .clone()
            .map(|(id, secret)| introspect::Introspector::new(client, discovery, id, secret));
        Ok(ResourceServer { settings, keys, introspection })
    }

    /// Fetch the issuer's metadata and keys now (at start), so the first call does not wait;
    /// a failure is logged and retried when a token needs the keys.
    pub(crate) async fn warm_up(&self) {
        match self.keys.refresh().await {
            Ok(count) => {
                tracing::info!(issuer = %self.settings.issuer, keys = count, "OAuth: the issuer's signing keys are loaded")
            }
            Err(error) => {
                tracing::warn!(issuer = %self.settings.issuer, %error, "OAuth: cannot load the issuer's keys yet; tokens are refused until they load")
            }
        }
    }

    /// The caller `token` authenticates, with its scopes as the process allows them.
    pub(crate) async fn caller(&self, token: &str, process_scopes: ScopeSet) -> Result<Caller, Rejection> {
        let identity = self.verify(token).await?;
        let scopes = self.scope_set(&identity.scopes).intersect(process_scopes);
        tracing::debug!(subject = %identity.subject, client_id = identity.client_id.as_deref().unwrap_or("-"), scopes = ?scopes, "OAuth token accepted");
        Ok(Caller { name: Some(identity.subject), client: identity.client_id, scopes })
    }

    async fn verify(&self, token: &str) -> Result<Identity, Rejection> {
        match jsonwebtoken::decode_header(token) {
            Ok(header) => jwt::verify(token, header, &self.settings, &self.keys).await,
            // A JWT whose header this crate cannot read: `alg: none`, or an algorithm it lacks.
            Err(_) if jwt_header(token).is_some() => {
                Err(Rejection::invalid("the token is signed with an algorithm this server does not accept"))
            }
            Err(_) => match &self.introspection {
                Some(introspection) => introspection.verify(token, &self.settings).await,
                None => {
                    Err(Rejection::invalid("the token is not a JWT access token (and no introspection is configured)"))
                }
            },
        }
    }

    /// The Trails scopes OAuth `scopes` grant: each mapped one and those below it, and
    /// `runtime` in any case (what an anonymous caller holds, an authenticated one holds too).
    fn scope_set(&self, scopes: &[String]) -> ScopeSet {
        let mut set = ScopeSet::up_to(Scope::Runtime);
        for scope in scopes {
            for (name, trails) in &self.settings.scopes {
                if name == scope {
                    set = set.union(ScopeSet::up_to(*trails));
                }
            }
        }
        set
    }

    /// The OAuth scope to ask for to hold `needed` (for the `scope=` of a challenge): the one
    /// mapped to it, else the lowest mapped above it.
    pub(crate) fn scope_for(&self, needed: Scope) -> Option<&str> {
        let mut candidates: Vec<_> = self.settings.scopes.iter().filter(|(_, s)| *s >= needed).collect();
        candidates.sort_by_key(|(_, s)| *s);
        candidates.first().map(|(name, _)| name.as_str())
    }

    /// Where the Protected Resource Metadata is (RFC 9728 §3.1: the well-known path inserted
    /// between the host and the resource's path, `https://host/.well-known/oauth-protected-resource/prefix/mcp`
    /// for a `public_url` of `https://host/prefix`).
    pub(crate) fn metadata_url(&self) -> String {
        metadata_url(&self.settings.public_url)
    }

    /// The path of [`OAuth::metadata_url`] (served as it is, for a proxy that forwards it so).
    pub(crate) fn metadata_path(&self) -> String {
        metadata_path(split_origin(&self.settings.public_url).1)
    }

    /// The Protected Resource Metadata document (RFC 9728 §2); `name` is the server's, shown to
    /// the user by clients that ask for consent.
    pub(crate) fn metadata(&self, process_scopes: ScopeSet, name: &str) -> Value {
        let scopes: Vec<&str> = self
            .settings
            .scopes
            .iter()
            .filter(|(_, scope)| process_scopes.contains(*scope))
            .map(|(name, _)| name.as_str())
            .collect();
        json!({
            "resource": self.settings.resource,
            "authorization_servers": [self.settings.issuer],
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": name,
        })
    }

    /// A `WWW-Authenticate` value (RFC 6750 §3 with RFC 9728's `resource_metadata`): `error` and
    /// its description when a token was refused, `scope` when one more would help.
    pub(crate) fn challenge(&self, error: Option<(&str, &str)>, scope: Option<&str>) -> String {
        let mut value = format!(r#"Bearer resource_metadata="{}""#, self.metadata_url());
        if let Some((error, description)) = error {
            // Quoted strings: the descriptions are ours, but keep them safe to quote anyway.
            let description: String =
                description.chars().filter(|c| *c != '"' && *c != '\\' && (' '..='~').contains(c)).collect();
            value.push_str(&format!(r#", error="{error}", error_description="{description}""#));
        }
        if let Some(scope) = scope {
            value.push_str(&format!(r#", scope="{scope}""#));
        }
        value
    }
}

/// `https://host:port/prefix` → (`https://host:port`, `/prefix`); the path without a trailing `/`.
fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |at| at + 3);
    match url[after_scheme..].find('/') {
        Some(at) => (&url[..after_scheme + at], url[after_scheme + at..].trim_end_matches('/')),
        None => (url, ""),
    }
}

fn metadata_path(prefix: &str) -> String {
    format!("/.well-known/oauth-protected-resource{prefix}/mcp")
}

fn metadata_url(public_url: &str) -> String {
    let (origin, path) = split_origin(public_url);
    format!("{origin}{}", metadata_path(path))
}

/// The client that talks to the issuer: the platform's trust roots plus `ca_file`, bounded
/// waits (a slow issuer must not hold requests forever), no redirects to follow blindly.
fn http_client(settings: &OAuthSettings) -> Result<reqwest::Client, SetupError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(5))
        .timeout(std::time::Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none());
    if let Some(path) = &settings.ca_file {
        let pem =
            std::fs::read(path).map_err(|e| SetupError(format!("cannot read ca_file {}: {e}", path.display())))?;
        let certificates = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| SetupError(format!("ca_file {}: {e}", path.display())))?;
        if certificates.is_empty() {
            return Err(SetupError(format!("ca_file {} holds no PEM certificate", path.display())));
        }
        builder = builder.tls_certs_merge(certificates);
    }
    builder.build().map_err(|e| SetupError(format!("building the HTTP client: {e}")))
}

/// The JSON header of what has a JWT's shape (three base64url parts, the first a JSON object).
fn jwt_header(token: &str) -> Option<Value> {
    use base64::Engine;
    let mut parts = token.split('.');
    let (header, _, _, None) = (parts.next()?, parts.next()?, parts.next()?, parts.next()) else { return None };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header).ok()?;
    serde_json::from_slice::<Value>(&bytes).ok().filter(Value::is_object)
}

/// `aud` as RFC 7519 allows it: one string or an array of them.
fn audiences(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The token's scopes: RFC 9068 / RFC 7662 `scope` (space-separated), or the `scp` claim some
/// issuers use instead (a string or an array).
fn scopes_of(claims: &Value) -> Vec<String> {
    let words = |text: &str| text.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(scope)), _) => words(scope),
        (_, Some(Value::String(scp))) => words(scp),
        (_, Some(Value::Array(scp))) => scp.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// The identity of verified claims: `sub`, else `client_id`.
fn identity(claims: &Value) -> Result<Identity, Rejection> {
    let text = |name: &str| claims.get(name).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
    let client_id = text("client_id");
    let Some(subject) = text("sub").or_else(|| client_id.clone()) else {
        return Err(Rejection::invalid("the token names no subject (`sub`) and no client (`client_id`)"));
    };
    Ok(Identity { subject, client_id, scopes: scopes_of(claims) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_come_from_scope_or_scp() {
        assert_eq!(scopes_of(&json!({"scope": "a  b"})), ["a", "b"]);
        assert_eq!(scopes_of(&json!({"scp": ["a", 3, "c"]})), ["a", "c"]);
        assert_eq!(scopes_of(&json!({"scp": "x y"})), ["x", "y"]);
        assert!(scopes_of(&json!({"scope": 1})).is_empty());
    }

    #[test]
    fn the_identity_is_the_subject_else_the_client() {
        assert_eq!(identity(&json!({"sub": "alice", "client_id": "app"})).unwrap().subject, "alice");
        assert_eq!(identity(&json!({"client_id": "app"})).unwrap().subject, "app");
        assert!(identity(&json!({"sub": ""})).is_err());
        assert_eq!(audiences(Some(&json!(["a", 1, "b"]))), ["a", "b"]);
    }

    #[test]
    fn the_metadata_url_puts_the_well_known_path_before_the_resources_path() {
        let url = metadata_url;
        assert_eq!(url("https://mcp.example.com"), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
        assert_eq!(
            url("https://example.com:8443/tools/"),
            "https://example.com:8443/.well-known/oauth-protected-resource/tools/mcp"
        );
    }
}
