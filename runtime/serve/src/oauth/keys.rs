//! The issuer's signing keys (its JWK Set), cached. A token signed by a key the cache does not
//! hold makes it fetch the set again — at most once per `key_refetch`, one fetch at a time, so a
//! flood of made-up key ids costs the issuer one request per interval. A set older than
//! [`REFRESH`] is fetched again in the background. While the issuer cannot be reached the keys
//! already held keep working; a token that needs another key is then answered "unavailable".

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::discovery::{get_json, Discovery};
use super::Rejection;

/// How long a fetched key set is used before it is fetched again (in the background): keys an
/// issuer retires stop working within this.
const REFRESH: Duration = Duration::from_secs(600);

/// One usable key of the set.
pub(super) struct Key {
    id: Option<String>,
    /// The algorithm the set pins it to, if it does.
    algorithm: Option<Algorithm>,
    pub(super) key: DecodingKey,
}

struct Set {
    keys: Vec<Arc<Key>>,
    fetched: Instant,
}

pub(super) struct Keys {
    client: reqwest::Client,
    discovery: Arc<Discovery>,
    refetch: Duration,
    set: RwLock<Option<Arc<Set>>>,
    /// Held while fetching; the time of the last attempt, and whether it failed.
    fetching: tokio::sync::Mutex<Option<(Instant, bool)>>,
    /// A background refresh is under way (one at a time).
    refreshing: std::sync::atomic::AtomicBool,
}

impl Keys {
    pub(super) fn new(client: reqwest::Client, discovery: Arc<Discovery>, refetch: Duration) -> Keys {
        Keys {
            client,
            discovery,
            refetch,
            set: RwLock::new(None),
            fetching: tokio::sync::Mutex::new(None),
            refreshing: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn held(&self) -> Option<Arc<Set>> {
        self.set.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// The key that verifies a token with header `kid` and `alg`.
    pub(super) async fn key(self: &Arc<Self>, kid: Option<&str>, alg: Algorithm) -> Result<Arc<Key>, Rejection> {
        if let Some(set) = self.held() {
            if set.fetched.elapsed() > REFRESH {
                self.refresh_in_background();
            }
            if let Some(key) = find(&set, kid, alg)? {
                return Ok(key);
            }
        }
        // Not held: fetch the set again, unless that was tried within `refetch`.
        let mut last = self.fetching.lock().await;
        if let Some(set) = self.held() {
            // Another request may have fetched it while this one waited.
            if let Some(key) = find(&set, kid, alg)? {
                return Ok(key);
            }
        }
        let unavailable = || {
            Rejection::Unavailable(
                "the token is signed by a key this server does not hold, and the authorization server's keys cannot be fetched now; retry later".into(),
            )
        };
        if let Some((at, failed)) = *last {
            if at.elapsed() < self.refetch {
                // The last fetch worked and the key was not in it: unknown. It failed: the key
                // may exist, nothing can tell yet.
                return Err(if failed || self.held().is_none() { unavailable() } else { unknown(kid) });
            }
        }
        match self.fetch().await {
            Ok(set) => {
                *last = Some((Instant::now(), false));
                let found = find(&set, kid, alg)?;
                self.store(set);
                found.ok_or_else(|| unknown(kid))
            }
            Err(error) => {
                *last = Some((Instant::now(), true));
                tracing::warn!(%error, "OAuth: cannot fetch the issuer's signing keys");
                Err(unavailable())
            }
        }
    }

    /// Fetch the set now (at start); how many usable keys it holds.
    pub(super) async fn refresh(&self) -> Result<usize, String> {
        let mut last = self.fetching.lock().await;
        let fetched = self.fetch().await;
        *last = Some((Instant::now(), fetched.is_err()));
        let set = fetched?;
        let count = set.keys.len();
        self.store(set);
        Ok(count)
    }

    fn refresh_in_background(self: &Arc<Self>) {
        use std::sync::atomic::Ordering;
        if self.refreshing.swap(true, Ordering::AcqRel) {
            return;
        }
        let keys = self.clone();
        tokio::spawn(async move {
            // The last attempt is recorded only once it is made: a token under a key not held
            // meanwhile waits for this fetch rather than being told the key is unknown.
            let mut last = keys.fetching.lock().await;
            if last.is_some_and(|(at, _)| at.elapsed() < keys.refetch) {
                keys.refreshing.store(false, Ordering::Release);
                return;
            }
            let fetched = keys.fetch().await;
            keys.refreshing.store(false, Ordering::Release);
            *last = Some((Instant::now(), fetched.is_err()));
            match fetched {
                Ok(set) => keys.store(set),
                // The keys held keep working; the next refresh tries again.
                Err(error) => {
                    tracing::warn!(%error, "OAuth: cannot refresh the issuer's signing keys; keeping the ones held")
                }
            }
        });
    }

    fn store(&self, set: Set) {
        *self.set.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Arc::new(set));
    }

    async fn fetch(&self) -> Result<Set, String> {
        let metadata = self.discovery.metadata().await?;
        let Some(url) = metadata.jwks_uri else {
            return Err("the issuer's metadata has no jwks_uri: it publishes no signing keys".into());
        };
        let document = get_json(&self.client, &url).await?;
        let Some(entries) = document.get("keys").and_then(Value::as_array) else {
            return Err(format!("{url} holds no `keys` array"));
        };
        // One key this server cannot use (another type, an encryption key) does not spoil the rest.
        let keys: Vec<_> = entries.iter().filter_map(usable).map(Arc::new).collect();
        tracing::debug!(url, keys = keys.len(), "OAuth: fetched the issuer's signing keys");
        Ok(Set { keys, fetched: Instant::now() })
    }
}

fn unknown(kid: Option<&str>) -> Rejection {
    Rejection::invalid(match kid {
        Some(_) => "the token is signed by a key the authorization server does not publish",
        None => "the token names no key (`kid`), and no single key of the authorization server fits it",
    })
}

/// A signing key of an asymmetric type: HMAC secrets (`oct`) are never keys here, so a
/// published public key can never be used as one.
fn usable(entry: &Value) -> Option<Key> {
    let jwk: Jwk = serde_json::from_value(entry.clone()).ok()?;
    if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
        return None;
    }
    if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_) | AlgorithmParameters::Other(_)) {
        return None;
    }
    let algorithm = match jwk.common.key_algorithm {
        None => None,
        // A key pinned to an algorithm this crate cannot verify with (an encryption one) is not a signing key.
        Some(pinned) => Some(pinned.to_string().parse::<Algorithm>().ok()?),
    };
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    Some(Key { id: jwk.common.key_id, algorithm, key })
}

/// The key for `kid` and `alg`: by id when the token names one, else the only key of the
/// algorithm's family. A key pinned to another algorithm is an error, not a miss.
fn find(set: &Set, kid: Option<&str>, alg: Algorithm) -> Result<Option<Arc<Key>>, Rejection> {
    let fits = |key: &Key| key.key.family() == alg.family() && key.algorithm.is_none_or(|pinned| pinned == alg);
    match kid {
        Some(kid) => match set.keys.iter().find(|key| key.id.as_deref() == Some(kid)) {
            Some(key) if fits(key) => Ok(Some(key.clone())),
            Some(_) => Err(Rejection::invalid("the token's algorithm is not the one its key is published for")),
            None => Ok(None),
        },
        None => {
            let mut fitting = set.keys.iter().filter(|key| fits(key));
            match (fitting.next(), fitting.next()) {
                (Some(key), None) => Ok(Some(key.clone())),
                (Some(_), Some(_)) => Err(unknown(None)),
                (None, _) => Ok(None),
            }
        }
    }
}
