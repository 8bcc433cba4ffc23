//! A field (or named parameter): its type classified, its `#[predicate]` read and checked
//! against that type.

use proc_macro2::Span;
use quote::ToTokens;
use syn::{GenericArgument, PathArguments, Type};

use crate::args::{self, Arg, Keys, Literal};
use crate::diag::Diagnostics;
use crate::ir::{Constraints, Field, FieldType, Num, Role, Scalar, INT_KINDS};
use crate::names;

/// A `#[predicate(…)]` key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PredicateKey {
    Iri,
    MinCount,
    MaxCount,
    Required,
    Many,
    OneOf,
    MinValue,
    MaxValue,
    Pattern,
    MinLength,
    MaxLength,
    Description,
    Role,
    Header,
    Default,
}

/// Every `#[predicate]` key; `min`/`max` are the Python API's spellings of `min_count`/`max_count`.
const PREDICATE_KEYS: Keys<PredicateKey> = Keys {
    what: "predicate",
    item: "key",
    table: &[
        ("iri", PredicateKey::Iri),
        ("min", PredicateKey::MinCount),
        ("min_count", PredicateKey::MinCount),
        ("max", PredicateKey::MaxCount),
        ("max_count", PredicateKey::MaxCount),
        ("required", PredicateKey::Required),
        ("many", PredicateKey::Many),
        ("one_of", PredicateKey::OneOf),
        ("min_value", PredicateKey::MinValue),
        ("max_value", PredicateKey::MaxValue),
        ("pattern", PredicateKey::Pattern),
        ("min_length", PredicateKey::MinLength),
        ("max_length", PredicateKey::MaxLength),
        ("description", PredicateKey::Description),
        ("role", PredicateKey::Role),
        ("header", PredicateKey::Header),
        ("default", PredicateKey::Default),
    ],
};

/// The type's last path segment and its single generic argument, if any.
fn last_segment(ty: &Type) -> Option<(String, Option<&Type>)> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let segment = path.path.segments.last()?;
    let argument = match &segment.arguments {
        PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        }),
        _ => None,
    };
    Some((segment.ident.to_string(), argument))
}

/// The value type under `Option<…>` and `Vec<…>`: what one stored value of the field is.
pub fn value_type(ty: &Type) -> Type {
    match last_segment(ty) {
        Some((name, Some(inner))) if name == "Option" || name == "Vec" => value_type(inner),
        _ => ty.clone(),
    }
}

fn type_text(ty: &Type) -> String {
    ty.to_token_stream().to_string().replace(' ', "")
}

/// Classify a field type syntactically. Types the macro cannot know are assumed to be shapes;
/// if they are not, the `trails::declare::Schema` bound reports it at the type with the fix.
pub fn classify(ty: &Type, diags: &mut Diagnostics) -> Option<FieldType> {
    let (optional, inner) = match last_segment(ty) {
        Some((name, Some(inner))) if name == "Option" => (true, inner),
        _ => (false, ty),
    };
    let (array, item) = match last_segment(inner) {
        Some((name, Some(item))) if name == "Vec" => (true, item),
        _ => (false, inner),
    };
    if let Some((name, _)) = last_segment(item) {
        if name == "Option" || name == "Vec" {
            let hint = if name == "Option" {
                "`Vec<Option<T>>` is not supported: JSON Schema arrays here hold no nulls; use `Vec<T>`"
            } else {
                "nested arrays (`Vec<Vec<T>>`) are not supported; wrap the inner list in a `#[shape]` struct"
            };
            diags.error_spanned(item, hint);
            return None;
        }
    }
    let scalar = scalar_of(item, diags)?;
    Some(FieldType { optional, array, scalar })
}

