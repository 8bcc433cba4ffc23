//! What one process serves: the [`Server`] (over HTTP or stdio), the shared state every transport
//! reads (`Shared`), the catalog's listings as the transports send them, the notifier that tells
//! sessions about changes, and the [`Control`] handle.

mod control;
mod listings;
mod notifier;
mod serve;
mod shared;

pub use control::Control;
pub(crate) use listings::Listings;
pub(crate) use notifier::{Delivery, Refused, Subscriber, SubscriberKind, Update};
pub use serve::{ServeError, Server};
pub(crate) use shared::{Parts, Shared};
