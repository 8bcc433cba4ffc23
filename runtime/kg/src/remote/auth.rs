//! HTTP authentication towards a SPARQL endpoint: whatever the endpoint asks for, Basic or Digest
//! (Virtuoso's `/sparql-auth` accepts only Digest). Nothing is sent to an origin before it has said
//! which scheme it wants, and what it said is remembered per origin (so the query endpoint never
//! receives credentials only the update endpoint asked for); later requests to that origin carry
//! credentials at once (Digest reuses the nonce with a growing count until the origin calls it
//! stale). An origin that asked for Digest is never answered in Basic, and Basic — the password in
//! the clear — is refused over plain `http://` except to a loopback host.

use std::collections::HashMap;
use std::sync::Mutex;

use digest_auth::{AuthContext, WwwAuthenticateHeader};

/// A user name and password, never printed.
pub(crate) struct Credentials {
    user: String,
    password: String,
    /// What each origin (`scheme://host:port`) asked for.
    schemes: Mutex<HashMap<String, Scheme>>,
}

/// What the endpoint last asked for.
enum Scheme {
    Basic,
    Digest(Box<WwwAuthenticateHeader>),
}

/// Why a challenge cannot be answered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChallengeError {
    #[error("the endpoint asked for an authentication scheme other than Basic or Digest: {0}")]
    Unsupported(String),
    #[error("the endpoint's Digest challenge is malformed: {0}")]
    Malformed(digest_auth::Error),
    #[error(
        "the endpoint asked for Basic authentication after Digest; refusing to send the password in a weaker scheme"
    )]
    Downgrade,
    #[error("the endpoint asked for Basic authentication over plain http; refusing to send the password in the clear (use https)")]
    Cleartext,
}

impl Credentials {
    pub(crate) fn new(user: String, password: String) -> Self {
        Credentials { user, password, schemes: Mutex::new(HashMap::new()) }
    }

    pub(crate) fn user(&self) -> &str {
        &self.user
    }

    /// The `Authorization` value for a POST of `body` to `url`, or `None` while its origin has
    /// not asked for credentials.
    pub(crate) fn authorization(&self, url: &reqwest::Url, body: &[u8]) -> Option<String> {
        let mut schemes = self.schemes.lock().unwrap_or_else(|poison| poison.into_inner());
        match schemes.get_mut(&url.origin().ascii_serialization())? {
            Scheme::Basic => Some(self.basic()),
            Scheme::Digest(challenge) => {
                // The digest covers the request target: path and query.
                let path = match url.query() {
                    Some(query) => format!("{}?{query}", url.path()),
                    None => url.path().to_owned(),
                };
                let context = AuthContext::new_post(&*self.user, &*self.password, path.as_str(), Some(body));
                // `respond` only fails on a challenge `parse` already refused.
                challenge.respond(&context).ok().map(|header| header.to_header_string())
            }
        }
    }

    /// Remember what a `401` from `url`'s origin asks for in `WWW-Authenticate`. The caller
    /// retries once.
    pub(crate) fn challenged(&self, url: &reqwest::Url, www_authenticate: &str) -> Result<(), ChallengeError> {
        let origin = url.origin().ascii_serialization();
        let value = www_authenticate.trim();
        let next = match value.split_once(' ').map_or(value, |(scheme, _)| scheme) {
            s if s.eq_ignore_ascii_case("basic") => {
                let schemes = self.schemes.lock().unwrap_or_else(|poison| poison.into_inner());
                if matches!(schemes.get(&origin), Some(Scheme::Digest(_))) {
                    return Err(ChallengeError::Downgrade);
                }
                let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
                let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
                if url.scheme() != "https" && !loopback {
                    return Err(ChallengeError::Cleartext);
                }
                Scheme::Basic
            }
            s if s.eq_ignore_ascii_case("digest") => {
                let mut challenge = digest_auth::parse(value).map_err(ChallengeError::Malformed)?;
                // Try the answer now, so a challenge we cannot answer fails here, not per request.
                let context = AuthContext::new_post(&*self.user, &*self.password, "/", Some(&b""[..]));
                challenge.respond(&context).map_err(ChallengeError::Malformed)?;
                Scheme::Digest(Box::new(challenge))
            }
            other => return Err(ChallengeError::Unsupported(other.to_owned())),
        };
        self.schemes.lock().unwrap_or_else(|poison| poison.into_inner()).insert(origin, next);
        Ok(())
    }

    fn basic(&self) -> String {
        use base64::Engine as _;
        let pair = format!("{}:{}", self.user, self.password);
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
    }
}
