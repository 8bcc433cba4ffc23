//! Who a bearer token names beyond `[[http.tokens]]`, and what a refused caller is told: an
//! authority a part provides (the OAuth resource server, `part/builtin/oauth.rs`). HTTP's bearer
//! check, its challenges and the metadata routes ask it, whatever it is.

// Only HTTP asks an authority (its bearer check); without it one may still be configured.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use trails_core::auth::{Caller, Scope, ScopeSet};

/// Why a token was not accepted: `why` says so without quoting it; `retryable`, it cannot be
/// checked now (a 503: the authority is out of reach), else it is not one this server accepts
/// (a 401 `invalid_token`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TokenRejection {
    pub(crate) why: String,
    pub(crate) retryable: bool,
}

/// An issuer of bearer tokens this server accepts.
pub(crate) trait Authority: Send + Sync {
    /// The caller `token` authenticates, within the scopes the process serves.
    fn caller<'a>(
        &'a self,
        token: &'a str,
        process_scopes: ScopeSet,
    ) -> Pin<Box<dyn Future<Output = Result<Caller, TokenRejection>> + Send + 'a>>;

    /// A `WWW-Authenticate` value: `error` (its code and description) when a token was refused,
    /// `needed` when holding that scope would help.
    fn challenge(&self, error: Option<(&str, &str)>, needed: Option<Scope>) -> String;

    /// The metadata document clients read to find where to get a token (RFC 9728), and the
    /// paths it is served at (outside authentication).
    fn metadata(&self, process_scopes: ScopeSet, name: &str) -> Value;
    fn metadata_paths(&self) -> Vec<String>;
}
