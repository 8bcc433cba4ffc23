//! The HTTP-side projections, assembled once from the static tables (never derived by
//! reflection): the ADR-0005 capability manifest, the OpenAPI 3.1 document of `/invoke`, and the
//! SHACL shapes the macros emitted, joined and converted.

mod manifest;
mod openapi;
pub(crate) mod shacl;
pub mod snapshot;

pub(crate) use manifest::render as manifest;
pub(crate) use openapi::{render as openapi, Info};
