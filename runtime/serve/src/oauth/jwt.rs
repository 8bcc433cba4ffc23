//! JWT access tokens (RFC 9068): the algorithm is one configured (never HMAC, never `none`: the
//! JWT library has no `none`), the key is the issuer's, and `iss`, `aud` (this resource, RFC 8707)
//! and `exp`/`nbf` (with the configured leeway) hold.

use std::sync::Arc;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Header, Validation};
use serde_json::Value;

use super::keys::Keys;
use super::OAuthSettings;
use super::{identity, Identity, Rejection};

pub(super) async fn verify(
    token: &str,
    header: Header,
    settings: &OAuthSettings,
    keys: &Arc<Keys>,
) -> Result<Identity, Rejection> {
    let alg = header.alg;
    if !settings.algorithms.iter().any(|name| name.parse::<Algorithm>().is_ok_and(|a| a == alg)) {
        return Err(Rejection::invalid("the token is signed with an algorithm this server does not accept"));
    }
    // RFC 9068 §2.1 types access tokens `at+jwt`; many issuers still write `JWT` or nothing. An
    // ID token or another JWT typed otherwise is not an access token. (An ID token typed `JWT`
    // still fails the audience check: it is issued for the client, not for this resource.)
    let typ = header.typ.as_deref().map(str::to_ascii_lowercase);
    if !matches!(typ.as_deref(), None | Some("jwt" | "at+jwt" | "application/at+jwt")) {
        return Err(Rejection::invalid("the token's `typ` is not an access token's"));
    }
    // Extensions this server does not understand (RFC 7515 `crit`) make the token unusable here.
    if super::jwt_header(token).is_some_and(|header| header.get("crit").is_some()) {
        return Err(Rejection::invalid("the token's header has `crit` extensions this server does not implement"));
    }
    let key = keys.key(header.kid.as_deref(), alg).await?;
    let mut validation = Validation::new(alg);
    validation.set_issuer(&[&settings.issuer]);
    validation.set_audience(&[&settings.audience]);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    validation.leeway = settings.leeway.as_secs();
    validation.validate_nbf = true;
    let data = jsonwebtoken::decode::<Value>(token, &key.key, &validation).map_err(|e| rejection(e.kind()))?;
    // Bound to a client key (DPoP, mTLS: RFC 9449, RFC 8705): this server cannot check the binding.
    if data.claims.get("cnf").is_some() {
        return Err(Rejection::invalid("the token is bound to a client key (`cnf`), which this server cannot check"));
    }
    identity(&data.claims)
}

/// What was wrong, in words that quote nothing of the token.
fn rejection(kind: &ErrorKind) -> Rejection {
    Rejection::invalid(match kind {
        ErrorKind::ExpiredSignature => "the token has expired".to_owned(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (`nbf`)".to_owned(),
        ErrorKind::InvalidAudience => "the token was issued for another resource (`aud`)".to_owned(),
        ErrorKind::InvalidIssuer => "the token was issued by another authorization server (`iss`)".to_owned(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".to_owned(),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key".to_owned(),
        ErrorKind::MissingRequiredClaim(claim) if matches!(claim.as_str(), "exp" | "iss" | "aud") => {
            format!("the token has no `{claim}` claim")
        }
        _ => "the token is not a well-formed JWT".to_owned(),
    })
}
