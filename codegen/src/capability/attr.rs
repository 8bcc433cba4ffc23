//! The keys of `#[capability(…)]` and `#[meta_capability(…)]` (and their nested `side_effects(…)`
//! and `cost(…)` lists), each read through one table.

use proc_macro2::{Span, TokenStream};
use syn::LitStr;

use super::Kind;
use crate::args::{self, Arg, ArgValue, Keys, Literal};
use crate::diag::Diagnostics;
use crate::ir::{Cost, Precondition, SideEffects, TaskSupport};
use crate::names;

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
            CapabilityKey::Assurance => attrs.assurance = string("\"self-asserted\"", diags),
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

/// `preconditions(requirement_exists(node_type = "Requirement"), signed_in)`: each a kind with
/// literal parameters; or `preconditions = ["signed_in"]`, kinds alone.
fn preconditions(arg: &Arg, diags: &mut Diagnostics) -> Vec<Precondition> {
    const EXAMPLE: &str = "`preconditions(requirement_exists(node_type = \"Requirement\"), signed_in)`";
    let ArgValue::List(items) = &arg.value else {
        let kinds = args::expect_str_list(arg, diags);
        return kinds.iter().map(|kind| Precondition { kind: kind.value(), parameters: Vec::new() }).collect();
    };
    let mut preconditions = Vec::new();
    for item in items {
        let mut parameters: Vec<(String, Literal)> = Vec::new();
        match &item.value {
            ArgValue::Flag => {}
            ArgValue::List(given) => {
                for parameter in given {
                    // A float literal past f64's range is infinite, which JSON cannot carry.
                    let value = match &parameter.value {
                        ArgValue::Value(expr) => {
                            args::literal(expr).filter(|v| !matches!(v, Literal::Float(f) if !f.is_finite()))
                        }
                        _ => None,
                    };
                    let Some(value) = value else {
                        let message = format!(
                            "a precondition's parameter is `name = literal` (a string, number or bool): write `{}({} = \"…\")`",
                            item.key, parameter.key
                        );
                        diags.error_at(parameter.span, message);
                        continue;
                    };
                    if parameters.iter().any(|(name, _)| *name == parameter.key) {
                        let message =
                            format!("parameter `{}` of precondition `{}` is given twice", parameter.key, item.key);
                        diags.error_at(parameter.key_span, message);
                        continue;
                    }
                    parameters.push((parameter.key.clone(), value));
                }
            }
            ArgValue::Value(_) => {
                let message = format!("a precondition is a kind, with parameters in parentheses: {EXAMPLE}");
                diags.error_at(item.span, message);
                continue;
            }
        }
        preconditions.push(Precondition { kind: item.key.clone(), parameters });
    }
    preconditions
}

fn side_effects(arg: &Arg, diags: &mut Diagnostics) -> SideEffects {
    let ArgValue::List(items) = &arg.value else {
        diags.error_at(
            arg.span,
            "write `side_effects(none)` or `side_effects(writes = [\"urn:graph\"], deletes, external = [\"api.example.com\"])`",
        );
        return SideEffects::default();
    };
    let resolved = SIDE_EFFECT_KEYS.resolve(items, diags);
    let mut effects = SideEffects::default();
    let mut declared_none: Option<Span> = None;
    for &(key, item) in &resolved {
        match key {
            SideEffectKey::None => declared_none = Some(item.key_span),
            SideEffectKey::Writes => {
                for graph in args::expect_str_list(item, diags) {
                    match names::check_iri(&graph.value()) {
                        Ok(()) => effects.writes.push(graph.value()),
                        Err(reason) => diags.error_spanned(&graph, format!("`writes` names graphs by IRI: {reason}")),
                    }
                }
            }
            SideEffectKey::External => {
                effects.external = args::expect_str_list(item, diags).iter().map(LitStr::value).collect()
            }
            SideEffectKey::Deletes => effects.deletes = args::expect_flag(item, diags),
            SideEffectKey::Overwrites => effects.overwrites = args::expect_flag(item, diags),
            SideEffectKey::Provenance => effects.provenance = args::expect_flag(item, diags),
        }
    }
    if let Some(span) = declared_none {
        if resolved.len() > 1 {
            diags.error_at(span, "`none` cannot be combined with other side effects; remove `none` or the others");
        }
    }
    effects
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
