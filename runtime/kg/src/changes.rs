//! What the knowledge graph tells the server after each acknowledged write, so subscribers hear
//! about it (`state/notifier`). Every clone of a [`Kg`](super::Kg) shares one list of observers:
//! a write made through any handle — a call's, the app's own, a background task's — is seen.
//!
//! Observers are told synchronously, after the store acknowledged the write and before the
//! writer returns; they must only record the change (push onto a bounded queue), never wait.

use std::sync::{RwLock, Weak};

use crate::declare::NodeTypeInfo;

/// What changed.
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// An instance was created, replaced or removed.
    Instance {
        /// Its node type (the one it was written as).
        node: &'static NodeTypeInfo,
        /// Its IRI.
        iri: &'a str,
        /// How.
        kind: ChangeKind,
    },
    /// A provenance activity was recorded.
    Activity,
    /// Provenance activities were pruned.
    Pruned,
}

/// How an instance changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Updated,
    Deleted,
}

/// Told about every acknowledged change.
pub trait Observer: Send + Sync {
    fn changed(&self, change: Change<'_>);
}

/// The observers of one knowledge graph (weak: a server that stops stops observing).
#[derive(Default)]
pub struct Observers {
    list: RwLock<Vec<Weak<dyn Observer>>>,
}

impl Observers {
    pub fn add(&self, observer: Weak<dyn Observer>) {
        let mut list = self.list.write().unwrap_or_else(|p| p.into_inner());
        list.retain(|o| o.strong_count() > 0);
        list.push(observer);
    }

    pub fn tell(&self, change: Change<'_>) {
        let list = self.list.read().unwrap_or_else(|p| p.into_inner());
        for observer in list.iter().filter_map(Weak::upgrade) {
            observer.changed(change);
        }
    }
}

impl std::fmt::Debug for Observers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.list.read().map(|l| l.len()).unwrap_or_default();
        f.debug_struct("Observers").field("count", &count).finish()
    }
}
