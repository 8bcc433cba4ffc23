//! `[auth.oauth]`, validated against `[http] public_url`: what the resource server needs.

use std::path::PathBuf;
use std::time::Duration;

use trails_core::auth::Scope;

use crate::config::{within, ConfigError, Env, OAuthConfig};

/// The JWS algorithms an access token may be signed with: the asymmetric ones. HMAC would let
/// anyone holding the shared secret (or a public key mistaken for one) mint tokens; `none` signs
/// nothing.
pub(crate) const ALGORITHMS: [&str; 9] =
    ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];

/// The resource server's settings.
#[derive(Clone)]
pub(crate) struct OAuthSettings {
    /// The issuer identifier, exactly as tokens carry it in `iss`.
    pub(crate) issuer: String,
    /// This server's resource identifier: `<public_url>/mcp`.
    pub(crate) resource: String,
    /// The `<public_url>`, where the metadata is published.
    pub(crate) public_url: String,
    /// The `aud` a token must carry.
    pub(crate) audience: String,
    /// OAuth scope → Trails scope, in the order configured (names sorted).
    pub(crate) scopes: Vec<(String, Scope)>,
    /// Accepted JWS algorithms, by name (one of [`ALGORITHMS`]).
    pub(crate) algorithms: Vec<String>,
    pub(crate) leeway: Duration,
    pub(crate) key_refetch: Duration,
    pub(crate) ca_file: Option<PathBuf>,
    /// RFC 7662 introspection of opaque tokens: (client id, secret).
    pub(crate) introspection: Option<(String, String)>,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The introspection secret never reaches a log.
        f.debug_struct("OAuthSettings")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("audience", &self.audience)
            .field("scopes", &self.scopes)
            .field("algorithms", &self.algorithms)
            .field("introspection_client", &self.introspection.as_ref().map(|(id, _)| id))
            .finish_non_exhaustive()
    }
}

