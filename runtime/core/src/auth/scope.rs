//! Scopes, modelled once: a [`Scope`] is what a tool needs, a [`ScopeSet`] is what a
//! caller (or the process) holds. `runtime` ⊂ `builder` ⊂ `dev`: holding a scope holds the ones
//! below it.

use std::fmt;

pub use trails_pattern::{Scope, UnknownScope};

/// `scope`'s bit in a [`ScopeSet`].
const fn bit(scope: Scope) -> u8 {
    1 << (scope as u8)
}

/// A set of scopes. Granting a scope grants every scope below it (`dev` ⊃ `builder` ⊃ `runtime`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ScopeSet(u8);

impl ScopeSet {
    /// No scope at all: nothing is listed or callable.
    pub const EMPTY: ScopeSet = ScopeSet(0);

    /// `scope` and everything below it.
    pub fn up_to(scope: Scope) -> ScopeSet {
        ScopeSet(Scope::ALL.iter().filter(|s| **s <= scope).fold(0, |bits, s| bits | bit(*s)))
    }

    /// Whether `scope` is held.
    pub fn contains(self, scope: Scope) -> bool {
        self.0 & bit(scope) != 0
    }

    /// The scopes held by both sets (per-connection narrowing of the process set).
    pub fn intersect(self, other: ScopeSet) -> ScopeSet {
        ScopeSet(self.0 & other.0)
    }

    /// The scopes held by either set.
    pub fn union(self, other: ScopeSet) -> ScopeSet {
        ScopeSet(self.0 | other.0)
    }

    /// A compact key for caches keyed by the effective scope set.
    #[doc(hidden)]
    pub fn bits(self) -> u8 {
        self.0
    }

    /// The held scopes, lowest first.
    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.into_iter().filter(move |s| self.contains(*s))
    }

    /// The held scopes' wire names, lowest first.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Scope::as_str).collect()
    }

    /// Parse `runtime,builder` (each scope also grants the ones below it; blanks are skipped).
    pub fn parse_list<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<ScopeSet, UnknownScope> {
        let mut set = ScopeSet::EMPTY;
        for item in items.into_iter().map(str::trim).filter(|s| !s.is_empty()) {
            set = set.union(ScopeSet::up_to(item.parse()?));
        }
        Ok(set)
    }
}

impl fmt::Debug for ScopeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_imply_the_ones_below() {
        let dev = ScopeSet::parse_list(["dev"]).unwrap();
        assert_eq!(dev.names(), ["runtime", "builder", "dev"]);
        let builder = ScopeSet::parse_list("runtime, builder".split(',')).unwrap();
        assert_eq!(builder.intersect(dev).names(), ["runtime", "builder"]);
        assert_eq!(ScopeSet::parse_list(["admin"]).unwrap_err(), UnknownScope("admin".into()));
        assert_eq!(" dev ".parse::<Scope>(), Ok(Scope::Dev));
    }
}
