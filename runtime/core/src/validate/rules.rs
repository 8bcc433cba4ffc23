//! The rule tables the macros emit, one per shape: every constraint the schema states is a rule
//! here, so the schema a client sees and the check the server runs come from the same IR.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::report::{Errors, Path};

/// A nested validator: the `validate_at` of another shape.
pub type NestedValidator = fn(&Value, &mut Path, &mut Errors);

/// A regex from a `pattern` predicate. The macro checked this source for ECMA-262 portability
/// and compiled its rewrite; it is compiled with ECMA-262's meaning of `\d`, `\w`, `\b`, `\s` and
/// `.` (`trails_pattern::to_rust`), so it accepts exactly what a JSON Schema client accepts. Every
/// pattern is also listed in `PATTERNS` and parsed when the registry is collected, so a server
/// whose `regex` crate disagrees with the macro's refuses to start instead of validating with a
/// different rule; its automaton is built on first use (building them all at start-up was most of
/// the start-up time). What parsing does not check, `regex`'s size limit, the macro checked when
/// it compiled the same pattern with the same locked `regex`.
pub struct Pattern {
    source: &'static str,
    compiled: OnceLock<Result<Regex, regex::Error>>,
}

/// Every `pattern` of every linked shape and capability (filled by the macros).
#[linkme::distributed_slice]
pub static PATTERNS: [&'static Pattern];

/// A `pattern` that compiled in the macro but not in this binary.
#[derive(Debug, Clone, thiserror::Error)]
#[error("pattern `{source_text}` does not compile at run time ({reason}); the macro and the runtime disagree on the `regex` crate: rebuild with one version")]
pub struct PatternError {
    /// The pattern as declared.
    pub source_text: &'static str,
    /// The `regex` crate's message.
    pub reason: String,
}

impl Pattern {
    /// A pattern for `source`; compiled on first use.
    pub const fn new(source: &'static str) -> Self {
        Pattern { source, compiled: OnceLock::new() }
    }

    /// The pattern as declared.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// Parse without compiling (what start-up checks).
    pub(crate) fn check(&self) -> Result<(), PatternError> {
        trails_pattern::parses(self.source).map_err(|reason| PatternError { source_text: self.source, reason })
    }

    /// Compile now (idempotent), reporting a failure instead of hiding it.
    pub(crate) fn compile(&self) -> Result<&Regex, PatternError> {
        self.compiled
            .get_or_init(|| Regex::new(&trails_pattern::to_rust(self.source)))
            .as_ref()
            .map_err(|e| PatternError { source_text: self.source, reason: e.to_string() })
    }

    pub(crate) fn is_match(&self, text: &str) -> bool {
        match self.compile() {
            Ok(regex) => regex.is_match(text),
            // Unreachable in a server built by `App` (the macro compiled this pattern, and the
            // registry parsed it again at start-up); elsewhere it is loud: the handler's call
            // fails as an internal error.
            Err(error) => panic!("{error}"),
        }
    }
}

/// Parse every linked pattern; the first failure stops start-up.
pub(crate) fn check_all() -> Result<(), PatternError> {
    PATTERNS.iter().try_for_each(|pattern| pattern.check())
}

/// The rules of one object: its fields, in declaration order.
pub struct ObjectRules {
    /// One rule per own field.
    pub fields: &'static [FieldRule],
    /// The rules of the shape this one `extends` (at most one; a slice keeps the table static).
    pub parents: &'static [&'static ObjectRules],
}

/// The empty rule table (stand-in impls of a declaration that failed to compile).
pub static NO_RULES: ObjectRules = ObjectRules { fields: &[], parents: &[] };

