//! The keys of `#[capability(…)]` and `#[meta_capability(…)]` (and their nested `side_effects(…)`
//! and `cost(…)` lists), each read through one table.

use proc_macro2::{Span, TokenStream};
use syn::LitStr;

use super::Kind;
use crate::args::{self, Arg, ArgValue, Keys, Literal};
use crate::diag::Diagnostics;
use crate::ir::{Cost, InstanceArg, Precondition, PreconditionKind, SideEffects, TaskSupport};

#[derive(Clone, Copy, PartialEq, Eq)]
enum CapabilityKey {
    Id,
    Namespace,
    Op,
    Scope,
    Version,
    Description,
    InputShape,
    OutputShape,
    Preconditions,
    SideEffects,
    Cost,
    PolicyRequired,
    Idempotent,
    Deprecates,
    VersionStatus,
    Reasoning,
    Assurance,
    Confirm,
    Task,
}

const CAPABILITY_KEYS: Keys<CapabilityKey> = Keys {
    what: "capability",
    item: "key",
    table: &[
        ("id", CapabilityKey::Id),
        ("version", CapabilityKey::Version),
        ("description", CapabilityKey::Description),
        ("input_shape", CapabilityKey::InputShape),
        ("output_shape", CapabilityKey::OutputShape),
        ("preconditions", CapabilityKey::Preconditions),
        ("side_effects", CapabilityKey::SideEffects),
        ("cost", CapabilityKey::Cost),
        ("policy_required", CapabilityKey::PolicyRequired),
        ("idempotent", CapabilityKey::Idempotent),
        ("deprecates", CapabilityKey::Deprecates),
        ("version_status", CapabilityKey::VersionStatus),
        ("reasoning", CapabilityKey::Reasoning),
        ("assurance", CapabilityKey::Assurance),
        ("confirm", CapabilityKey::Confirm),
        ("task", CapabilityKey::Task),
    ],
};

