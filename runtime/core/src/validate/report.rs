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
    /// Where an integer arrived written as a float (`1.0`, `-0.0`, `1e2`), as JSON pointers: an
    /// integer to JSON Schema, so valid, but serde reads integers only from integer tokens (see
    /// [`Errors::rewrite_integral_floats`]). Empty for almost every call; at most
    /// [`MAX_INTEGRAL_FLOATS`].
    integral_floats: Vec<String>,
}

/// Most integers written as floats one value may hold (each is remembered until the rewrite):
/// past it they are refused, so a body of `[1.0,1.0,…]` cannot make the walk hold a pointer per
/// item without bound.
pub const MAX_INTEGRAL_FLOATS: usize = 10_000;

impl Errors {
    /// Record a failure (counted, but not kept, past the bound).
    pub fn push(&mut self, error: FieldError) {
        if self.list.len() < MAX_FIELD_ERRORS {
            self.list.push(error);
        } else {
            self.omitted += 1;
        }
    }
    /// The failures kept, in the order found.
    pub fn iter(&self) -> impl Iterator<Item = &FieldError> {
        self.list.iter()
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
    /// Note that the integer at `path` was written as a float; `false` (nothing noted) past
    /// [`MAX_INTEGRAL_FLOATS`].
    pub(crate) fn integral_float(&mut self, path: &Path) -> bool {
        if self.integral_floats.len() >= MAX_INTEGRAL_FLOATS {
            return false;
        }
        let pointer = path.0.iter().map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1"))).collect();
        self.integral_floats.push(pointer);
        true
    }
    /// Rewrite every integer written as a float in `value` (the value this walk validated) as
    /// the integer it is, so that the handler's types read it. Only integer-typed positions are
    /// touched: a float field or a free-form JSON value keeps its number as sent.
    pub(crate) fn rewrite_integral_floats(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        for pointer in &self.integral_floats {
            let Some(at) = value.pointer_mut(pointer) else { continue };
            // The walk validated it as an integer within its type's bounds: i64 or u64 hold it.
            if let Some(float) = at.as_f64().filter(|f| f.fract() == 0.0) {
                let integer = float as i128;
                if let Ok(small) = i64::try_from(integer) {
                    *at = Value::from(small);
                } else if let Ok(large) = u64::try_from(integer) {
                    *at = Value::from(large);
                }
            }
        }
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
