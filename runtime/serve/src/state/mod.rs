//! The serving layer's state, built once per process and read by every transport: `Shared`
//! (the pipeline, the resources, the settings, the rendered manifest), the catalog's listings as
//! the transports send them, the notifier that tells sessions about changes, and the [`Control`]
//! handle a handler holds, and (`replicas`) what several replicas share. Below the built-ins and the transports; the `Server` that runs them
//! sits above.

pub(crate) mod authority;
mod control;
mod kept;
mod listings;
mod notifier;
#[cfg(feature = "redis")]
mod replicas;
mod shared;
pub(crate) mod tasks;

pub(crate) use authority::Authority;
pub use control::{Control, Running};
pub(crate) use kept::Kept;
pub(crate) use listings::Listings;
pub(crate) use notifier::{Delivery, Refused, Subscriber, SubscriberKind, Update};
#[cfg(feature = "redis")]
pub(crate) use replicas::Replicas;
pub(crate) use shared::{Background, Brought, Shared};
