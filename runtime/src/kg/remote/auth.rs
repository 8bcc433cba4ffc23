//! HTTP authentication towards a SPARQL endpoint: whatever the endpoint asks for, Basic or Digest
//! (Virtuoso's `/sparql-auth` accepts only Digest). Nothing is sent before the endpoint has said
//! which scheme it wants, so a password never travels as Basic to a server that asked for Digest;
//! the answer is remembered, so later requests carry credentials at once (Digest reuses the nonce
//! with a growing count until the endpoint calls it stale).

use std::sync::Mutex;

use digest_auth::{AuthContext, WwwAuthenticateHeader};

/// A user name and password, never printed.
pub(crate) struct Credentials {
    user: String,
    password: String,
    scheme: Mutex<Scheme>,
}

/// What the endpoint last asked for.
enum Scheme {
    /// Not asked yet: the first request goes without credentials.
    Unknown,
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
}

impl Credentials {
    pub(crate) fn new(user: String, password: String) -> Self {
        Credentials { user, password, scheme: Mutex::new(Scheme::Unknown) }
    }

    pub(crate) fn user(&self) -> &str {
        &self.user
    }

    /// The `Authorization` value for a POST of `body` to `path` (the request target: path and
    /// query), or `None` while the endpoint has not asked for credentials yet.
    pub(crate) fn authorization(&self, path: &str, body: &[u8]) -> Option<String> {
        let mut scheme = self.scheme.lock().unwrap_or_else(|poison| poison.into_inner());
        match &mut *scheme {
            Scheme::Unknown => None,
            Scheme::Basic => Some(self.basic()),
            Scheme::Digest(challenge) => {
                let context = AuthContext::new_post(&*self.user, &*self.password, path, Some(body));
                // `respond` only fails on a challenge `parse` already refused.
                challenge.respond(&context).ok().map(|header| header.to_header_string())
            }
        }
    }

    /// Remember what a `401`'s `WWW-Authenticate` asks for. The caller retries once.
    pub(crate) fn challenged(&self, www_authenticate: &str) -> Result<(), ChallengeError> {
        let value = www_authenticate.trim();
        let next = match value.split_once(' ').map_or(value, |(scheme, _)| scheme) {
            s if s.eq_ignore_ascii_case("basic") => Scheme::Basic,
            s if s.eq_ignore_ascii_case("digest") => {
                let mut challenge = digest_auth::parse(value).map_err(ChallengeError::Malformed)?;
                // Try the answer now, so a challenge we cannot answer fails here, not per request.
                let context = AuthContext::new_post(&*self.user, &*self.password, "/", Some(&b""[..]));
                challenge.respond(&context).map_err(ChallengeError::Malformed)?;
                Scheme::Digest(Box::new(challenge))
            }
            other => return Err(ChallengeError::Unsupported(other.to_owned())),
        };
        *self.scheme.lock().unwrap_or_else(|poison| poison.into_inner()) = next;
        Ok(())
    }

    fn basic(&self) -> String {
        use base64::Engine as _;
        let pair = format!("{}:{}", self.user, self.password);
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
    }
}
