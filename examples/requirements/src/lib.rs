//! The example app: requirements and the people who own them, served by Trails and stored in its
//! knowledge graph (`[kg] path`, default `trails-data/`).

pub mod capabilities;
pub mod model;

/// Referencing this keeps the app's linker-collected tables in binaries that only iterate the
/// registry (tests, `cargo xtask`).
pub fn link() {}