fn scalar_of(ty: &Type, diags: &mut Diagnostics) -> Option<Scalar> {
    let unsupported = |diags: &mut Diagnostics, why: &str| {
        diags.error_spanned(
            ty,
            format!(
                "unsupported field type `{}`: {why}. Supported: String, bool, integers, f32/f64, trails::DateTime, \
                 trails::Blob (bytes), Option<T>, Vec<T>, Ref<NodeType>, and types annotated with #[shape] or \
                 implementing trails::declare::Schema",
                type_text(ty)
            ),
        );
        None
    };
    let Some((name, argument)) = last_segment(ty) else {
        return unsupported(diags, "references, tuples, arrays and slices have no JSON Schema mapping here");
    };
    match name.as_str() {
        "String" => Some(Scalar::String),
        "bool" => Some(Scalar::Bool),
        "f32" | "f64" => Some(Scalar::Float),
        "DateTime" => Some(Scalar::DateTime),
        "Ref" => match argument {
            Some(target) => Some(Scalar::Ref(target.clone())),
            None => unsupported(diags, "`Ref` needs the node type it points at, e.g. `Ref<Person>`"),
        },
        "i128" | "u128" => unsupported(diags, "JSON numbers cannot carry 128-bit integers; use i64/u64 or a String"),
        "char" | "str" => unsupported(diags, "use `String` (with `max_length = 1` for a single character)"),
        "HashMap" | "BTreeMap" | "IndexMap" => {
            unsupported(diags, "maps have no fixed properties; declare a #[shape] struct with the keys as fields")
        }
        "HashSet" | "BTreeSet" => unsupported(diags, "use `Vec<T>`"),
        "Box" | "Rc" | "Arc" | "Cow" => unsupported(diags, "use the inner type directly"),
        "Value" => unsupported(diags, "untyped JSON has no schema; declare a #[shape] struct"),
        other => match INT_KINDS.iter().find(|kind| kind.name == other) {
            Some(kind) => Some(Scalar::Int(*kind)),
            None => Some(Scalar::Nested(ty.clone())),
        },
    }
}

/// Parse one field: classify `ty`, read every `#[predicate(…)]` in `attrs`, check them.
pub fn parse_field(ident: &syn::Ident, ty: &Type, attrs: &[syn::Attribute], diags: &mut Diagnostics) -> Option<Field> {
    let kind = classify(ty, diags);
    let mut predicate_args: Vec<Arg> = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("predicate")) {
        match &attr.meta {
            syn::Meta::List(list) => predicate_args.extend(args::parse_args(list.tokens.clone(), diags)),
            other => {
                diags.error_spanned(other, "write `#[predicate(key = value, …)]`, e.g. `#[predicate(min_length = 1)]`")
            }
        }
    }
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        diags.error_spanned(
            attr,
            "`#[serde(…)]` on a Trails field would change the wire format behind the generated schema; \
             remove it (field names are the Rust names; use `#[shape(rename_all = …)]` on enums)",
        );
    }
    let predicates = PREDICATE_KEYS.resolve(&predicate_args, diags);
    let kind = kind?;
    let name = ident.to_string().trim_start_matches("r#").to_owned();
    let mut field = Field {
        name,
        ident: ident.clone(),
        rust_type: ty.clone(),
        description: args::doc_comment(attrs),
        required: !kind.optional,
        constraints: Constraints::default(),
        iri: None,
        role: None,
        header: None,
        span: ident.span(),
        ty: kind,
    };
    apply_predicates(&mut field, &predicates, diags);
    check_ranges(&field, &predicate_args, diags);
    check_default(&field, &predicate_args, diags);
    Some(field)
}

fn key_span(args: &[Arg], key: &str) -> Span {
    args::find(args, key).map(Arg::value_span).unwrap_or_else(Span::call_site)
}

