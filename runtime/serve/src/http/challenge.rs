//! What a caller without the right token is told over HTTP: the `WWW-Authenticate` of a 401 or
//! 403 — with an authority (`[auth.oauth]`), where the metadata is and which scope to ask for.

use crate::state::Shared;
use trails_core::pipeline::Refusal;

/// The challenge without OAuth: a bearer token is what it takes.
pub(crate) const PLAIN: &str = r#"Bearer realm="trails""#;

/// The `WWW-Authenticate` value for a refusal answered 401 or 403, if it is one of those.
pub(crate) fn for_refusal(shared: &Shared, refused: &Refusal) -> Option<String> {
    if let Some(authority) = &shared.authority {
        return match refused {
            Refusal::AuthenticationRequired { scope, .. } => Some(authority.challenge(None, Some(*scope))),
            Refusal::ScopeDenied { scope, .. } => {
                let why = format!("this tool needs the {scope} scope");
                Some(authority.challenge(Some(("insufficient_scope", &why)), Some(*scope)))
            }
            _ => None,
        };
    }
    match refused {
        Refusal::AuthenticationRequired { .. } => Some(PLAIN.to_owned()),
        _ => None,
    }
}
