//! What a validation walk produces: the bounded list of failures and the path it is at.

use super::field_error::FieldError;

/// Most errors reported for one value. A hostile payload (a million bad array items) must not
/// turn into a million-entry error; the count in the message still says how many were cut.
pub const MAX_FIELD_ERRORS: usize = 64;

/// Collected failures plus how many were dropped past [`MAX_FIELD_ERRORS`].
#[derive(Debug, Default)]
pub struct Errors {
    list: Vec<FieldError>,
    omitted: usize,
}

impl Errors {
    /// Record a failure (counted, but not kept, past the bound).
    pub fn push(&mut self, error: FieldError) {
        if self.list.len() < MAX_FIELD_ERRORS {
            self.list.push(error);
        } else {
            self.omitted += 1;
        }
    }
    /// No failure was found.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    /// Total number of failures found, including those not kept.
    pub fn total(&self) -> usize {
        self.list.len() + self.omitted
    }
    /// The kept failures.
    pub fn into_vec(self) -> Vec<FieldError> {
        self.list
    }
}

/// Where in the arguments the walk is, as JSON-pointer-ish segments.
#[derive(Debug, Default)]
pub struct Path(Vec<String>);

impl Path {
    /// The path of `leaf` under the current position (`owner/email`).
    pub fn field(&self, leaf: &str) -> String {
        let mut out = self.0.join("/");
        if !out.is_empty() && !leaf.is_empty() {
            out.push('/');
        }
        out.push_str(leaf);
        out
    }
    /// The current position (`tags/3`; empty at the root).
    pub fn current(&self) -> String {
        self.0.join("/")
    }
    pub(crate) fn push(&mut self, segment: impl Into<String>) {
        self.0.push(segment.into());
    }
    pub(crate) fn pop(&mut self) {
        self.0.pop();
    }
}
