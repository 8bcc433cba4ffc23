//! `pattern` predicates must mean the same thing to the server (Rust's `regex`) and to the
//! client (JSON Schema's ECMA-262 dialect). We accept a regex only if `regex` compiles it and it
//! stays inside the syntax the two dialects share.

use regex_syntax::ast::{self, AssertionKind, Ast, ClassSetBinaryOp, ClassSetItem, GroupKind, Visitor};

/// `Ok` or the plain-language reason a pattern is refused, with what to write instead.
pub fn check_pattern(source: &str) -> Result<(), String> {
    let tree = match ast::parse::Parser::new().parse(source) {
        Ok(tree) => tree,
        Err(error) => return Err(parse_failure(&error)),
    };
    ast::visit(&tree, Portability)?;
    regex::Regex::new(source).map(|_| ()).map_err(|error| format!("pattern does not compile: {error}"))
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

/// `source` (a pattern [`check_pattern`] accepts) as SHACL's `sh:pattern` reads it (XPath
/// regular expressions): `\d`, `\w`, `\s` and `.` spelled out as the ASCII-or-listed classes
/// ECMA-262 gives them — in XPath (and in Python's `re`) they are Unicode-wide, so `REQ-١٢`
/// would match `^REQ-\d+$` there and not here. Characters outside ASCII are written as
/// themselves: XPath has no `\u` escape.
pub fn to_xpath(source: &str) -> String {
    let Ok(tree) = ast::parse::Parser::new().parse(source) else { return source.to_owned() };
    let Ok(mut edits) = ast::visit(&tree, XpathEdits::default());
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

/// ECMA-262's `\s`, as XPath class members.
const XPATH_SPACE: &str =
    "\\t\\n\\r\u{b}\u{c} \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}";

#[derive(Default)]
struct XpathEdits(Vec<(ast::Span, String)>);

fn xpath_set(class: &ast::ClassPerl) -> &'static str {
    match class.kind {
        ast::ClassPerlKind::Digit => "0-9",
        ast::ClassPerlKind::Word => "0-9A-Za-z_",
        ast::ClassPerlKind::Space => XPATH_SPACE,
    }
}

impl Visitor for XpathEdits {
    type Output = Vec<(ast::Span, String)>;
    type Err = std::convert::Infallible;

    fn finish(self) -> Result<Self::Output, Self::Err> {
        Ok(self.0)
    }

    fn visit_pre(&mut self, node: &Ast) -> Result<(), Self::Err> {
        match node {
            Ast::ClassPerl(class) => {
                let negation = if class.negated { "^" } else { "" };
                self.0.push((class.span, format!("[{negation}{}]", xpath_set(class))));
            }
            Ast::Dot(span) => self.0.push((**span, "[^\\n\\r\u{2028}\u{2029}]".to_owned())),
            _ => {}
        }
        Ok(())
    }

    fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> Result<(), Self::Err> {
        // Inside brackets the members go in as they are (XPath has no nested classes); a negated
        // one (`[\D]`) has no such spelling and stays as written.
        if let ClassSetItem::Perl(class) = item {
            if !class.negated {
                self.0.push((class.span, xpath_set(class).to_owned()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{check_pattern, to_xpath, XPATH_SPACE};

    #[test]
    fn xpath_patterns_spell_out_the_ecma_classes() {
        assert_eq!(to_xpath(r"^REQ-\d+$"), "^REQ-[0-9]+$");
        assert_eq!(to_xpath(r"^\w\D$"), "^[0-9A-Za-z_][^0-9]$");
        assert_eq!(to_xpath(r"^[^@\s]+@x$"), format!("^[^@{XPATH_SPACE}]+@x$"));
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