fn apply_predicates(field: &mut Field, predicates: &[(PredicateKey, &Arg)], diags: &mut Diagnostics) {
    let scalar = field.ty.scalar.clone();
    let is_string = matches!(scalar, Scalar::String);
    let is_number = matches!(scalar, Scalar::Int(_) | Scalar::Float);
    let type_name = type_text(&field.rust_type);
    let wrong_type = |diags: &mut Diagnostics, arg: &Arg, applies_to: &str, instead: &str| {
        diags.error_at(
            arg.key_span,
            format!(
                "`{}` applies to {applies_to}, but `{}` is `{type_name}` ({}){instead}",
                arg.key,
                field.name,
                scalar.describe()
            ),
        );
    };
    for &(key, arg) in predicates {
        match key {
            PredicateKey::Default => {
                let Some(expr) = args::expect_value(arg, "\"John Doe\"", diags) else { continue };
                if field.ty.array || !(is_string || is_number || matches!(scalar, Scalar::Bool)) {
                    wrong_type(diags, arg, "a string, number or boolean (the value a form starts with)", "");
                    continue;
                }
                let value = match (&scalar, args::literal(expr)) {
                    (Scalar::String, Some(value @ Literal::Str(_))) | (Scalar::Bool, Some(value @ Literal::Bool(_))) => {
                        Some(value)
                    }
                    (Scalar::Int(_) | Scalar::Float, Some(Literal::Int(_) | Literal::Float(_))) => {
                        number_for(&scalar, expr, "default", diags).map(|number| match number {
                            Num::Int(i) => Literal::Int(i),
                            Num::Float(f) => Literal::Float(f),
                        })
                    }
                    (_, value) => {
                        let what = value.map_or_else(|| "not a literal".to_owned(), |value| value.kind().to_owned());
                        diags.error_spanned(
                            expr,
                            format!(
                                "`default` {} is {what}, but `{}` is {}; give a literal of the field's type",
                                expr.to_token_stream(),
                                field.name,
                                scalar.describe()
                            ),
                        );
                        None
                    }
                };
                field.constraints.default = value;
            }
            PredicateKey::Header => {
                if !is_string || field.ty.array {
                    wrong_type(diags, arg, "a `String` argument (an HTTP header carries text)", "");
                    continue;
                }
                if let Some(name) = args::expect_str(arg, "\"Region\"", diags) {
                    let value = name.value();
                    if value.is_empty() || !value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                        diags.error_spanned(
                            &name,
                            format!("header name `{value}` is not one: letters, digits and `-` (it is sent as `Mcp-Param-{value}`)"),
                        );
                    } else {
                        field.header = Some(value);
                    }
                }
            }
            PredicateKey::Description => {
                if let Some(text) = args::expect_str(arg, "\"what this field means\"", diags) {
                    field.description = Some(text.value());
                }
            }
            PredicateKey::Iri => {
                if let Some(iri) = args::expect_str(arg, "\"https://example.org/ns#field\"", diags) {
                    match names::check_iri(&iri.value()) {
                        Ok(()) => field.iri = Some(iri.value()),
                        Err(reason) => diags.error_spanned(&iri, reason),
                    }
                }
            }
            // The Rust type decides optionality and list-ness; these flags may only agree with it.
            PredicateKey::Required => match (args::expect_flag(arg, diags), field.ty.optional) {
                (true, true) => diags.error_at(
                    arg.key_span,
                    format!(
                        "`required` contradicts the `Option` type of `{}`: remove `Option<…>` to make the field required, or drop `required`",
                        field.name
                    ),
                ),
                (false, false) => diags.error_at(
                    arg.key_span,
                    format!(
                        "`required = false` cannot make `{}` optional: its type makes it required; write `Option<{type_name}>` instead",
                        field.name
                    ),
                ),
                _ => {}
            },
            PredicateKey::Many => match (args::expect_flag(arg, diags), field.ty.array) {
                (true, false) => diags.error_at(
                    arg.key_span,
                    format!("`many` needs a list: change the type of `{}` to `Vec<{type_name}>`", field.name),
                ),
                (false, true) => diags.error_at(
                    arg.key_span,
                    format!("`many = false` contradicts the `Vec` type of `{}`: change the type, or drop `many`", field.name),
                ),
                _ => {}
            },
            PredicateKey::MinCount => {
                let Some(count) = args::expect_count(arg, diags) else { continue };
                if field.ty.array {
                    field.constraints.min_items = Some(count);
                } else if field.ty.optional && count >= 1 {
                    diags.error_at(
                        arg.key_span,
                        format!("`{} = {count}` makes `{}` required, which contradicts its `Option` type; remove `Option<…>` or the predicate", arg.key, field.name),
                    );
                } else if count > 1 {
                    diags.error_at(
                        arg.key_span,
                        format!(
                            "`{}` = {count} needs a list: change the type of `{}` to `Vec<…>`",
                            arg.key, field.name
                        ),
                    );
                } else if count == 0 && !field.ty.optional {
                    diags.error_at(
                        arg.key_span,
                        format!(
                            "`{} = 0` would make `{}` optional, but its type makes it required; write `Option<{type_name}>` instead",
                            arg.key, field.name
                        ),
                    );
                }
            }
            PredicateKey::MaxCount => {
                let Some(count) = args::expect_count(arg, diags) else { continue };
                if field.ty.array {
                    field.constraints.max_items = Some(count);
                } else {
                    diags.error_at(
                        arg.key_span,
                        format!("`{}` limits the items of a list, but `{}` is not a `Vec<…>`", arg.key, field.name),
                    );
                }
            }
            PredicateKey::MinLength | PredicateKey::MaxLength => {
                let Some(count) = args::expect_count(arg, diags) else { continue };
                if !is_string {
                    let instead = if is_number { "; use `min_value`/`max_value` for numbers" } else { "" };
                    wrong_type(diags, arg, "strings", instead);
                } else if key == PredicateKey::MinLength {
                    field.constraints.min_length = Some(count);
                } else {
                    field.constraints.max_length = Some(count);
                }
            }
            PredicateKey::Pattern => {
                let Some(pattern) = args::expect_str(arg, "r\"^[A-Z]+$\"", diags) else { continue };
                if !is_string {
                    wrong_type(diags, arg, "strings", "");
                } else {
                    match trails_pattern::check(&pattern.value()) {
                        Ok(()) => field.constraints.pattern = Some(pattern.value()),
                        Err(reason) => diags.error_spanned(&pattern, format!("invalid `pattern`: {reason}")),
                    }
                }
            }
            PredicateKey::MinValue | PredicateKey::MaxValue => {
                let Some(expr) = args::expect_value(arg, "10", diags) else { continue };
                if !is_number {
                    let instead = if is_string { "; use `min_length`/`max_length` for strings" } else { "" };
                    wrong_type(diags, arg, "integers and numbers", instead);
                    continue;
                }
                let Some(number) = number_for(&scalar, expr, &arg.key, diags) else { continue };
                if key == PredicateKey::MinValue {
                    field.constraints.min_value = Some(number);
                } else {
                    field.constraints.max_value = Some(number);
                }
            }
            PredicateKey::Role => {
                let Some(text) = args::expect_str(arg, "\"title\"", diags) else { continue };
                match Role::ALL.iter().find(|(name, _)| *name == text.value()) {
                    None => {
                        let names: Vec<&str> = Role::ALL.iter().map(|(name, _)| *name).collect();
                        let hint = args::closest(&text.value(), &names)
                            .map(|best| format!("did you mean `{best}`? "))
                            .unwrap_or_default();
                        diags.error_spanned(
                            &text,
                            format!("unknown display role `{}`; {hint}Roles: {}", text.value(), names.join(", ")),
                        );
                    }
                    Some(&(_, role)) => match role_misfit(role, field) {
                        Some(problem) => diags.error_spanned(&text, problem),
                        None => field.role = Some((role, text.span())),
                    },
                }
            }
            PredicateKey::OneOf => {
                let literals = args::expect_literal_list(arg, diags);
                if !(is_string || is_number) {
                    wrong_type(diags, arg, "strings and numbers", "");
                    continue;
                }
                for (literal, expr) in literals {
                    match (&scalar, literal) {
                        (Scalar::String, value @ Literal::Str(_)) => field.constraints.one_of.push(value),
                        (Scalar::Int(_) | Scalar::Float, Literal::Int(_) | Literal::Float(_)) => {
                            if let Some(number) = number_for(&scalar, expr, "one_of", diags) {
                                field.constraints.one_of.push(match number {
                                    Num::Int(i) => Literal::Int(i),
                                    Num::Float(f) => Literal::Float(f),
                                });
                            }
                        }
                        (_, value) => diags.error_spanned(
                            expr,
                            format!(
                                "`one_of` value {} is {}, but `{}` is {}; give literals of the field's type",
                                expr.to_token_stream(),
                                value.kind(),
                                field.name,
                                scalar.describe()
                            ),
                        ),
                    }
                }
            }
        }
    }
}

