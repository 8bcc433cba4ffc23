//! One subscriber's pending notifications: bounded, coalescing, drop-oldest.
//!
//! Writers push and never wait; one delivery loop per subscriber pops and sends. An update
//! already waiting is not queued twice (an update notification carries no content, so the
//! second says nothing new). When the queue is full the oldest resource update is dropped and
//! counted (a waiting tool-list change is kept); the next resource update delivered carries that
//! count (`lagged`), so the subscriber knows to re-read.
//! Memory per subscriber is therefore at most `capacity` pointers, however slow the reader.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// One pending notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Update {
    /// `notifications/resources/updated` for this URI (as the subscriber wrote it).
    Resource(Arc<str>),
    /// `notifications/tools/list_changed` (2026-07-28 listeners that asked for it).
    ToolListChanged,
}

/// An update to send, and how many were dropped since the previous one was taken.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Delivery {
    pub(crate) update: Update,
    pub(crate) lagged: u64,
}

#[derive(Default)]
struct State {
    items: VecDeque<Update>,
    lagged: u64,
    closed: bool,
}

pub(crate) struct UpdateQueue {
    state: Mutex<State>,
    ready: Notify,
    capacity: usize,
}

impl UpdateQueue {
    /// A queue holding at most `capacity` (at least 1) updates.
    pub(crate) fn new(capacity: usize) -> UpdateQueue {
        UpdateQueue { state: Mutex::default(), ready: Notify::new(), capacity: capacity.max(1) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queue `update` (unless it is already waiting). Whether an older update was dropped for it.
    pub(crate) fn push(&self, update: Update) -> bool {
        let dropped = {
            let mut state = self.state();
            if state.closed || state.items.contains(&update) {
                return false;
            }
            let dropped = state.items.len() >= self.capacity;
            if dropped {
                state.lagged += 1;
                // The oldest resource update goes; a waiting tool-list change is kept (there is
                // at most one, and losing it would leave a stale tool list).
                match state.items.iter().position(|u| matches!(u, Update::Resource(_))) {
                    Some(at) => drop(state.items.remove(at)),
                    None if matches!(update, Update::Resource(_)) => return true,
                    None => {}
                }
            }
            state.items.push_back(update);
            dropped
        };
        self.ready.notify_one();
        dropped
    }

    /// The oldest waiting update; `None` once the queue is closed.
    pub(crate) async fn next(&self) -> Option<Delivery> {
        loop {
            {
                let mut state = self.state();
                if state.closed {
                    return None;
                }
                if let Some(update) = state.items.pop_front() {
                    // The count rides on the next resource update (the one that can carry it).
                    let lagged = match update {
                        Update::Resource(_) => std::mem::take(&mut state.lagged),
                        Update::ToolListChanged => 0,
                    };
                    return Some(Delivery { update, lagged });
                }
            }
            // `notify_one` stores a permit when nobody waits, so a push between the check
            // above and this await is not lost.
            self.ready.notified().await;
        }
    }

    /// Updates were missed that this queue never saw (another replica's, through a feed that
    /// lagged): the next resource update delivered counts one more.
    pub(crate) fn mark_lagged(&self) {
        let mut state = self.state();
        if !state.closed {
            state.lagged += 1;
        }
    }

    /// Stop: waiting updates are discarded, `next` answers `None`, pushes are ignored.
    pub(crate) fn close(&self) {
        let mut state = self.state();
        state.closed = true;
        state.items.clear();
        drop(state);
        self.ready.notify_one();
    }

    /// How many updates wait.
    pub(crate) fn len(&self) -> usize {
        self.state().items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(uri: &str) -> Update {
        Update::Resource(uri.into())
    }

    #[tokio::test]
    async fn a_full_queue_drops_the_oldest_and_the_next_delivery_says_how_many() {
        let queue = UpdateQueue::new(3);
        let dropped: Vec<bool> = (0..5).map(|n| queue.push(resource(&format!("trails://kg/T/{n}")))).collect();
        assert_eq!(dropped, [false, false, false, true, true]);
        assert_eq!(queue.len(), 3);
        assert_eq!(queue.next().await, Some(Delivery { update: resource("trails://kg/T/2"), lagged: 2 }));
        assert_eq!(queue.next().await, Some(Delivery { update: resource("trails://kg/T/3"), lagged: 0 }));
    }

    #[tokio::test]
    async fn a_full_queue_keeps_its_tool_list_change() {
        let queue = UpdateQueue::new(2);
        queue.push(Update::ToolListChanged);
        queue.push(resource("trails://kg/T/1"));
        assert!(queue.push(resource("trails://kg/T/2")));
        assert_eq!(queue.next().await, Some(Delivery { update: Update::ToolListChanged, lagged: 0 }));
        assert_eq!(queue.next().await, Some(Delivery { update: resource("trails://kg/T/2"), lagged: 1 }));
        let single = UpdateQueue::new(1);
        single.push(Update::ToolListChanged);
        assert!(single.push(resource("trails://kg/T/3")), "the resource update is the one dropped");
        assert_eq!(single.next().await, Some(Delivery { update: Update::ToolListChanged, lagged: 0 }));
    }

    #[tokio::test]
    async fn the_lag_count_waits_for_a_resource_update_to_carry_it() {
        let queue = UpdateQueue::new(1);
        queue.push(resource("trails://kg/T/1"));
        assert!(queue.push(Update::ToolListChanged), "the resource update is dropped for it");
        assert_eq!(queue.next().await, Some(Delivery { update: Update::ToolListChanged, lagged: 0 }));
        queue.push(resource("trails://kg/T/2"));
        assert_eq!(queue.next().await, Some(Delivery { update: resource("trails://kg/T/2"), lagged: 1 }));
    }

    #[tokio::test]
    async fn an_update_already_waiting_is_not_queued_twice() {
        let queue = UpdateQueue::new(2);
        for _ in 0..10 {
            assert!(!queue.push(resource("trails://kg/T")));
        }
        queue.push(Update::ToolListChanged);
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.next().await.unwrap().update, resource("trails://kg/T"));
        // Once taken, the same URI queues again: it is a new change.
        queue.push(resource("trails://kg/T"));
        assert_eq!(queue.len(), 2);
    }

    #[tokio::test]
    async fn a_waiting_reader_wakes_on_push_and_on_close() {
        let queue = Arc::new(UpdateQueue::new(4));
        let reader = tokio::spawn({
            let queue = queue.clone();
            async move { (queue.next().await, queue.next().await) }
        });
        tokio::task::yield_now().await;
        queue.push(resource("trails://stats"));
        while queue.len() > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        queue.close();
        let (first, second) = tokio::time::timeout(std::time::Duration::from_secs(5), reader).await.unwrap().unwrap();
        assert_eq!(first.unwrap().update, resource("trails://stats"));
        assert_eq!(second, None);
        assert!(!queue.push(resource("trails://stats")), "a closed queue takes nothing");
        assert_eq!(queue.len(), 0);
    }
}