const META_CAPABILITY_KEYS: Keys<CapabilityKey> = Keys {
    what: "meta_capability",
    item: "key",
    table: &[
        ("namespace", CapabilityKey::Namespace),
        ("op", CapabilityKey::Op),
        ("scope", CapabilityKey::Scope),
        ("version", CapabilityKey::Version),
        ("description", CapabilityKey::Description),
        ("preconditions", CapabilityKey::Preconditions),
        ("side_effects", CapabilityKey::SideEffects),
        ("cost", CapabilityKey::Cost),
        ("policy_required", CapabilityKey::PolicyRequired),
        ("idempotent", CapabilityKey::Idempotent),
        ("deprecates", CapabilityKey::Deprecates),
        ("version_status", CapabilityKey::VersionStatus),
    ],
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum SideEffectKey {
    None,
    Writes,
    Deletes,
    Overwrites,
    External,
    Provenance,
}

const SIDE_EFFECT_KEYS: Keys<SideEffectKey> = Keys {
    what: "side_effects",
    item: "key",
    table: &[
        ("none", SideEffectKey::None),
        ("writes", SideEffectKey::Writes),
        ("deletes", SideEffectKey::Deletes),
        ("overwrites", SideEffectKey::Overwrites),
        ("external", SideEffectKey::External),
        ("provenance", SideEffectKey::Provenance),
    ],
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum CostKey {
    Tokens,
    Usd,
    LatencyP50,
    LatencyP95,
}

const COST_KEYS: Keys<CostKey> = Keys {
    what: "cost",
    item: "key",
    table: &[
        ("tokens", CostKey::Tokens),
        ("usd", CostKey::Usd),
        ("latency_p50_ms", CostKey::LatencyP50),
        ("latency_p95_ms", CostKey::LatencyP95),
    ],
};

/// What the attribute said, literals kept for their spans; `check` validates them.
#[derive(Default)]
pub(super) struct CapabilityAttrs {
    pub(super) id: Option<LitStr>,
    pub(super) namespace: Option<LitStr>,
    pub(super) op: Option<LitStr>,
    pub(super) scope: Option<LitStr>,
    pub(super) version: Option<LitStr>,
    pub(super) description: Option<LitStr>,
    pub(super) input_shape: Option<LitStr>,
    pub(super) output_shape: Option<LitStr>,
    pub(super) preconditions: Vec<Precondition>,
    pub(super) side_effects: Option<SideEffects>,
    pub(super) cost: Option<Cost>,
    pub(super) policy_required: Vec<LitStr>,
    pub(super) idempotent: bool,
    pub(super) deprecates: Option<LitStr>,
    pub(super) version_status: Option<LitStr>,
    pub(super) reasoning: Option<LitStr>,
    pub(super) assurance: Option<LitStr>,
    pub(super) confirm: Option<LitStr>,
    pub(super) task: TaskSupport,
}

pub(super) fn parse(kind: Kind, tokens: TokenStream, diags: &mut Diagnostics) -> CapabilityAttrs {
    let args = args::parse_args(tokens, diags);
    let keys = match kind {
        Kind::Runtime => CAPABILITY_KEYS,
        Kind::Meta => META_CAPABILITY_KEYS,
    };
    let mut attrs = CapabilityAttrs::default();
    for (key, arg) in keys.resolve(&args, diags) {
        let string = |example: &str, diags: &mut Diagnostics| args::expect_str(arg, example, diags);
        match key {
            CapabilityKey::Id => attrs.id = string("\"requirements.search\"", diags),
            CapabilityKey::Namespace => attrs.namespace = string("\"gen\"", diags),
            CapabilityKey::Op => attrs.op = string("\"shape\"", diags),
            CapabilityKey::Scope => attrs.scope = string("\"dev\"", diags),
            CapabilityKey::Version => attrs.version = string("\"1.2.0\"", diags),
            CapabilityKey::Description => attrs.description = string("\"What the capability does\"", diags),
            CapabilityKey::InputShape => attrs.input_shape = string("\"https://example.org/shapes#Input\"", diags),
            CapabilityKey::OutputShape => attrs.output_shape = string("\"https://example.org/shapes#Output\"", diags),
            CapabilityKey::Preconditions => attrs.preconditions = preconditions(arg, diags),
            CapabilityKey::SideEffects => attrs.side_effects = Some(side_effects(arg, diags)),
            CapabilityKey::Cost => attrs.cost = Some(cost(arg, diags)),
            CapabilityKey::PolicyRequired => attrs.policy_required = args::expect_str_list(arg, diags),
            CapabilityKey::Idempotent => attrs.idempotent = args::expect_flag(arg, diags),
            CapabilityKey::Deprecates => attrs.deprecates = string("\"requirements.search_v1\"", diags),
            CapabilityKey::VersionStatus => attrs.version_status = string("\"stable\"", diags),
            CapabilityKey::Reasoning => attrs.reasoning = string("\"none\"", diags),
            CapabilityKey::Assurance => attrs.assurance = string("\"L1\"", diags),
            CapabilityKey::Confirm => {
                attrs.confirm = string("\"Delete this requirement for good?\"", diags);
                if let Some(question) = attrs.confirm.as_ref().filter(|question| question.value().trim().is_empty()) {
                    diags.error_spanned(
                        question,
                        "`confirm` is the question the user is asked before the call runs; it cannot be empty",
                    );
                }
            }
            CapabilityKey::Task => attrs.task = task(arg, diags),
        }
    }
    attrs
}

/// `task` (a task when it outlasts the inline bound), or `task = "optional" | "required" |
/// "forbidden"`, the Tasks extension's modes.
fn task(arg: &Arg, diags: &mut Diagnostics) -> TaskSupport {
    const EXPECTED: &str = "write `task` (a task when the call outlasts the server's inline bound), `task = \"required\"` (always a task) or `task = \"forbidden\"`";
    let ArgValue::Value(expr) = &arg.value else {
        if let ArgValue::List(_) = arg.value {
            diags.error_at(arg.span, format!("`task` takes no list: {EXPECTED}"));
        }
        return TaskSupport::Optional;
    };
    let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(mode), .. }) = expr else {
        diags.error_spanned(expr, format!("`task` takes a mode: {EXPECTED}"));
        return TaskSupport::Optional;
    };
    match TaskSupport::named(&mode.value()) {
        Some(support) => support,
        None => {
            let nearest = TaskSupport::ALL
                .iter()
                .map(|mode| mode.as_str())
                .min_by_key(|known| strsim::levenshtein(known, &mode.value()))
                .filter(|known| strsim::levenshtein(known, &mode.value()) <= 3);
            let hint = nearest.map(|known| format!("did you mean `\"{known}\"`? ")).unwrap_or_default();
            diags.error_spanned(mode, format!("unknown task mode `{}`; {hint}{EXPECTED}", mode.value()));
            TaskSupport::Optional
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PreconditionKey {
    InstanceExists,
    InstanceAbsent,
    FieldEquals,
    FieldIn,
    Check,
}

const PRECONDITION_KEYS: Keys<PreconditionKey> = Keys {
    what: "precondition",
    item: "kind",
    table: &[
        ("instance_exists", PreconditionKey::InstanceExists),
        ("instance_absent", PreconditionKey::InstanceAbsent),
        ("field_equals", PreconditionKey::FieldEquals),
        ("field_in", PreconditionKey::FieldIn),
        ("check", PreconditionKey::Check),
    ],
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum ParameterKey {
    NodeType,
    Key,
    Field,
    Value,
    Values,
}

const PARAMETER_KEYS: Keys<ParameterKey> = Keys {
    what: "precondition parameter",
    item: "key",
    table: &[
        ("node_type", ParameterKey::NodeType),
        ("key", ParameterKey::Key),
        ("field", ParameterKey::Field),
        ("value", ParameterKey::Value),
        ("values", ParameterKey::Values),
    ],
};

/// `preconditions(instance_exists(node_type = "Requirement", key = "req_id"), check = can_edit)`:
/// each a kind the runtime evaluates, with the parameters that kind takes.
fn preconditions(arg: &Arg, diags: &mut Diagnostics) -> Vec<Precondition> {
    const EXAMPLE: &str =
        "`preconditions(instance_exists(node_type = \"Requirement\", key = \"req_id\"), check = my_check)`";
    let ArgValue::List(items) = &arg.value else {
        diags.error_at(arg.span, format!("write the preconditions as a list: {EXAMPLE}"));
        return Vec::new();
    };
    let mut preconditions = Vec::new();
    for (key, item) in PRECONDITION_KEYS.resolve(items, diags) {
        let kind = match key {
            PreconditionKey::Check => match &item.value {
                ArgValue::Value(syn::Expr::Path(path)) if path.qself.is_none() => {
                    Some(PreconditionKind::Check(path.path.clone()))
                }
                _ => {
                    diags.error_at(
                        item.span,
                        "`check` names the app's own precondition, an `async fn(&Ctx, &serde_json::Value) -> Result<(), String>`: write `check = path::to::function`",
                    );
                    None
                }
            },
            PreconditionKey::InstanceExists | PreconditionKey::InstanceAbsent => instance_parameters(item, &[], diags)
                .map(|(instance, _)| match key {
                    PreconditionKey::InstanceExists => PreconditionKind::InstanceExists(instance),
                    _ => PreconditionKind::InstanceAbsent(instance),
                }),
            PreconditionKey::FieldEquals => {
                instance_parameters(item, &[ParameterKey::Field, ParameterKey::Value], diags).and_then(
                    |(instance, rest)| {
                        let (field, values) = field_and_values(item, rest, ParameterKey::Value, diags)?;
                        Some(PreconditionKind::FieldIn { instance, field, values, equals: true })
                    },
                )
            }
            PreconditionKey::FieldIn => instance_parameters(item, &[ParameterKey::Field, ParameterKey::Values], diags)
                .and_then(|(instance, rest)| {
                    let (field, values) = field_and_values(item, rest, ParameterKey::Values, diags)?;
                    Some(PreconditionKind::FieldIn { instance, field, values, equals: false })
                }),
        };
        if let Some(kind) = kind {
            preconditions.push(Precondition { kind, span: item.span });
        }
    }
    preconditions
}

/// The `node_type` and `key` of `item`'s parameters, and the others it takes (`more`), each
/// reported where missing or not taken.
fn instance_parameters<'a>(
    item: &'a Arg,
    more: &[ParameterKey],
    diags: &mut Diagnostics,
) -> Option<(InstanceArg, Vec<(ParameterKey, &'a Arg)>)> {
    let example = format!("`{}(node_type = \"Requirement\", key = \"req_id\"…)`", item.key);
    let ArgValue::List(given) = &item.value else {
        diags.error_at(item.span, format!("`{}` takes parameters: {example}", item.key));
        return None;
    };
    let mut node_type = None;
    let mut key = None;
    let mut rest = Vec::new();
    let mut complete = true;
    for (parameter, arg) in PARAMETER_KEYS.resolve(given, diags) {
        match parameter {
            ParameterKey::NodeType => node_type = node_type_path(arg, diags),
            ParameterKey::Key => {
                key = args::expect_str(arg, "\"req_id\"", diags).map(|lit| (lit.value(), lit.span()));
            }
            other if more.contains(&other) => rest.push((other, arg)),
            _ => {
                diags.error_at(arg.key_span, format!("`{}` takes no `{}`", item.key, arg.key));
                complete = false;
            }
        }
    }
    for (name, found) in [("node_type", node_type.is_some()), ("key", key.is_some())] {
        if !found {
            diags.error_at(item.span, format!("`{}` needs `{name}`: {example}", item.key));
        }
    }
    let instance = InstanceArg { node_type: node_type?, key: key? };
    complete.then_some((instance, rest))
}

/// `node_type = "Requirement"` or `node_type = Requirement`: the node type's Rust path.
fn node_type_path(arg: &Arg, diags: &mut Diagnostics) -> Option<syn::Path> {
    match &arg.value {
        ArgValue::Value(syn::Expr::Path(path)) if path.qself.is_none() => Some(path.path.clone()),
        ArgValue::Value(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(name), .. })) => {
            match name.parse::<syn::Path>() {
                Ok(path) => Some(path),
                Err(_) => {
                    diags.error_spanned(
                        name,
                        "`node_type` names a `#[node_type]` type in scope: `node_type = \"Requirement\"`",
                    );
                    None
                }
            }
        }
        _ => {
            diags.error_at(arg.span, "`node_type` names a `#[node_type]` type in scope: `node_type = \"Requirement\"`");
            None
        }
    }
}

/// `field = "…"` and the values (`value` or `values`) of a field check.
fn field_and_values(
    item: &Arg,
    rest: Vec<(ParameterKey, &Arg)>,
    values_key: ParameterKey,
    diags: &mut Diagnostics,
) -> Option<((String, Span), Vec<Literal>)> {
    let mut field = None;
    let mut values = None;
    for (parameter, arg) in rest {
        match parameter {
            ParameterKey::Field => {
                field = args::expect_str(arg, "\"status\"", diags).map(|lit| (lit.value(), lit.span()));
            }
            ParameterKey::Value => {
                values = args::expect_value(arg, "\"draft\"", diags).and_then(|expr| match args::literal(expr) {
                    Some(value) => Some(vec![value]),
                    None => {
                        diags.error_spanned(expr, "`value` is a literal: a string, number or bool");
                        None
                    }
                });
            }
            ParameterKey::Values => {
                values = Some(args::expect_literal_list(arg, diags).into_iter().map(|(value, _)| value).collect());
            }
            ParameterKey::NodeType | ParameterKey::Key => {}
        }
    }
    let values_name = if values_key == ParameterKey::Value { "value" } else { "values" };
    for (name, found) in [("field", field.is_some()), (values_name, values.is_some())] {
        if !found {
            diags.error_at(
                item.span,
                format!(
                    "`{}` needs `{name}`: `{}(node_type = \"Requirement\", key = \"req_id\", field = \"status\", {})`",
                    item.key,
                    item.key,
                    match values_key {
                        ParameterKey::Value => "value = \"draft\"",
                        _ => "values = [\"draft\", \"review\"]",
                    }
                ),
            );
        }
    }
    Some((field?, values?))
}

fn side_effects(arg: &Arg, diags: &mut Diagnostics) -> SideEffects {
    let ArgValue::List(items) = &arg.value else {
        diags.error_at(
            arg.span,
            "write `side_effects(none)` or `side_effects(writes = [Requirement], deletes, external = [\"api.example.com\"])`",
        );
        return SideEffects::default();
    };
    let resolved = SIDE_EFFECT_KEYS.resolve(items, diags);
    let mut effects = SideEffects::default();
    let mut declared_none: Option<Span> = None;
    for &(key, item) in &resolved {
        match key {
            SideEffectKey::None => declared_none = Some(item.key_span),
            SideEffectKey::Writes => effects.writes = written_types(item, diags),
            SideEffectKey::External => {
                effects.external = args::expect_str_list(item, diags).iter().map(LitStr::value).collect()
            }
            SideEffectKey::Deletes => effects.deletes = args::expect_flag(item, diags),
            SideEffectKey::Overwrites => effects.overwrites = args::expect_flag(item, diags),
            SideEffectKey::Provenance => diags.error_at(
                item.key_span,
                "`provenance` is not declared: every call of an app with a knowledge graph records its provenance, and the manifest says so; remove `provenance`",
            ),
        }
    }
    if let Some(span) = declared_none {
        if resolved.len() > 1 {
            diags.error_at(span, "`none` cannot be combined with other side effects; remove `none` or the others");
        }
    }
    effects
}

/// `writes = [Requirement, Person]`: the node types whose instances a call may write.
fn written_types(item: &Arg, diags: &mut Diagnostics) -> Vec<syn::Path> {
    const EXAMPLE: &str = "`writes = [Requirement]`";
    let Some(expr) = args::expect_value(item, "[Requirement]", diags) else { return Vec::new() };
    let items: Vec<&syn::Expr> = match expr {
        syn::Expr::Array(array) => array.elems.iter().collect(),
        other => vec![other],
    };
    let mut types: Vec<syn::Path> = Vec::new();
    for item in items {
        match item {
            syn::Expr::Path(path) if path.qself.is_none() => {
                if types.contains(&path.path) {
                    diags.error_spanned(path, "this node type is named twice in `writes`; keep one");
                } else {
                    types.push(path.path.clone());
                }
            }
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. }) => diags.error_spanned(
                text,
                format!("`writes` names node types, not graphs: write {EXAMPLE}; the manifest publishes the graphs the store writes them to"),
            ),
            other => diags.error_spanned(other, format!("`writes` names `#[node_type]` types: {EXAMPLE}")),
        }
    }
    types
}

