//! What the compiler (the macros, `trails-codegen`) and the runtime must mean alike, defined once
//! in a crate both depend on: the names they share ([`Scope`], [`DisplayRole`],
//! [`CanonicalField`], [`TaskSupport`]) and what a `pattern` means.
//!
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
//!
//! The macros [`check`] a pattern first: only syntax the two dialects share (no look-around, no
//! inline flags, no POSIX classes, …), and it must compile. SHACL's `sh:pattern` is XPath's
//! dialect, where the same escapes are Unicode-wide too: [`to_xpath`] spells them out likewise.

mod vocab;

pub use vocab::{
    graph_iri, CanonicalField, DisplayRole, Reasoning, Scope, TaskSupport, UnknownScope, ASSURANCE_LEVELS,
    DEFAULT_KG_BASE,
};

use regex_syntax::ast::{
    self, AssertionKind, Ast, ClassPerl, ClassPerlKind, ClassSetBinaryOp, ClassSetItem, GroupKind, Span, Visitor,
};

/// ECMA-262's `\s`: WhiteSpace (TAB, VT, FF, ZWNBSP, every `Zs`) and LineTerminator, as
/// characters and ranges.
const SPACE: &[(char, char)] = &[
    ('\t', '\t'),
    ('\n', '\n'),
    ('\r', '\r'),
    ('\u{b}', '\u{b}'),
    ('\u{c}', '\u{c}'),
    (' ', ' '),
    ('\u{a0}', '\u{a0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200a}'),
    ('\u{2028}', '\u{2028}'),
    ('\u{2029}', '\u{2029}'),
    ('\u{202f}', '\u{202f}'),
    ('\u{205f}', '\u{205f}'),
    ('\u{3000}', '\u{3000}'),
    ('\u{feff}', '\u{feff}'),
];
/// ECMA-262's LineTerminator: what `.` does not match.
const LINE_TERMINATORS: &[(char, char)] =
    &[('\n', '\n'), ('\r', '\r'), ('\u{2028}', '\u{2028}'), ('\u{2029}', '\u{2029}')];
const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('a', 'z'), ('_', '_')];
const DIGIT: &[(char, char)] = &[('0', '9')];

/// The regex dialect a rewrite writes.
#[derive(Clone, Copy)]
enum Dialect {
    /// Rust's `regex`: every other character as an escape.
    Rust,
    /// XPath (SHACL): `\t`, `\n` and `\r` as escapes, every other character as itself (XPath has
    /// no `\u` escape).
    Xpath,
}

impl Dialect {
    /// The members of a class, as this dialect writes them inside brackets.
    fn members(self, set: &[(char, char)]) -> String {
        let one = |c: char| match (c, self) {
            ('\t', _) => "\\t".to_owned(),
            ('\n', _) => "\\n".to_owned(),
            ('\r', _) => "\\r".to_owned(),
            (c, _) if c.is_ascii_alphanumeric() || c == '_' => c.to_string(),
            (c, Dialect::Rust) => format!("\\x{{{:X}}}", c as u32),
            (c, Dialect::Xpath) => c.to_string(),
        };
        set.iter()
            .map(|&(low, high)| if low == high { one(low) } else { format!("{}-{}", one(low), one(high)) })
            .collect()
    }

    fn perl_set(class: &ClassPerl) -> &'static [(char, char)] {
        match class.kind {
            ClassPerlKind::Digit => DIGIT,
            ClassPerlKind::Word => WORD,
            ClassPerlKind::Space => SPACE,
        }
    }

    /// `\d`, `\w`, `\s` (or negated) as a bracketed class.
    fn perl(self, class: &ClassPerl) -> String {
        format!("[{}{}]", if class.negated { "^" } else { "" }, self.members(Dialect::perl_set(class)))
    }
}

/// `source` rewritten so that `regex` matches exactly what ECMA-262 (with the `u` flag) matches.
/// A pattern that does not parse comes back unchanged, for `regex` to report.
pub fn to_rust(source: &str) -> String {
    rewrite(source, Dialect::Rust)
}

