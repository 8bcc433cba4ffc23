//! What one process serves: the [`Server`] over HTTP or stdio, on top of the transports and the
//! state they share (`crate::state`).

#[cfg(feature = "http")]
mod http;
mod logging;
mod serve;
#[cfg(feature = "stdio")]
mod stdio;

pub(crate) use logging::logging;
pub use logging::{init_logging, Logging};
pub use serve::{ServeError, Server, Started};
