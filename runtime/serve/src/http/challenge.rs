//! What a caller without the right token is told over HTTP: the `WWW-Authenticate` of a 401 or
//! 403 — with `[auth.oauth]`, where the metadata is and which scope to ask for.

use crate::state::Shared;
use trails_core::pipeline::Refusal;

/// The challenge without OAuth: a bearer token is what it takes.
pub(crate) const PLAIN: &str = r#"Bearer realm="trails""#;

/// The `WWW-Authenticate` value for a refusal answered 401 or 403, if it is one of those.
pub(crate) fn for_refusal(shared: &Shared, refused: &Refusal) -> Option<String> {
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &shared.oauth {
        return match refused {
            Refusal::AuthenticationRequired { scope, .. } => Some(oauth.challenge(None, oauth.scope_for(*scope))),
            Refusal::ScopeDenied { scope, .. } => {
                let why = format!("this tool needs the {scope} scope");
                Some(oauth.challenge(Some(("insufficient_scope", &why)), oauth.scope_for(*scope)))
            }
            _ => None,
        };
    }
    let _ = shared;
    match refused {
        Refusal::AuthenticationRequired { .. } => Some(PLAIN.to_owned()),
        _ => None,
    }
}
