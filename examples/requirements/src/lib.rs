//! The example app: requirements and the people who own them, served by Trails.

pub mod capabilities;
pub mod model;
pub mod store;

pub use store::Store;

/// IRIs of people are this base plus their e-mail address.
pub const PERSON_BASE: &str = "https://example.org/people/";

/// Referencing this keeps the app's linker-collected tables in binaries that only iterate the
/// registry (tests, `cargo xtask`).
pub fn link() {}
