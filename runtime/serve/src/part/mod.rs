//! Optional parts (`ARCHITECTURE.md`, "Parts"): values that add to a server while it is
//! assembled — guards in their place in the order, HTTP routes, background tasks that start with
//! the server and stop with it, values later parts use — each from its own `trails.toml`
//! section. The built-in parts (`builtin`: the ledger, Cedar policies, coordination in Redis)
//! are parts as an app's own are (`App::part`), listed in one place.

pub(crate) mod assembly;
pub(crate) mod builtin;
mod error;

pub use crate::state::Running;
pub use assembly::{Assembly, Slot};
/// The HTTP framework a part's routes are written with ([`Assembly::route`]): this server's own
/// version of it.
#[cfg(feature = "http")]
pub use axum;
pub use error::BuildError;

/// An optional part of a server: what it adds, from its own `trails.toml` section. The guide's
/// chapter 4 ("Your own part") has one with a section, a route and a background task.
pub trait Part: Send + 'static {
    /// What logs and errors call it.
    fn name(&self) -> &'static str;

    /// Its own section of `trails.toml` (`"status"` for `[status]`), which
    /// [`Assembly::section`] reads; `None`: it has none. A section no part names stops the
    /// start, before any part assembles.
    fn section(&self) -> Option<&'static str> {
        None
    }

    /// Add what it brings to the server being assembled. Parts assemble in the order they were
    /// given, the built-in ones first; a part's error stops the start.
    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError>;
}
