//! The HTTP-side projections, assembled once from the static tables (never derived by
//! reflection): the capability manifest, the OpenAPI 3.1 document of `/invoke`, and the
//! SHACL shapes the macros emitted, joined.

mod manifest;
mod openapi;
#[doc(hidden)]
pub mod shacl;

#[doc(hidden)]
pub use manifest::{render as manifest, render_tools as manifest_of};
#[doc(hidden)]
pub use openapi::{render as openapi, render_served as openapi_served, Info};