/// `source` (a pattern [`check`] accepts) as SHACL's `sh:pattern` reads it (XPath regular
/// expressions): `\d`, `\w`, `\s` and `.` spelled out as the ASCII-or-listed classes ECMA-262
/// gives them — in XPath (and in Python's `re`) they are Unicode-wide, so `REQ-١٢` would match
/// `^REQ-\d+$` there and not here.
pub fn to_xpath(source: &str) -> String {
    rewrite(source, Dialect::Xpath)
}

fn rewrite(source: &str, dialect: Dialect) -> String {
    let Ok(tree) = ast::parse::Parser::new().parse(source) else { return source.to_owned() };
    let Ok(mut edits) = ast::visit(&tree, Edits { dialect, edits: Vec::new() });
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

/// The replacements a rewrite makes, by span.
struct Edits {
    dialect: Dialect,
    edits: Vec<(Span, String)>,
}

impl Visitor for Edits {
    type Output = Vec<(Span, String)>;
    type Err = std::convert::Infallible;

    fn finish(self) -> Result<Self::Output, Self::Err> {
        Ok(self.edits)
    }

    fn visit_pre(&mut self, node: &Ast) -> Result<(), Self::Err> {
        match (node, self.dialect) {
            (Ast::ClassPerl(class), dialect) => self.edits.push((class.span, dialect.perl(class))),
            (Ast::Dot(span), dialect) => {
                self.edits.push((**span, format!("[^{}]", dialect.members(LINE_TERMINATORS))));
            }
            // `regex`'s `\b` is Unicode-aware; ECMA-262's is ASCII (XPath has no `\b`).
            (Ast::Assertion(assertion), Dialect::Rust) => match assertion.kind {
                AssertionKind::WordBoundary => self.edits.push((assertion.span, r"(?-u:\b)".to_owned())),
                AssertionKind::NotWordBoundary => self.edits.push((assertion.span, r"(?-u:\B)".to_owned())),
                _ => {}
            },
            _ => {}
        }
        Ok(())
    }

    fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> Result<(), Self::Err> {
        let ClassSetItem::Perl(class) = item else { return Ok(()) };
        match self.dialect {
            // A nested class, which `regex` reads as the union (`[a\d]` → `[a[0-9]]`).
            Dialect::Rust => self.edits.push((class.span, self.dialect.perl(class))),
            // XPath has no nested classes: the members go in as they are; a negated one (`[\D]`)
            // has no such spelling and stays as written.
            Dialect::Xpath if !class.negated => {
                self.edits.push((class.span, self.dialect.members(Dialect::perl_set(class))));
            }
            Dialect::Xpath => {}
        }
        Ok(())
    }
}

/// Whether `regex` in this binary reads the rewrite of `source` as the macro's did: its syntax
/// tree and the translation to `regex`'s IR, without building an automaton. A server runs this at
/// start-up and compiles a pattern on first use: building the automata of every pattern up front
/// cost most of the start-up time and 10 MiB of memory (a bounded repetition such as
/// `[^\s]{1,2000}` unrolls into two thousand copies of its class), for patterns that were already
/// compiled once at build time.
pub fn parses(source: &str) -> Result<(), String> {
    regex_syntax::Parser::new().parse(&to_rust(source)).map(drop).map_err(|error| error.to_string())
}

/// `Ok` or the plain-language reason a pattern is refused, with what to write instead.
pub fn check(source: &str) -> Result<(), String> {
    let tree = match ast::parse::Parser::new().parse(source) {
        Ok(tree) => tree,
        Err(error) => return Err(parse_failure(&error)),
    };
    ast::visit(&tree, Portability)?;
    // What the server compiles is the rewrite: it must compile too. The pattern as written first,
    // so an error quotes what the author wrote.
    regex::Regex::new(source)
        .and_then(|_| regex::Regex::new(&to_rust(source)))
        .map(|_| ())
        .map_err(|error| format!("pattern does not compile: {error}"))
}

fn parse_failure(error: &ast::Error) -> String {
    match error.kind() {
        ast::ErrorKind::UnsupportedLookAround => {
            "look-around (`(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)`) is not supported: \
             the server validates with Rust's `regex` crate, which has no look-around, so this constraint could not be \
             enforced. Express it without look-around (a simpler pattern, or split it across fields)"
                .to_owned()
        }
        ast::ErrorKind::UnsupportedBackreference => {
            "backreferences (`\\1`, `\\k<name>`) are not supported: the server \
             validates with Rust's `regex` crate, which has none. Express the constraint without repeating a group"
                .to_owned()
        }
        _ => format!("pattern does not compile: {}", error.kind()),
    }
}

struct Portability;

fn refuse(what: &str, instead: &str) -> Result<(), String> {
    Err(format!("{what} is not part of ECMA-262 regular expressions, which JSON Schema clients use; {instead}"))
}

impl Visitor for Portability {
    type Output = ();
    type Err = String;

    fn finish(self) -> Result<(), String> {
        Ok(())
    }

    fn visit_pre(&mut self, node: &Ast) -> Result<(), String> {
        match node {
            Ast::Flags(_) => refuse("an inline flag group such as `(?i)`", "spell the alternatives out, e.g. `[Aa]`"),
            Ast::Assertion(assertion) => match assertion.kind {
                AssertionKind::StartText => refuse("`\\A`", "use `^`"),
                AssertionKind::EndText => refuse("`\\z`", "use `$`"),
                AssertionKind::StartLine
                | AssertionKind::EndLine
                | AssertionKind::WordBoundary
                | AssertionKind::NotWordBoundary => Ok(()),
                _ => refuse("a special word-boundary assertion (`\\b{start}`, `\\<`, `\\>`)", "use `\\b`"),
            },
            Ast::Group(group) => match &group.kind {
                GroupKind::CaptureName { starts_with_p: true, name } => {
                    refuse("`(?P<name>…)`", &format!("write `(?<{}>…)`", name.name))
                }
                GroupKind::NonCapturing(flags) if !flags.items.is_empty() => {
                    refuse("a flag group such as `(?i:…)`", "spell the alternatives out, e.g. `[Aa]`")
                }
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }

    fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> Result<(), String> {
        match item {
            ClassSetItem::Ascii(_) => refuse("a POSIX class such as `[[:alpha:]]`", "write the range, e.g. `[A-Za-z]`"),
            ClassSetItem::Bracketed(_) => refuse("a nested character class `[a[b]]`", "flatten it into one class"),
            _ => Ok(()),
        }
    }

    fn visit_class_set_binary_op_pre(&mut self, _op: &ClassSetBinaryOp) -> Result<(), String> {
        refuse("a class set operation (`&&`, `--`, `~~`)", "list the characters of the resulting class")
    }
}

#[cfg(test)]
mod rust_tests {
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

#[cfg(test)]
mod check_tests {
    use super::{check as check_pattern, to_xpath};

    #[test]
    fn xpath_patterns_spell_out_the_ecma_classes() {
        assert_eq!(to_xpath(r"^REQ-\d+$"), "^REQ-[0-9]+$");
        assert_eq!(to_xpath(r"^\w\D$"), "^[0-9A-Za-z_][^0-9]$");
        let space =
            "\\t\\n\\r\u{b}\u{c} \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}";
        assert_eq!(to_xpath(r"^[^@\s]+@x$"), format!("^[^@{space}]+@x$"));
        assert_eq!(to_xpath("^a.b$"), "^a[^\\n\\r\u{2028}\u{2029}]b$");
        assert_eq!(to_xpath(r"^[A-Z]{2}$"), r"^[A-Z]{2}$");
    }

    #[test]
    fn portable_patterns_pass() {
        for ok in [r"^REQ-\d+$", r"^[a-z][a-z0-9-]{0,62}$", r"(?<year>\d{4})-\d\d", r"\bword\b", r"^\p{L}+$"] {
            assert_eq!(check_pattern(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn refusals_say_why_and_what_instead() {
        let cases = [
            (r"^(?=.*\d).+$", "look-around"),
            (r"(a)\1", "backreference"),
            (r"\Aabc", "use `^`"),
            (r"abc\z", "use `$`"),
            (r"(?i)abc", "inline flag"),
            (r"(?P<x>a)", "(?<x>…)"),
            (r"[[:alpha:]]", "POSIX"),
            (r"[a-z&&[^aeiou]]", "class set operation"),
            (r"[a[bc]]", "nested character class"),
            (r"(unclosed", "does not compile"),
        ];
        for (pattern, needle) in cases {
            let reason = check_pattern(pattern).expect_err(pattern);
            assert!(reason.contains(needle), "{pattern}: {reason}");
        }
    }
}