fn cost(arg: &Arg, diags: &mut Diagnostics) -> Cost {
    let ArgValue::List(items) = &arg.value else {
        diags.error_at(arg.span, "write `cost(tokens = 40, usd = 0.001, latency_p50_ms = 3, latency_p95_ms = 20)`");
        return Cost::default();
    };
    let mut cost = Cost::default();
    let mut p50_span = arg.span;
    for (key, item) in COST_KEYS.resolve(items, diags) {
        match key {
            CostKey::Tokens => cost.tokens = args::expect_count(item, diags),
            CostKey::LatencyP50 => {
                p50_span = item.value_span();
                cost.latency_p50_ms = args::expect_count(item, diags);
            }
            CostKey::LatencyP95 => cost.latency_p95_ms = args::expect_count(item, diags),
            CostKey::Usd => {
                cost.usd = args::expect_value(item, "0.001", diags).and_then(|expr| match args::literal(expr) {
                    Some(Literal::Float(f)) if f.is_finite() && f >= 0.0 => Some(f),
                    Some(Literal::Int(i)) if i >= 0 => Some(i as f64),
                    _ => {
                        diags.error_spanned(expr, "`usd` takes a non-negative number, e.g. `usd = 0.001`");
                        None
                    }
                })
            }
        }
    }
    if let (Some(p50), Some(p95)) = (cost.latency_p50_ms, cost.latency_p95_ms) {
        if p50 > p95 {
            diags.error_at(
                p50_span,
                format!("`latency_p50_ms` ({p50}) is greater than `latency_p95_ms` ({p95}); the median cannot exceed the 95th percentile"),
            );
        }
    }
    cost
}