/// `[auth.oauth]` resolved against `public_url` and the environment.
pub(crate) fn resolve(config: OAuthConfig, public_url: Option<&str>, env: &Env) -> Result<OAuthSettings, ConfigError> {
    let Some(public_url) = public_url else {
        return Err(ConfigError::Value {
            key: "[http] public_url",
            value: String::new(),
            expected: "set with [auth.oauth]: the resource tokens are issued for is <public_url>/mcp",
        });
    };
    let issuer = config.issuer.trim().to_owned();
    // Keys fetched over plain HTTP could be anyone's: https, but for an issuer on this machine.
    let loopback = issuer.parse::<http::Uri>().ok().and_then(|uri| uri.host().map(str::to_owned)).is_some_and(|host| {
        host == "localhost"
            || host.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    });
    let scheme_ok = issuer.starts_with("https://") || (issuer.starts_with("http://") && loopback);
    if !scheme_ok || issuer.parse::<http::Uri>().is_err() {
        let expected =
            "the authorization server's issuer identifier, an https:// URL (http:// only on a loopback address)";
        return Err(ConfigError::Value { key: "[auth.oauth] issuer", value: config.issuer, expected });
    }
    let resource = format!("{public_url}/mcp");
    let audience = config.audience.map(|a| a.trim().to_owned()).unwrap_or_else(|| resource.clone());
    let scopes = match config.scopes {
        None => [Scope::Runtime, Scope::Builder, Scope::Dev].map(|s| (s.as_str().to_owned(), s)).to_vec(),
        Some(map) => {
            let mut scopes = Vec::with_capacity(map.len());
            for (oauth, trails) in map {
                let Ok(scope) = trails.parse::<Scope>() else {
                    let expected = "a map of OAuth scopes to runtime, builder or dev";
                    return Err(ConfigError::Value { key: "[auth.oauth] scopes", value: trails, expected });
                };
                if oauth.is_empty() || oauth.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\') {
                    let expected = "OAuth scope names: no spaces, quotes or backslashes";
                    return Err(ConfigError::Value { key: "[auth.oauth] scopes", value: oauth, expected });
                }
                scopes.push((oauth, scope));
            }
            scopes
        }
    };
    let algorithms = match config.algorithms {
        None => ALGORITHMS.map(str::to_owned).to_vec(),
        Some(list) => {
            for name in &list {
                if !ALGORITHMS.contains(&name.as_str()) {
                    let expected = "asymmetric JWS algorithms: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA (never HMAC or none)";
                    return Err(ConfigError::Value { key: "[auth.oauth] algorithms", value: name.clone(), expected });
                }
            }
            if list.is_empty() {
                let expected = "at least one algorithm";
                return Err(ConfigError::Value { key: "[auth.oauth] algorithms", value: "[]".into(), expected });
            }
            list
        }
    };
    let leeway = within("[auth.oauth] leeway_secs", config.leeway_secs, 60, 0..=300, "0 to 300 seconds")?;
    let key_refetch =
        within("[auth.oauth] key_refetch_secs", config.key_refetch_secs, 10, 1..=3600, "1 to 3600 seconds")?;
    let introspection = match config.introspection {
        None => None,
        Some(introspection) => {
            let secret = env.get("TRAILS_OAUTH_CLIENT_SECRET").or(introspection.client_secret);
            let Some(secret) = secret.filter(|s| !s.is_empty()) else {
                return Err(ConfigError::Value {
                    key: "[auth.oauth.introspection] client_secret",
                    value: String::new(),
                    expected: "set (TRAILS_OAUTH_CLIENT_SECRET is preferred: keep it out of files)",
                });
            };
            Some((introspection.client_id, secret))
        }
    };
    Ok(OAuthSettings {
        issuer,
        resource,
        public_url: public_url.to_owned(),
        audience,
        scopes,
        algorithms,
        leeway: Duration::from_secs(leeway),
        key_refetch: Duration::from_secs(key_refetch),
        ca_file: config.ca_file,
        introspection,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, Env, Settings};

    fn resolve(toml: &str) -> Result<super::OAuthSettings, String> {
        let config = Config::parse(toml).unwrap();
        let public_url =
            Settings::resolve(Config::parse(toml).unwrap(), |_| None).map_err(|e| e.to_string())?.http.public_url;
        let oauth = config.auth.oauth.expect("an [auth.oauth] section");
        super::resolve(oauth, public_url.as_deref(), &Env::new(|_| None)).map_err(|e| e.to_string())
    }

    #[test]
    fn the_resource_is_the_public_url_and_hmac_is_never_allowed() {
        let base =
            "[http]\npublic_url = \"https://mcp.example.com/\"\n[auth.oauth]\nissuer = \"https://id.example.com\"\n";
        let oauth = resolve(base).unwrap();
        assert_eq!(
            (oauth.resource.as_str(), oauth.audience.as_str()),
            ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp")
        );
        assert_eq!(oauth.algorithms.len(), 9);
        assert!(resolve(&format!("{base}algorithms = [\"HS256\"]")).unwrap_err().contains("never HMAC or none"));
        assert!(resolve(&format!("{base}algorithms = [\"none\"]")).is_err());
        assert!(resolve(&format!("{base}scopes = {{ \"mcp:x\" = \"admin\" }}"))
            .unwrap_err()
            .contains("runtime, builder or dev"));
        assert!(resolve(&format!("{base}[auth.oauth.introspection]\nclient_id = \"rs\""))
            .unwrap_err()
            .contains("TRAILS_OAUTH_CLIENT_SECRET"));
        let plain = "[http]\npublic_url = \"https://m.example\"\n[auth.oauth]\nissuer = \"http://id.example.com\"\n";
        assert!(resolve(plain).unwrap_err().contains("http:// only on a loopback address"));
        assert!(resolve(&plain.replace("id.example.com", "127.0.0.1:9000")).is_ok());
        let no_url = "[auth.oauth]\nissuer = \"https://id.example.com\"\n";
        assert!(resolve(no_url).unwrap_err().contains("[http] public_url"));
        assert!(resolve("[http]\npublic_url = \"mcp.example.com\"").unwrap_err().contains("[http] public_url"));
    }
}