/// Why `field` cannot have `role`, if it cannot: a role names one value of a fitting type, which
/// a list item shows as its label, excerpt, timestamp, … (a nested shape's fit — a status that
/// is an enum — is asked of the type at compile time).
fn role_misfit(role: Role, field: &Field) -> Option<String> {
    let name = role.name();
    if field.ty.array {
        return Some(format!(
            "`role = \"{name}\"` names one value of an instance, but `{}` is a list; give the role to a single-valued field",
            field.name
        ));
    }
    let fits = matches!(
        (role, &field.ty.scalar),
        (Role::Title | Role::Summary | Role::Body | Role::Url, Scalar::String)
            | (Role::Timestamp, Scalar::DateTime)
            | (Role::Identifier, Scalar::String | Scalar::Int(_))
            | (Role::Status, Scalar::String | Scalar::Nested(_))
    );
    let wanted = match role {
        Role::Title | Role::Summary | Role::Body | Role::Url => "a `String`",
        Role::Timestamp => "a `trails::DateTime`",
        Role::Identifier => "a `String` or an integer",
        Role::Status => "a `String` or a `#[shape]` enum",
    };
    (!fits)
        .then(|| format!("`role = \"{name}\"` needs {wanted}, but `{}` is {}", field.name, field.ty.scalar.describe()))
}

