//! Opaque access tokens, asked about at the issuer's introspection endpoint (RFC 7662). An
//! answer is kept by the token's SHA-256 — an active one for up to [`KEEP`] (never past the
//! token's `exp`), a refusal for [`KEEP_REFUSED`] — so a busy client costs the issuer a request a
//! minute and a token retried after a refusal costs nothing; at most [`IN_FLIGHT`] questions are
//! open at once (a caller waits [`WAIT`] for a turn), so a flood of made-up tokens cannot turn
//! this server against the issuer. (Such a flood can still crowd out genuine opaque tokens for
//! a while: a per-client rate limit in front of the server is the remedy.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::discovery::{chain, read_json, Discovery};
use super::OAuthSettings;
use super::{audiences, identity, Identity, Rejection};

/// Longest an active answer is reused.
const KEEP: Duration = Duration::from_secs(60);
/// Most answers kept.
const MAX_KEPT: usize = 10_000;
/// Most questions open at the issuer at once.
const IN_FLIGHT: usize = 16;
/// Longest a refusal is reused.
const KEEP_REFUSED: Duration = Duration::from_secs(30);
/// Longest a caller waits for a turn to ask.
const WAIT: Duration = Duration::from_secs(2);

/// Answers by the token's SHA-256, each until when it is reused.
type Kept = HashMap<[u8; 32], (Result<Identity, Rejection>, Instant)>;

pub(super) struct Introspector {
    client: reqwest::Client,
    discovery: Arc<Discovery>,
    client_id: String,
    secret: String,
    kept: Mutex<Kept>,
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
        if let Some((answer, until)) = self.kept().get(&digest) {
            if Instant::now() < *until {
                return answer.clone();
            }
        }
        let busy =
            || Rejection::Unavailable("too many tokens are being checked at the authorization server; retry".into());
        let _permit = match tokio::time::timeout(WAIT, self.open.acquire()).await {
            Ok(Ok(permit)) => permit,
            _ => return Err(busy()),
        };
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
        let (kept_answer, until) = match check(&answer, settings) {
            Ok((identity, expires)) => (Ok(identity), Instant::now() + expires.map_or(KEEP, |left| left.min(KEEP))),
            Err(refused) => (Err(refused), Instant::now() + KEEP_REFUSED),
        };
        let mut kept = self.kept();
        if kept.len() >= MAX_KEPT {
            let now = Instant::now();
            kept.retain(|_, (_, until)| *until > now);
            if kept.len() >= MAX_KEPT {
                kept.clear();
            }
        }
        kept.insert(digest, (kept_answer.clone(), until));
        kept_answer
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
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
    // An access token, to be used as a bearer token: not a refresh token, not one bound to a
    // client key (DPoP or mTLS: this server cannot check the binding, so it does not accept it).
    if answer.get("token_type").and_then(Value::as_str).is_some_and(|t| !t.eq_ignore_ascii_case("bearer")) {
        return Err(Rejection::invalid("the token is not a bearer access token (`token_type`)"));
    }
    if answer.get("cnf").is_some() {
        return Err(Rejection::invalid("the token is bound to a client key (`cnf`), which this server cannot check"));
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
