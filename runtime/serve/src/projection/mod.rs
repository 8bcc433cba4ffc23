//! The projections: rendered in `trails-core`; here the descriptors as an app serves them and
//! the schema snapshot (a `dev` tool).

#[cfg(feature = "http")]
pub(crate) use trails_core::projection::*;
pub(crate) mod served;
pub(crate) mod skills;
#[cfg(feature = "dev")]
pub mod snapshot;
