//! What one process serves: the [`Server`] (over HTTP or stdio), the shared state every transport
//! reads (`Shared`), the tool
//! catalog with its run-time enable/disable switch and cached listings, the notifier that tells
//! sessions about changes, the [`Control`] handle, and the per-call [`Ctx`].

mod catalog;
mod control;
mod ctx;
mod notifier;
mod serve;
mod shared;

pub use catalog::NoSuchTool;
pub(crate) use catalog::{Catalog, CatalogTool, Lookup};
pub use control::Control;
pub use ctx::{AppState, Ctx};
pub(crate) use notifier::{Delivery, Refused, Subscriber, SubscriberKind, Topic, Update};
pub use serve::{ServeError, Server};
pub(crate) use shared::Shared;
