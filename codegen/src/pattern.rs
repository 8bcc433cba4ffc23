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

#[cfg(test)]
mod tests {
    use super::check_pattern;

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
