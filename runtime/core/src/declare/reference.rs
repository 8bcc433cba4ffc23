//! Field types with a fixed projection: references to node types and timestamps.

use std::fmt;
use std::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A reference to an instance of node type `T`, carried as its IRI.
/// Projects to `{"type":"string","format":"iri","trails:node_type":"<label>"}`.
pub struct Ref<T> {
    iri: String,
    target: PhantomData<fn() -> T>,
}

impl<T> Ref<T> {
    /// A reference to the instance at `iri`.
    pub fn new(iri: impl Into<String>) -> Self {
        Ref { iri: iri.into(), target: PhantomData }
    }
    /// The instance's IRI.
    pub fn iri(&self) -> &str {
        &self.iri
    }
}

impl<T> Clone for Ref<T> {
    fn clone(&self) -> Self {
        Ref::new(self.iri.clone())
    }
}
impl<T> PartialEq for Ref<T> {
    fn eq(&self, other: &Self) -> bool {
        self.iri == other.iri
    }
}
impl<T> Eq for Ref<T> {}
// By IRI, so references can key a map or a set (the owners of a page of tasks).
impl<T> std::hash::Hash for Ref<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.iri.hash(state);
    }
}
impl<T> PartialOrd for Ref<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Ref<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.iri.cmp(&other.iri)
    }
}
impl<T> fmt::Debug for Ref<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Ref<{}>({})", std::any::type_name::<T>(), self.iri)
    }
}
impl<T> Serialize for Ref<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.iri)
    }
}
impl<'de, T> Deserialize<'de> for Ref<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Ref::new)
    }
}

/// The documented date-time field type: an RFC 3339 timestamp in UTC.
/// Projects to `{"type":"string","format":"date-time"}`.
pub type DateTime = chrono::DateTime<chrono::Utc>;
