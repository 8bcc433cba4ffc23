//! In-memory storage for the example. Bounded: a client cannot grow it past `CAPACITY`.
//! (The durable embedded KG store replaces this in a later milestone.)

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use trails::Error;

use crate::model::{Person, Requirement};

/// Most records (requirements + people) the example keeps.
pub const CAPACITY: usize = 10_000;

#[derive(Default)]
pub struct Store {
    inner: Mutex<Data>,
}

#[derive(Default)]
pub struct Data {
    pub requirements: BTreeMap<String, Requirement>,
    /// Keyed by e-mail (the node type's unique key).
    pub people: BTreeMap<String, Person>,
}

impl Data {
    pub fn records(&self) -> usize {
        self.requirements.len() + self.people.len()
    }
    pub fn ensure_room(&self) -> Result<(), Error> {
        if self.records() >= CAPACITY {
            return Err(Error::budget_exceeded(format!("the example store holds at most {CAPACITY} records")));
        }
        Ok(())
    }
}

impl Store {
    pub fn lock(&self) -> MutexGuard<'_, Data> {
        // A handler that panicked mid-write leaves plain data behind; keep serving it.
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
