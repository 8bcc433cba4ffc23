//! Who may call what: [`Scope`]s and scope sets (modelled once), bearer tokens
//! configured as SHA-256 hashes, and the `Caller` a request runs as. The transports decide *who*
//! (from `initialize` on stdio, from `Authorization` on HTTP); the server decides *what* with these.

mod scope;
mod token;

pub use scope::{Scope, ScopeSet, UnknownScope};
#[doc(hidden)]
pub use token::{bearer, Caller, TokenEntry, TokenTable};
pub use token::{sha256_hex, BadTokenHash};