/// A numeric literal read under the field's type: integers for integer fields (within the
/// type's range), integers or floats for float fields.
fn number_for(scalar: &Scalar, expr: &syn::Expr, key: &str, diags: &mut Diagnostics) -> Option<Num> {
    match (scalar, args::literal(expr)) {
        (Scalar::Int(kind), Some(Literal::Int(value))) => {
            if value < kind.min || value > kind.max {
                diags.error_spanned(
                    expr,
                    format!(
                        "`{key}` value {value} is outside the range of `{}` ({}..={})",
                        kind.name, kind.min, kind.max
                    ),
                );
                return None;
            }
            Some(Num::Int(value))
        }
        (Scalar::Int(kind), Some(Literal::Float(value))) => {
            diags.error_spanned(
                expr,
                format!("`{key}` value {value} is a float, but the field is `{}`; write an integer", kind.name),
            );
            None
        }
        (Scalar::Float, Some(Literal::Int(value))) => Some(Num::Float(value as f64)),
        (Scalar::Float, Some(Literal::Float(value))) => Some(Num::Float(value)),
        _ => {
            diags.error_spanned(expr, format!("`{key}` takes a number literal"));
            None
        }
    }
}

/// A `default` is a value the field accepts: in its `one_of`, within its bounds and lengths.
fn check_default(field: &Field, args: &[Arg], diags: &mut Diagnostics) {
    let c = &field.constraints;
    let Some(default) = &c.default else { return };
    let shown = crate::schema::literal_json(default);
    let mut refuse = |why: String| {
        diags.error_at(
            key_span(args, "default"),
            format!("`default = {shown}` is not a value `{}` accepts: {why}; give one it does", field.name),
        )
    };
    if !c.one_of.is_empty() && !c.one_of.contains(default) {
        let values: Vec<String> = c.one_of.iter().map(crate::schema::literal_json).collect();
        refuse(format!("it is not one of {}", values.join(", ")));
    }
    let number = match default {
        Literal::Int(i) => Some(*i as f64),
        Literal::Float(f) => Some(*f),
        _ => None,
    };
    if let Some(number) = number {
        let (min, max) = match &field.ty.scalar {
            Scalar::Int(kind) => {
                let (min, max) = c.int_range(kind);
                (Some(min as f64), Some(max as f64))
            }
            _ => (c.min_value.map(Num::as_f64), c.max_value.map(Num::as_f64)),
        };
        if min.is_some_and(|min| number < min) || max.is_some_and(|max| number > max) {
            refuse("it is out of the field's range".to_owned());
        }
    }
    if let Literal::Str(text) = default {
        let length = text.chars().count() as u64;
        if c.min_length.is_some_and(|min| length < min) || c.max_length.is_some_and(|max| length > max) {
            refuse(format!("its length, {length}, is outside `min_length`/`max_length`"));
        }
    }
}

fn check_ranges(field: &Field, args: &[Arg], diags: &mut Diagnostics) {
    let c = &field.constraints;
    let mut pair = |lo: Option<f64>, hi: Option<f64>, lo_key: &str, hi_key: &str| {
        if let (Some(lo), Some(hi)) = (lo, hi) {
            if lo > hi {
                let at = if args::find(args, lo_key).is_some() { lo_key } else { "min_count" };
                diags.error_at(
                    key_span(args, at),
                    format!("`{lo_key}` ({lo}) is greater than `{hi_key}` ({hi}) on `{}`: no value could pass; swap or fix the bounds", field.name),
                );
            }
        }
    };
    pair(c.min_length.map(|v| v as f64), c.max_length.map(|v| v as f64), "min_length", "max_length");
    pair(c.min_value.map(Num::as_f64), c.max_value.map(Num::as_f64), "min_value", "max_value");
    let min_key = if args::find(args, "min").is_some() { "min" } else { "min_count" };
    let max_key = if args::find(args, "max").is_some() { "max" } else { "max_count" };
    pair(c.min_items.map(|v| v as f64), c.max_items.map(|v| v as f64), min_key, max_key);
}
