//! Attribute arguments: `key = value`, bare flags and `key(…)` lists, parsed once into [`Arg`]s
//! with the key's span kept for diagnostics.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, Lit, LitStr, Meta, Token, UnOp};

use crate::diag::Diagnostics;

/// What follows a key.
pub enum ArgValue {
    /// `key`
    Flag,
    /// `key = expr`
    Value(Expr),
    /// `key(…)`
    List(Vec<Arg>),
}

/// One `key`, `key = value` or `key(…)` of an attribute.
pub struct Arg {
    /// The key as written.
    pub key: String,
    /// Where the key is.
    pub key_span: Span,
    /// What follows it.
    pub value: ArgValue,
    /// Span of the whole `key = value` for errors about the pair.
    pub span: Span,
}

impl Arg {
    /// The value span, or the key's for flags and lists.
    pub fn value_span(&self) -> Span {
        match &self.value {
            ArgValue::Value(expr) => expr.span(),
            _ => self.span,
        }
    }
}

/// Parse `a = 1, b, c(d = 2)`. Syntax errors are pushed and parsing yields what it could.
pub fn parse_args(tokens: TokenStream, diags: &mut Diagnostics) -> Vec<Arg> {
    match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(metas) => metas.into_iter().filter_map(|meta| arg_of(meta, diags)).collect(),
        Err(error) => {
            diags.push(error);
            Vec::new()
        }
    }
}

fn arg_of(meta: Meta, diags: &mut Diagnostics) -> Option<Arg> {
    let span = meta.span();
    let path = meta.path();
    let Some(ident) = path.get_ident() else {
        diags.error_spanned(path, "expected a single key such as `min_length`, not a path");
        return None;
    };
    let key = ident.to_string();
    let key_span = ident.span();
    let value = match meta {
        Meta::Path(_) => ArgValue::Flag,
        Meta::NameValue(pair) => ArgValue::Value(pair.value),
        Meta::List(list) => ArgValue::List(parse_args(list.tokens, diags)),
    };
    Some(Arg { key, key_span, value, span })
}

/// The keys one attribute (or one nested list such as `cost(…)`) accepts: a single table that
/// drives both parsing (each name maps to a variant the parser must `match` exhaustively) and the
/// "did you mean" suggestion, so a listed key cannot be silently ignored.
pub struct Keys<K: 'static> {
    /// What the keys belong to, for messages (`predicate`, `capability`, `cost`, …).
    pub what: &'static str,
    /// What one is called in messages: `key`, or `kind` where each names a kind (preconditions).
    pub item: &'static str,
    /// Accepted spellings and what each means; two spellings may mean the same key.
    pub table: &'static [(&'static str, K)],
}

impl<K: Copy + PartialEq> Keys<K> {
    fn names(&self) -> Vec<&'static str> {
        self.table.iter().map(|(name, _)| *name).collect()
    }

    /// Each argument with its key. Unknown keys (with the closest suggestion) and keys given
    /// twice (in any spelling) are reported and left out.
    pub fn resolve<'a>(&self, args: &'a [Arg], diags: &mut Diagnostics) -> Vec<(K, &'a Arg)> {
        let names = self.names();
        let mut resolved: Vec<(K, &'a Arg)> = Vec::new();
        for arg in args {
            let Some((_, key)) = self.table.iter().find(|(name, _)| *name == arg.key) else {
                let mut message = format!("unknown {} {} `{}`", self.what, self.item, arg.key);
                if let Some((vocabulary, ours)) = foreign_name(&arg.key).filter(|(_, ours)| names.contains(ours)) {
                    message.push_str(&format!("; {vocabulary}'s `{}` is `{ours}` here.", arg.key));
                } else if let Some(best) = closest(&arg.key, &names) {
                    message.push_str(&format!("; did you mean `{best}`?"));
                } else {
                    message.push('.');
                }
                message.push_str(&format!(" Valid {}s: {}", self.item, names.join(", ")));
                diags.error_at(arg.key_span, message);
                continue;
            };
            if let Some((_, first)) = resolved.iter().find(|(seen, _)| seen == key) {
                let also = if first.key == arg.key { String::new() } else { format!(" (as `{}`)", first.key) };
                diags.error_at(arg.key_span, format!("`{}` is given more than once{also}; keep one", arg.key));
                continue;
            }
            resolved.push((*key, arg));
        }
        resolved
    }
}

