//! The built-in capabilities every Trails app ships: `trails.meta.ping` (runtime scope),
//! `trails.meta.tools.enable` (builder scope) and — in apps with node types — the read-only
//! `trails.kg.list`, `trails.kg.get` and `trails.kg.read_field` (runtime scope); and the authoring
//! catalogue's scaffolders `trails.meta.gen.shape`, `gen.nodetype`, `gen.capability` (dev scope).
//! Each is also `<app> meta <op> '<json>'` on the command line, with the same output.

mod gen;
mod kg;
mod ping;
mod tools;

/// The prefix of the knowledge-graph tools, served only by apps that declare node types.
pub(crate) const KG_TOOLS: &str = "trails.kg.";

pub(crate) use kg::read_through;
