//! What one process serves: the [`Server`] over HTTP or stdio, on top of the transports and the
//! state they share (`crate::state`).

mod serve;

pub use serve::{ServeError, Server, Started};
