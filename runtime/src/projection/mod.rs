//! The HTTP-side projections, assembled once from the static tables at start-up (never derived
//! by reflection): today the ADR-0005 capability manifest; OpenAPI and SHACL arrive with their
//! issue.

mod manifest;

pub(crate) use manifest::render as manifest;
