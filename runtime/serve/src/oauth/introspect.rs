//! Opaque access tokens, asked about at the issuer's introspection endpoint (RFC 7662). An active
//! answer is kept for up to [`KEEP`] (never past the token's `exp`), by the token's SHA-256, so a
//! busy client costs the issuer a request a minute; at most [`IN_FLIGHT`] questions are open at
//! once, so a flood of made-up tokens cannot turn this server against the issuer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::discovery::{chain, read_json, Discovery};
use super::{audiences, identity, Identity, Rejection};
use crate::config::OAuthSettings;

/// Longest an active answer is reused.
const KEEP: Duration = Duration::from_secs(60);
/// Most answers kept.
const MAX_KEPT: usize = 10_000;
/// Most questions open at the issuer at once.
const IN_FLIGHT: usize = 16;

pub(super) struct Introspector {
    client: reqwest::Client,
    discovery: Arc<Discovery>,
    client_id: String,
    secret: String,
    kept: Mutex<HashMap<[u8; 32], (Identity, Instant)>>,
    open: tokio::sync::Semaphore,
}

impl Introspector {
    pub(super) fn new(client: reqwest::Client, discovery: Arc<Discovery>, client_id: String, secret: String) -> Self {
        Introspector {
            client,
            discovery,
            client_id,
            secret,
            kept: Mutex::new(HashMap::new()),
            open: tokio::sync::Semaphore::new(IN_FLIGHT),
        }
    }

    pub(super) async fn verify(&self, token: &str, settings: &OAuthSettings) -> Result<Identity, Rejection> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((identity, until)) = self.kept().get(&digest) {
            if Instant::now() < *until {
                return Ok(identity.clone());
            }
        }
        let busy =
            || Rejection::Unavailable("too many tokens are being checked at the authorization server; retry".into());
        let _permit = self.open.try_acquire().map_err(|_| busy())?;
        let unreachable = |error: String| {
            tracing::warn!(%error, "OAuth: token introspection failed");
            Rejection::Unavailable("the authorization server cannot be asked about the token now; retry later".into())
        };
        let metadata = self.discovery.metadata().await.map_err(unreachable)?;
        let Some(endpoint) = metadata.introspection_endpoint else {
            return Err(unreachable("the issuer's metadata names no introspection_endpoint".into()));
        };
        let response = self
            .client
            .post(&endpoint)
            .basic_auth(&self.client_id, Some(&self.secret))
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|e| unreachable(format!("{endpoint}: {}", chain(&e))))?;
        let answer = read_json(&endpoint, response).await.map_err(unreachable)?;
        let (identity, expires) = check(&answer, settings)?;
        let until = Instant::now() + expires.map_or(KEEP, |left| left.min(KEEP));
        let mut kept = self.kept();
        if kept.len() >= MAX_KEPT {
            let now = Instant::now();
            kept.retain(|_, (_, until)| *until > now);
            if kept.len() >= MAX_KEPT {
                kept.clear();
            }
        }
        kept.insert(digest, (identity.clone(), until));
        Ok(identity)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], (Identity, Instant)>> {
        self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// An introspection answer checked as a JWT's claims would be; the identity and how long the
/// token has left.
fn check(answer: &Value, settings: &OAuthSettings) -> Result<(Identity, Option<Duration>), Rejection> {
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err(Rejection::invalid(
            "the token is not active (expired, revoked or unknown to the authorization server)",
        ));
    }
    if let Some(issuer) = answer.get("iss") {
        if issuer.as_str() != Some(settings.issuer.as_str()) {
            return Err(Rejection::invalid("the token was issued by another authorization server (`iss`)"));
        }
    }
    if !audiences(answer.get("aud")).contains(&settings.audience.as_str()) {
        return Err(Rejection::invalid("the token was issued for another resource (`aud`)"));
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let leeway = settings.leeway.as_secs();
    let expires = answer.get("exp").and_then(Value::as_u64);
    if expires.is_some_and(|exp| exp.saturating_add(leeway) <= now) {
        return Err(Rejection::invalid("the token has expired"));
    }
    if answer.get("nbf").and_then(Value::as_u64).is_some_and(|nbf| nbf > now.saturating_add(leeway)) {
        return Err(Rejection::invalid("the token is not valid yet (`nbf`)"));
    }
    let left = expires.map(|exp| Duration::from_secs(exp.saturating_sub(now)));
    Ok((identity(answer)?, left))
}
