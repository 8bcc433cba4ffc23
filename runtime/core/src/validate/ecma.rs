//! A `pattern` means what ECMA-262 says it means — JSON Schema's regex dialect, what Ajv and
//! every JavaScript client run (with the `u` flag) — not what Rust's `regex` says. The macro
//! already refuses syntax outside the dialects' common ground; what remains are escapes both
//! accept with different meanings, which this rewrites before `regex` compiles a pattern (the
//! published schema keeps the pattern as declared):
//!
//! | in the pattern | ECMA-262 | `regex` | compiled as |
//! |---|---|---|---|
//! | `\d` `\D` | ASCII digits | Unicode digits (`١٢`, `１２`) | `[0-9]`, `[^0-9]` |
//! | `\w` `\W` | `[0-9A-Za-z_]` | Unicode word characters | that class, negated for `\W` |
//! | `\b` `\B` | between `\w` and not | Unicode word boundary | `(?-u:\b)`, `(?-u:\B)` |
//! | `\s` `\S` | a fixed list (with U+FEFF, without U+0085) | Unicode `White_Space` | the ECMA list |
//! | `.` | anything but `\n`, `\r`, U+2028, U+2029 | anything but `\n` | that class |
//!
//! Inside a bracketed class the replacement is a nested class (`[a\d]` → `[a[0-9]]`), which
//! `regex` accepts and means the union.

use regex_syntax::ast::{self, AssertionKind, Ast, ClassPerl, ClassPerlKind, ClassSetItem, Span, Visitor};

/// ECMA-262 `\s`: WhiteSpace (TAB, VT, FF, ZWNBSP, every `Zs`) and LineTerminator.
const ECMA_SPACE: &str =
    r"\t\n\x0B\x0C\r \xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const ECMA_WORD: &str = "0-9A-Za-z_";

/// `source` rewritten so that `regex` matches exactly what ECMA-262 (with the `u` flag) matches.
/// A pattern that does not parse comes back unchanged, for `regex` to report.
pub(crate) fn to_rust(source: &str) -> String {
    let Ok(tree) = ast::parse::Parser::new().parse(source) else { return source.to_owned() };
    let Ok(mut edits) = ast::visit(&tree, Edits::default());
    edits.sort_by_key(|(span, _)| span.start.offset);
    let mut out = String::with_capacity(source.len() + 16 * edits.len());
    let mut at = 0;
    for (span, replacement) in edits {
        out.push_str(&source[at..span.start.offset]);
        out.push_str(&replacement);
        at = span.end.offset;
    }
    out.push_str(&source[at..]);
    out
}

#[derive(Default)]
struct Edits(Vec<(Span, String)>);

fn perl(class: &ClassPerl) -> (Span, String) {
    let (set, negated) = match class.kind {
        ClassPerlKind::Digit => ("0-9", class.negated),
        ClassPerlKind::Word => (ECMA_WORD, class.negated),
        ClassPerlKind::Space => (ECMA_SPACE, class.negated),
    };
    (class.span, format!("[{}{set}]", if negated { "^" } else { "" }))
}

impl Visitor for Edits {
    type Output = Vec<(Span, String)>;
    type Err = std::convert::Infallible;

    fn finish(self) -> Result<Self::Output, Self::Err> {
        Ok(self.0)
    }

    fn visit_pre(&mut self, node: &Ast) -> Result<(), Self::Err> {
        match node {
            Ast::ClassPerl(class) => self.0.push(perl(class)),
            Ast::Dot(span) => self.0.push((**span, r"[^\n\r\x{2028}\x{2029}]".to_owned())),
            Ast::Assertion(assertion) => match assertion.kind {
                AssertionKind::WordBoundary => self.0.push((assertion.span, r"(?-u:\b)".to_owned())),
                AssertionKind::NotWordBoundary => self.0.push((assertion.span, r"(?-u:\B)".to_owned())),
                _ => {}
            },
            _ => {}
        }
        Ok(())
    }

    fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> Result<(), Self::Err> {
        if let ClassSetItem::Perl(class) = item {
            self.0.push(perl(class));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::to_rust;

    fn matches(pattern: &str, text: &str) -> bool {
        regex::Regex::new(&to_rust(pattern)).unwrap().is_match(text)
    }

    #[test]
    fn escapes_mean_what_they_mean_in_ecma_262() {
        let cases: &[(&str, &str, bool)] = &[
            (r"^REQ-\d+$", "REQ-12", true),
            (r"^REQ-\d+$", "REQ-١٢", false),
            (r"^REQ-\d+$", "REQ-１２", false),
            (r"^[\d-]+$", "1-٢", false),
            (r"^[^\d]+$", "٢", true),
            (r"^\D+$", "٢", true),
            (r"^\w+$", "abc_09", true),
            (r"^\w+$", "é", false),
            (r"^\W$", "é", true),
            (r"\bé", " é", false),
            (r"\bé", "xé", true),
            (r"a\b", "aé", true),
            (r"a\B", "aé", false),
            (r"^\s$", "\u{FEFF}", true),
            (r"^\s$", "\u{85}", false),
            (r"^\S$", "\u{85}", true),
            (r"^\s$", "\u{3000}", true),
            (r"^.$", "\r", false),
            (r"^.$", "\u{2028}", false),
            (r"^.$", "é", true),
            (r"^[.]$", "\r", false),
            (r"^[.]$", ".", true),
            (r"^\.$", "x", false),
        ];
        for (pattern, text, expected) in cases {
            assert_eq!(matches(pattern, text), *expected, "{pattern} on {text:?} (compiled as {})", to_rust(pattern));
        }
    }

    #[test]
    fn other_syntax_is_left_as_written() {
        for same in [r"^[a-z][a-z0-9-]{0,62}$", r"(?<year>[0-9]{4})", r"^\p{L}+$", r"\\d", r"[\\]d"] {
            assert_eq!(to_rust(same), same);
        }
    }
}
