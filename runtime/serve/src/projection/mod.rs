//! The projections: rendered in `trails-core`; the schema snapshot (a `dev` tool) here.

#[cfg(feature = "http")]
pub(crate) use trails_core::projection::*;
#[cfg(feature = "dev")]
pub mod snapshot;
