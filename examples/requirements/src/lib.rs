//! The example app: requirements and the people who own them, served by Trails and stored in its
//! knowledge graph (`[kg] path`, default `trails-data/`).

pub mod capabilities;
pub mod model;

/// Names this crate, so that a binary keeps its linker-collected tables: `App::include(link)` in
/// `main`, or a call in binaries that only iterate the registry (tests, `cargo xtask`).
pub fn link() {}
