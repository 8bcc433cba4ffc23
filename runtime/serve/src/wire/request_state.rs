//! MCP 2026-07-28's `requestState`, sealed: what an input-required result hands the client to
//! echo back (`method/input.rs`), encrypted and authenticated with XChaCha20-Poly1305 under the
//! server's keys (`[mcp] request_state_keys`), bound to the request it continues (the AEAD's
//! associated data), with an expiry. The first key seals; every key opens, so a key is rotated
//! in before the old one is taken out, without dropping a state in flight.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, Generate, Key, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rmcp::model::ErrorData;
use serde_json::{json, Map, Value};

use crate::config::RequestStateKeys;

/// `requestState`'s prefix: the format, so another one is told apart from a tampered one.
const PREFIX: &str = "ts1.";
const NONCE: usize = 24;
/// Most bytes of one `requestState` (sealed), and of the answers a round carries.
pub(crate) const MAX_STATE_BYTES: usize = 256 * 1024;

/// What seals and opens `requestState`.
pub(crate) struct Sealer {
    keys: Vec<XChaCha20Poly1305>,
    /// How long a state opens.
    lifetime: Duration,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer")
            .field("keys", &format_args!("{} (not shown)", self.keys.len()))
            .field("lifetime", &self.lifetime)
            .finish()
    }
}

impl Sealer {
    /// A sealer with these keys (`[mcp] request_state_keys`, resolved: at least one).
    pub(crate) fn new(keys: &RequestStateKeys) -> Sealer {
        let lifetime = keys.lifetime;
        let keys = keys.keys.iter().map(|key| XChaCha20Poly1305::new(&Key::<XChaCha20Poly1305>::from(*key))).collect();
        Sealer { keys, lifetime }
    }

    /// `payload` (an object), sealed for the request `binding` names, opening until the sealer's
    /// lifetime is up.
    pub(crate) fn seal(&self, mut payload: Map<String, Value>, binding: &[u8]) -> Result<String, ErrorData> {
        payload.insert("expires".to_owned(), json!(now_secs() + self.lifetime.as_secs()));
        let plain = serde_json::to_vec(&payload)
            .map_err(|error| ErrorData::internal_error(format!("request state: {error}"), None))?;
        let nonce =
            XNonce::try_generate().map_err(|error| ErrorData::internal_error(format!("no nonce: {error}"), None))?;
        let sealed = self.keys[0]
            .encrypt(&nonce, Payload { msg: &plain, aad: binding })
            .map_err(|_| ErrorData::internal_error("request state not sealed", None))?;
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        let state = format!("{PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes));
        if state.len() > MAX_STATE_BYTES {
            return Err(refused(&format!(
                "the answers given so far exceed what one request state carries ({MAX_STATE_BYTES} bytes)"
            )));
        }
        Ok(state)
    }

    /// The payload `state` sealed for `binding`, if it opens and has not expired.
    pub(crate) fn open(&self, state: &str, binding: &[u8]) -> Result<Map<String, Value>, ErrorData> {
        const NOT_OURS: &str = "requestState is not one this server issued for this request: tampered, sealed for \
                                another call or caller, or under a key it no longer has; call again without it";
        if state.len() > MAX_STATE_BYTES {
            return Err(refused(NOT_OURS));
        }
        let bytes = state
            .strip_prefix(PREFIX)
            .and_then(|body| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(body).ok())
            .filter(|bytes| bytes.len() > NONCE)
            .ok_or_else(|| refused(NOT_OURS))?;
        let (nonce, sealed) = bytes.split_at(NONCE);
        let nonce = XNonce::try_from(nonce).map_err(|_| refused(NOT_OURS))?;
        let plain = self
            .keys
            .iter()
            .find_map(|key| key.decrypt(&nonce, Payload { msg: sealed, aad: binding }).ok())
            .ok_or_else(|| refused(NOT_OURS))?;
        let Ok(Value::Object(mut opened)) = serde_json::from_slice(&plain) else { return Err(refused(NOT_OURS)) };
        if opened.remove("expires").and_then(|expires| expires.as_u64()).is_none_or(|expires| expires < now_secs()) {
            return Err(refused("requestState has expired: call again without it, and answer anew"));
        }
        Ok(opened)
    }
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
}

pub(crate) fn refused(message: &str) -> ErrorData {
    ErrorData::invalid_params(message.to_owned(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer(keys: &[[u8; 32]], lifetime: Duration) -> Sealer {
        Sealer::new(&RequestStateKeys { keys: keys.to_vec(), lifetime, configured: true })
    }

    const A: [u8; 32] = [0; 32];
    const B: [u8; 32] = [1; 32];
    const MINUTE: Duration = Duration::from_secs(60);

    fn answers() -> Map<String, Value> {
        json!({ "answers": { "name": { "action": "accept", "content": { "name": "Alice" } } } })
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn a_state_opens_for_its_own_call_only_and_untouched() {
        let sealer = sealer(&[A], MINUTE);
        let state = sealer.seal(answers(), b"tools/call t").unwrap();
        assert_eq!(sealer.open(&state, b"tools/call t").unwrap(), answers());
        assert!(sealer.open(&state, b"tools/call u").is_err(), "another call");
        assert!(sealer.open(&format!("{state}-TAMPERED"), b"tools/call t").is_err());
        let mut flipped = state.clone().into_bytes();
        let at = flipped.len() - 2;
        flipped[at] = if flipped[at] == b'A' { b'B' } else { b'A' };
        assert!(sealer.open(&String::from_utf8(flipped).unwrap(), b"tools/call t").is_err(), "one character changed");
        assert!(sealer.open("ts1.", b"tools/call t").is_err() && sealer.open("other", b"tools/call t").is_err());
    }

    #[test]
    fn a_key_rotated_in_still_opens_the_states_of_the_one_before() {
        let old = sealer(&[A], MINUTE).seal(answers(), b"p").unwrap();
        assert!(sealer(&[B, A], MINUTE).open(&old, b"p").is_ok(), "the new key first, the old one still opens");
        assert!(sealer(&[B], MINUTE).open(&old, b"p").is_err(), "the old key gone");
    }

    #[test]
    fn an_expired_state_is_refused() {
        let sealer = sealer(&[A], Duration::ZERO);
        let state = sealer.seal(answers(), b"t").unwrap();
        std::thread::sleep(Duration::from_millis(1100));
        let error = sealer.open(&state, b"t").unwrap_err();
        assert!(error.message.contains("expired"), "{error:?}");
    }
}
