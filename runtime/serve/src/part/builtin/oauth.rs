//! The OAuth resource server (the `oauth` feature): the authority of the access tokens an OAuth
//! 2.1 authorization server issues for this resource, beside the static tokens.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::config::{ConfigError, Env, OAuthConfig};
use crate::oauth::{OAuthSettings, Rejection, ResourceServer};
use crate::part::{Assembly, BuildError, Part};
use crate::state::authority::{Authority, TokenRejection};
use trails_core::auth::{Caller, Scope, ScopeSet};

/// `[auth.oauth]`.
pub(super) struct OAuth(OAuthSettings);

impl OAuth {
    /// `[auth.oauth]`, with `[http] public_url` (the resource is `<public_url>/mcp`).
    pub(super) fn resolve(config: OAuthConfig, public_url: Option<&str>, env: &Env) -> Result<OAuth, ConfigError> {
        crate::oauth::resolve_settings(config, public_url, env).map(OAuth)
    }
}

impl Part for OAuth {
    fn name(&self) -> &'static str {
        "oauth"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let server = Arc::new(ResourceServer::new(self.0).map_err(|e| BuildError::OAuth(e.to_string()))?);
        let warming = server.clone();
        // Once serving: the issuer's metadata and keys, fetched before the first token needs them.
        assembly.background(move |_| async move {
            tracing::info!(metadata = %warming.metadata_url(), "OAuth resource server: tokens of the configured issuer are accepted");
            warming.warm_up().await
        });
        assembly.provide(server as Arc<dyn Authority>);
        Ok(())
    }
}

impl Authority for ResourceServer {
    fn caller<'a>(
        &'a self,
        token: &'a str,
        process_scopes: ScopeSet,
    ) -> Pin<Box<dyn Future<Output = Result<Caller, TokenRejection>> + Send + 'a>> {
        Box::pin(async move {
            ResourceServer::caller(self, token, process_scopes).await.map_err(|rejection| match rejection {
                Rejection::Invalid(why) => TokenRejection { why, retryable: false },
                Rejection::Unavailable(why) => TokenRejection { why, retryable: true },
            })
        })
    }

    fn challenge(&self, error: Option<(&str, &str)>, needed: Option<Scope>) -> String {
        ResourceServer::challenge(self, error, needed.and_then(|scope| self.scope_for(scope)))
    }

    fn metadata(&self, process_scopes: ScopeSet, name: &str) -> Value {
        ResourceServer::metadata(self, process_scopes, name)
    }

    fn metadata_paths(&self) -> Vec<String> {
        // RFC 9728's path-suffixed form names the resource `/mcp`; behind a proxy that serves
        // this app under a path prefix (`public_url`'s path), the metadata is where RFC 9728
        // puts it, in case the proxy forwards that path unchanged.
        let mut paths = vec![
            "/.well-known/oauth-protected-resource".to_owned(),
            "/.well-known/oauth-protected-resource/mcp".to_owned(),
        ];
        let prefixed = self.metadata_path();
        if !paths.contains(&prefixed) {
            paths.push(prefixed);
        }
        paths
    }
}
