//! What one process serves: the [`Server`] over HTTP or stdio, on top of the transports and the
//! state they share (`crate::state`).

mod logging;
mod serve;

pub(crate) use logging::logging;
pub use logging::{init_logging, Logging};
pub use serve::{ServeError, Server, Started};
