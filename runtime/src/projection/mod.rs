//! The HTTP-side projections, assembled once from the static tables (never derived by
//! reflection): the ADR-0005 capability manifest and the OpenAPI 3.1 document of `/invoke`.

mod manifest;
mod openapi;

pub(crate) use manifest::render as manifest;
pub(crate) use openapi::{render as openapi, Info};