/// The argument spelled `key`, if given.
pub fn find<'a>(args: &'a [Arg], key: &str) -> Option<&'a Arg> {
    args.iter().find(|arg| arg.key == key)
}

/// A literal value, read under the expectations of whoever asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// A string literal.
    Str(String),
    /// An integer literal (sign included).
    Int(i128),
    /// A float literal (sign included).
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
}

impl Literal {
    /// "a string", "an integer", … for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Literal::Str(_) => "a string",
            Literal::Int(_) => "an integer",
            Literal::Float(_) => "a float",
            Literal::Bool(_) => "a boolean",
        }
    }
}

/// Read a literal expression, including a negated number (`-5`).
pub fn literal(expr: &Expr) -> Option<Literal> {
    match expr {
        Expr::Lit(ExprLit { lit, .. }) => match lit {
            Lit::Str(s) => Some(Literal::Str(s.value())),
            Lit::Int(i) => i.base10_parse::<i128>().ok().map(Literal::Int),
            Lit::Float(f) => f.base10_parse::<f64>().ok().map(Literal::Float),
            Lit::Bool(b) => Some(Literal::Bool(b.value)),
            _ => None,
        },
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr, .. }) => match literal(expr)? {
            Literal::Int(i) => Some(Literal::Int(-i)),
            Literal::Float(f) => Some(Literal::Float(-f)),
            _ => None,
        },
        Expr::Group(group) => literal(&group.expr),
        _ => None,
    }
}

/// The value of `key = value`, or an error that shows `key = example`.
pub fn expect_value<'a>(arg: &'a Arg, example: &str, diags: &mut Diagnostics) -> Option<&'a Expr> {
    match &arg.value {
        ArgValue::Value(expr) => Some(expr),
        _ => {
            diags.error_at(arg.span, format!("`{}` needs a value: `{} = {example}`", arg.key, arg.key));
            None
        }
    }
}

/// A string literal value, or an error that shows `key = example`.
pub fn expect_str(arg: &Arg, example: &str, diags: &mut Diagnostics) -> Option<LitStr> {
    let expr = expect_value(arg, example, diags)?;
    match expr {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.clone()),
        other => {
            diags.error_spanned(other, format!("`{}` takes a string literal: `{} = {example}`", arg.key, arg.key));
            None
        }
    }
}

/// A non-negative integer (`min_length = 3`).
pub fn expect_count(arg: &Arg, diags: &mut Diagnostics) -> Option<u64> {
    let expr = expect_value(arg, "3", diags)?;
    match literal(expr) {
        Some(Literal::Int(n)) if n >= 0 && n <= u64::MAX as i128 => Some(n as u64),
        Some(Literal::Int(n)) => {
            diags.error_spanned(expr, format!("`{}` must be zero or more, got {n}", arg.key));
            None
        }
        _ => {
            diags.error_spanned(
                expr,
                format!("`{}` takes a non-negative integer literal, e.g. `{} = 3`", arg.key, arg.key),
            );
            None
        }
    }
}

/// `key` alone or `key = true|false`.
pub fn expect_flag(arg: &Arg, diags: &mut Diagnostics) -> bool {
    match &arg.value {
        ArgValue::Flag => true,
        ArgValue::Value(expr) => match literal(expr) {
            Some(Literal::Bool(b)) => b,
            _ => {
                diags.error_spanned(
                    expr,
                    format!("`{}` is a flag: write `{}` or `{} = false`", arg.key, arg.key, arg.key),
                );
                false
            }
        },
        ArgValue::List(_) => {
            diags.error_at(arg.span, format!("`{}` is a flag: write `{}` or `{} = false`", arg.key, arg.key, arg.key));
            false
        }
    }
}

