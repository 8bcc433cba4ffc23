//! The built-in meta capabilities every Trails app ships: `trails.meta.ping` (runtime scope) and
//! `trails.meta.tools.enable` (builder scope). The authoring catalogue (`gen.*`,
//! `schema.snapshot`, `kg.validate`) arrives with its issue.

mod ping;
mod tools;
