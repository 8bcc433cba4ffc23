//! The serving layer of [Trails for Rust](https://github.com/trails-rs/trails): MCP over stdio
//! and Streamable HTTP (rmcp), the HTTP routes beside it, resources and subscriptions, the
//! built-in capabilities, configuration, the command line and `App`. Apps depend on the facade,
//! `trails-mcp` (`use trails::…`), which re-exports what an author needs and selects these parts
//! by feature; `ARCHITECTURE.md` has the module order.
#![warn(missing_docs)]

// Lets the macros' `::trails::…` paths resolve inside this crate too (for the built-ins).
extern crate self as trails;

mod builtin;
mod cli;
pub mod config;
#[cfg(feature = "http")]
mod http;
mod mcp;
#[cfg(any(feature = "http", feature = "stdio"))]
mod memory;
mod method;
#[cfg(feature = "oauth")]
mod oauth;
#[cfg(feature = "otel")]
mod otel;
pub mod part;
mod projection;
mod resources;
mod server;
mod state;
#[cfg(any(feature = "http", feature = "otel"))]
mod throttle;
mod wire;

pub use cli::App;
pub use part::BuildError;

#[cfg(feature = "dev")]
#[doc(hidden)]
pub use projection::snapshot;

/// Serving a built app: the [`Server`](serve::Server) that [`App::build`] returns (serve it, or
/// embed its router), the [`Control`](serve::Control) handlers use to switch tools at run time,
/// and why serving stops.
pub mod serve {
    pub use crate::server::{init_logging, Logging, ServeError, Server, Started};
    pub use crate::state::Control;
}

#[cfg(feature = "testing")]
pub mod testing;

/// Entry points for the fuzz targets in `fuzz/` (built with `--cfg fuzzing` by `cargo fuzz`) and
/// for the corpus replay in this crate's tests; not in a shipped build.
#[cfg(any(fuzzing, test))]
#[doc(hidden)]
#[path = "fuzz.rs"]
pub mod __fuzz;

/// What generated code names (`::trails::__private`, re-exported by the facade).
#[doc(hidden)]
pub mod __private {
    pub use trails_core::__private::*;
    pub use trails_kg::field::{List, One, Optional};
    pub use trails_kg::precondition;
    pub use trails_kg::{Field, Query};
}