impl ObjectRules {
    /// Visit every field rule, inherited ones first (no allocation: this runs per call).
    pub(crate) fn for_each_field(&self, visit: &mut impl FnMut(&'static FieldRule)) {
        for parent in self.parents {
            parent.for_each_field(visit);
        }
        self.fields.iter().for_each(visit);
    }
}

/// `parent` then `own`, as one array: a child's `FIELD_NAMES`, built at compile time.
pub const fn concat_names<const N: usize>(parent: &[&'static str], own: &[&'static str]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < parent.len() {
        out[i] = parent[i];
        i += 1;
    }
    let mut j = 0;
    while j < own.len() {
        out[i + j] = own[j];
        j += 1;
    }
    out
}

/// Whether `names` holds `name` (usable in the const assertions generated code makes).
pub const fn contains_name(names: &[&str], name: &str) -> bool {
    let mut i = 0;
    while i < names.len() {
        let (a, b) = (names[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// Whether field `field` of `rules` (inherited ones included) may ever hold the string `value`:
/// false only when the field is a string whose declared `one_of` leaves `value` out. A
/// precondition comparing a field with such a value could never hold, so the macros check its
/// values with this at build time.
pub const fn may_hold(rules: &ObjectRules, field: &str, value: &str) -> bool {
    let mut p = 0;
    while p < rules.parents.len() {
        if !may_hold(rules.parents[p], field, value) {
            return false;
        }
        p += 1;
    }
    let mut i = 0;
    while i < rules.fields.len() {
        let rule = &rules.fields[i];
        if contains_name(&[rule.name], field) {
            if let ItemRule::String(StringRule { one_of, .. }) = &rule.item {
                return one_of.is_empty() || contains_name(one_of, value);
            }
            return true;
        }
        i += 1;
    }
    true
}

/// `text` when `probe` is non-empty: lets a child's schema put separators around a parent's
/// members at compile time (`concatcp!` cannot branch).
pub const fn if_nonempty(probe: &str, text: &'static str) -> &'static str {
    if probe.is_empty() {
        ""
    } else {
        text
    }
}

/// One field: its wire name, whether it must be present, and what its value must be.
pub struct FieldRule {
    /// The property name.
    pub name: &'static str,
    /// Absent or `null` is a `required` failure.
    pub required: bool,
    /// `Some` when the field is a `Vec<T>`: the bounds on the array; `item` then applies per item.
    pub array: Option<ArrayRule>,
    /// The rule for the value (or for each item of a list).
    pub item: ItemRule,
}

/// Bounds on a list field.
pub struct ArrayRule {
    /// `min_count`
    pub min_items: Option<u64>,
    /// `max_count`
    pub max_items: Option<u64>,
    /// No two items equal (`uniqueItems`: a node type's list, a set in the graph).
    pub unique_items: bool,
}

/// What one value must be.
pub enum ItemRule {
    /// A string with optional bounds.
    String(StringRule),
    /// An integer (JSON number with no fraction).
    Integer(IntegerRule),
    /// Any JSON number.
    Number(NumberRule),
    /// `true` or `false`.
    Boolean,
    /// A `Ref<T>`: an absolute IRI string.
    Iri,
    /// An RFC 3339 timestamp.
    DateTime,
    /// Another shape, checked by its own validator.
    Nested(NestedValidator),
}

/// Constraints on a string (lengths in Unicode code points, as JSON Schema counts).
pub struct StringRule {
    /// `min_length`
    pub min_length: Option<u64>,
    /// `max_length`
    pub max_length: Option<u64>,
    /// `pattern`
    pub pattern: Option<&'static Pattern>,
    /// `one_of` (empty: any)
    pub one_of: &'static [&'static str],
}

/// Constraints on an integer.
pub struct IntegerRule {
    /// Declared `min_value`, or the bound of the Rust type (`0` for `u32`).
    pub min: Option<i128>,
    /// Declared `max_value`, or the bound of the Rust type.
    pub max: Option<i128>,
    /// `one_of` (empty: any)
    pub one_of: &'static [i128],
}

/// Constraints on a float.
pub struct NumberRule {
    /// `min_value`
    pub min: Option<f64>,
    /// `max_value`
    pub max: Option<f64>,
    /// `one_of` (empty: any)
    pub one_of: &'static [f64],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_that_does_not_compile_is_reported_not_hidden() {
        let broken = Pattern::new("(unclosed");
        let error = broken.check().unwrap_err();
        assert_eq!(error.source_text, "(unclosed");
        assert_eq!(broken.compile().map(drop).unwrap_err().source_text, "(unclosed");
        assert!(error.to_string().contains("does not compile at run time"), "{error}");
        let matched = std::panic::catch_unwind(|| broken.is_match("anything"));
        assert!(matched.is_err(), "matching with a broken pattern fails loudly instead of matching nothing");
        assert!(Pattern::new(r"^REQ-\d+$").is_match("REQ-12"));
    }

    #[test]
    fn start_up_parses_without_building_an_automaton() {
        let iri = Pattern::new(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\x22{}|\\^`]{1,2000}$");
        iri.check().unwrap();
        assert!(iri.compiled.get().is_none(), "the check compiled the pattern");
        assert!(iri.is_match("https://example.com/a") && !iri.is_match("https://example.com/a b"));
        assert!(iri.compiled.get().is_some());
    }
}
