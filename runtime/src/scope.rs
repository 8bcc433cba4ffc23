//! Scopes of ADR-0055: `runtime` ⊂ `builder` ⊂ `dev`.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    Runtime,
    Builder,
    Dev,
}

impl Scope {
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Runtime => "runtime",
            Scope::Builder => "builder",
            Scope::Dev => "dev",
        }
    }
    pub fn parse(text: &str) -> Option<Scope> {
        match text.trim() {
            "runtime" => Some(Scope::Runtime),
            "builder" => Some(Scope::Builder),
            "dev" => Some(Scope::Dev),
            _ => None,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
