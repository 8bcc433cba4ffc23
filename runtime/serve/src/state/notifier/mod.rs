//! Who hears about changes: every initialized session and every `subscriptions/listen` request
//! is a [`Subscriber`] with its own bounded queue (`queue`); `subscriptions` routes tool-list
//! changes and knowledge-graph changes to the subscribers that asked for them. Nothing here
//! waits for a subscriber: delivery is each subscriber's own task (`mcp/subscribe`).

mod queue;
mod subscriptions;

pub(crate) use queue::{Delivery, Update};
pub(crate) use subscriptions::{Refused, Subscriber, SubscriberKind, Subscriptions};
