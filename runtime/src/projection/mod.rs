//! The projections: rendered in `trails-core`; the schema snapshot (a `dev` tool) here.

pub(crate) use trails_core::projection::*;
#[cfg(feature = "dev")]
pub mod snapshot;
