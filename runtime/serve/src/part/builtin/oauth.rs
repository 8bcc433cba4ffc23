//! The OAuth resource server (the `oauth` feature).

use std::sync::Arc;

use crate::part::{Assembly, BuildError, Part};

/// `[auth.oauth]`: access tokens of an OAuth 2.1 authorization server, beside the static ones.
pub(super) struct OAuth;

impl Part for OAuth {
    fn name(&self) -> &'static str {
        "oauth"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let Some(oauth) = assembly.settings.oauth.clone() else { return Ok(()) };
        let server = crate::oauth::ResourceServer::new(oauth).map_err(|e| BuildError::OAuth(e.to_string()))?;
        assembly.provide(Arc::new(server));
        Ok(())
    }
}
