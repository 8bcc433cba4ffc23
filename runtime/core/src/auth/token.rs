//! Bearer tokens and the caller they authenticate. Tokens are configured as SHA-256 hashes and
//! compared in constant time; a presented token is never stored, logged or echoed.

use std::fmt;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::scope::{Scope, ScopeSet};

/// The identity a request runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The configured name of the token that authenticated (an OAuth token: its subject), or
    /// `None` when anonymous.
    pub name: Option<String>,
    /// The OAuth client an access token was issued to (`client_id`), when it names one.
    pub client: Option<String>,
    pub scopes: ScopeSet,
}

impl Caller {
    /// Unauthenticated callers may use `runtime` tools, if the process serves them.
    pub fn anonymous(process_scopes: ScopeSet) -> Caller {
        Caller { name: None, client: None, scopes: process_scopes.intersect(ScopeSet::up_to(Scope::Runtime)) }
    }
    pub fn is_authenticated(&self) -> bool {
        self.name.is_some()
    }
}

/// SHA-256 of a token, hex encoded: what goes into `trails.toml` (`[[http.tokens]] sha256`).
pub fn sha256_hex(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A configured token hash that is not 64 hex characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("token `{name}`: sha256 must be 64 hex characters (print one with `<app> hash-token TOKEN`)")]
pub struct BadTokenHash {
    /// The configured name of the token.
    pub name: String,
}

/// One configured token: a name (for logs and provenance), the hash, and the scopes it grants.
#[derive(Clone)]
pub struct TokenEntry {
    pub name: String,
    digest: [u8; 32],
    pub scopes: ScopeSet,
}

impl fmt::Debug for TokenEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenEntry").field("name", &self.name).field("scopes", &self.scopes).finish_non_exhaustive()
    }
}

impl TokenEntry {
    /// An entry for a configured hash (`[[http.tokens]] sha256 = …`).
    pub fn from_hex(name: impl Into<String>, sha256_hex: &str, scopes: ScopeSet) -> Result<TokenEntry, BadTokenHash> {
        let name = name.into();
        match hex::decode(sha256_hex.trim()).ok().and_then(|b| <[u8; 32]>::try_from(b).ok()) {
            Some(digest) => Ok(TokenEntry { name, digest, scopes }),
            None => Err(BadTokenHash { name }),
        }
    }

    /// An entry for a plain token (e.g. `TRAILS_MCP_TOKEN`), hashed immediately.
    pub fn from_plain(name: impl Into<String>, token: &str, scopes: ScopeSet) -> TokenEntry {
        TokenEntry { name: name.into(), digest: Sha256::digest(token.as_bytes()).into(), scopes }
    }
}

/// The configured tokens.
#[derive(Clone, Debug, Default)]
pub struct TokenTable {
    entries: Vec<TokenEntry>,
}

impl TokenTable {
    pub fn new(entries: Vec<TokenEntry>) -> TokenTable {
        TokenTable { entries }
    }

    /// No token is configured: every presented token fails.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether a configured token is named `name`.
    pub fn names(&self, name: &str) -> bool {
        self.entries.iter().any(|entry| entry.name == name)
    }

    /// The caller `presented` authenticates, with its scopes as the process allows them: what
    /// every transport (and the in-process test client) attaches to a request with a token.
    pub fn caller(&self, presented: &str, process_scopes: ScopeSet) -> Option<Caller> {
        let entry = self.verify(presented)?;
        Some(Caller { name: Some(entry.name.clone()), client: None, scopes: entry.scopes.intersect(process_scopes) })
    }

    /// The entry whose hash matches `presented`. Every entry is compared, in constant time, so
    /// timing reveals neither which entry matched nor how much of a digest did.
    pub fn verify(&self, presented: &str) -> Option<&TokenEntry> {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let mut found = None;
        for entry in &self.entries {
            if bool::from(entry.digest.ct_eq(&digest)) && found.is_none() {
                found = Some(entry);
            }
        }
        found
    }
}

/// The token of an `Authorization: Bearer …` value (or a bare token).
pub fn bearer(value: &str) -> Option<&str> {
    let value = value.trim();
    let token = match value.split_once(char::is_whitespace) {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim(),
        Some(_) => return None,
        None if value.eq_ignore_ascii_case("bearer") => return None,
        None => value,
    };
    (!token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_by_hash_only() {
        let table = TokenTable::new(vec![
            TokenEntry::from_hex("ci", &sha256_hex("s3cret"), ScopeSet::up_to(Scope::Builder)).unwrap(),
            TokenEntry::from_plain("stdio", "other", ScopeSet::up_to(Scope::Dev)),
        ]);
        assert_eq!(table.verify("s3cret").unwrap().name, "ci");
        assert_eq!(table.verify("other").unwrap().name, "stdio");
        assert!(table.verify("s3cre").is_none());
        assert!(table.verify("").is_none());
        assert!(!format!("{table:?}").contains("s3cret"));
    }

    #[test]
    fn bearer_values() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("abc"), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
    }
}