/// `key = ["a", "b"]`: the string literals with their spans.
pub fn expect_str_list(arg: &Arg, diags: &mut Diagnostics) -> Vec<LitStr> {
    let example = "[\"a\", \"b\"]";
    let Some(expr) = expect_value(arg, example, diags) else { return Vec::new() };
    let items: Vec<&Expr> = match expr {
        Expr::Array(array) => array.elems.iter().collect(),
        Expr::Lit(ExprLit { lit: Lit::Str(_), .. }) => vec![expr],
        other => {
            diags.error_spanned(other, format!("`{}` takes a list of strings: `{} = {example}`", arg.key, arg.key));
            return Vec::new();
        }
    };
    items
        .into_iter()
        .filter_map(|item| match item {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.clone()),
            other => {
                diags.error_spanned(other, format!("`{}` items must be string literals", arg.key));
                None
            }
        })
        .collect()
}

/// `key = [lit, lit]` of any literal kind, each with its expression for spans.
pub fn expect_literal_list<'a>(arg: &'a Arg, diags: &mut Diagnostics) -> Vec<(Literal, &'a Expr)> {
    let Some(expr) = expect_value(arg, "[\"a\", \"b\"]", diags) else { return Vec::new() };
    let Expr::Array(array) = expr else {
        diags.error_spanned(
            expr,
            format!("`{}` takes a list literal: `{} = [\"a\", \"b\"]` or `{} = [1, 2]`", arg.key, arg.key, arg.key),
        );
        return Vec::new();
    };
    if array.elems.is_empty() {
        diags.error_spanned(expr, format!("`{}` needs at least one value", arg.key));
    }
    array
        .elems
        .iter()
        .filter_map(|item| match literal(item) {
            Some(value) => Some((value, item)),
            None => {
                diags.error_spanned(item, format!("`{}` items must be literals", arg.key));
                None
            }
        })
        .collect()
}

/// Doc comments (`///`) joined into one description, trimmed.
pub fn doc_comment(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(pair) => match &pair.value {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines.iter().map(|l| l.strip_prefix(' ').unwrap_or(l)).collect::<Vec<_>>().join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// What JSON Schema or SHACL call a constraint that has another name here: authors write the
/// vocabulary they know (`minimum`, `maxLength`, `enum`), too far in spelling for "did you mean".
fn foreign_name(key: &str) -> Option<(&'static str, &'static str)> {
    let json_schema = |ours| Some(("JSON Schema", ours));
    let shacl = |ours| Some(("SHACL", ours));
    match key {
        "minimum" => json_schema("min_value"),
        "maximum" => json_schema("max_value"),
        "minLength" => json_schema("min_length"),
        "maxLength" => json_schema("max_length"),
        "minItems" => json_schema("min_count"),
        "maxItems" => json_schema("max_count"),
        "enum" => json_schema("one_of"),
        "minInclusive" => shacl("min_value"),
        "maxInclusive" => shacl("max_value"),
        "minCount" => shacl("min_count"),
        "maxCount" => shacl("max_count"),
        _ => None,
    }
}

/// The accepted key nearest to a misspelt one, if it is near enough to be a likely typo.
pub(crate) fn closest<'a>(key: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let near = allowed
        .iter()
        .map(|candidate| (strsim::damerau_levenshtein(key, candidate), *candidate))
        .filter(|(distance, candidate)| *distance <= 3.max(candidate.len() / 3))
        .min()
        .map(|(_, candidate)| candidate);
    // A longer or shorter form of a key (`confirmation` for `confirm`) is what was meant too.
    near.or_else(|| {
        let stem = |candidate: &&&str| {
            key.len().min(candidate.len()) >= 4 && (key.starts_with(**candidate) || candidate.starts_with(key))
        };
        allowed.iter().filter(stem).max_by_key(|candidate| candidate.len()).copied()
    })
}
