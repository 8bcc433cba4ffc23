//! Validation: the interpreter behind every generated validator, and the structured
//! [`FieldError`] it reports.
//!
//! The macros emit, per shape, a static table of rules holding every constraint of the
//! declaration (`rules.rs`); `interpret.rs` walks a raw `serde_json::Value` against such a table and
//! collects *all* failures, bounded by [`MAX_FIELD_ERRORS`].

mod field_error;
mod interpret;
mod report;
mod rules;

#[doc(hidden)]
pub use field_error::{cut_text, echo, echo_name, NAME_ECHO_LIMIT};
pub use field_error::{FieldCode, FieldError};
#[doc(hidden)]
pub use interpret::run;
pub use interpret::{validate_item, validate_object};
pub use report::{Errors, Path, MAX_FIELD_ERRORS};
pub(crate) use rules::check_all as check_patterns;
pub use rules::{
    concat_names, contains_name, if_nonempty, may_hold, ArrayRule, FieldRule, IntegerRule, ItemRule, NestedValidator,
    NumberRule, ObjectRules, Pattern, PatternError, StringRule, NO_RULES, PATTERNS,
};

/// The message of a validation failure, spelled once for every transport.
pub(crate) fn failed_message(total: usize) -> String {
    format!("validation failed on {total} field(s)")
}
