//! The built-in capabilities every Trails app ships: `trails.meta.ping`, `trails.resources.read`
//! (any resource, as a tool), `trails.result.read` (the rest of a cut result) and `trails.dry_run`
//! (whether a call would run), all runtime scope; `trails.meta.tools.enable` (builder scope) and — in apps with node types — the read-only
//! `trails.kg.list`, `trails.kg.get` and `trails.kg.read_field` (runtime scope); and the authoring
//! catalogue's scaffolders `trails.meta.gen.shape`, `gen.nodetype`, `gen.capability`, and
//! `trails.meta.schema.snapshot` (dev scope, the `dev` feature); `trails.meta.kg.validate` (builder
//! scope) re-checks stored instances.
//! Each is also `<app> meta <op> '<json>'` on the command line, with the same output.

mod dry_run;
#[cfg(feature = "dev")]
mod gen;
mod kg;
mod kg_validate;
mod ping;
mod resources;
mod result;
#[cfg(feature = "dev")]
mod snapshot;
mod tools;

#[cfg(any(fuzzing, test))]
pub(crate) use kg::read_through;
