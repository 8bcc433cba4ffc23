//! Checks of what a capability declares: names, versions, IRIs and the values a key may take.
//! Each returns the checked value, or reports at the literal and returns `None`.

use syn::LitStr;

use crate::diag::Diagnostics;
use crate::ir::{Input, Precondition, PreconditionKind, Reasoning, ScopeDecl};
use crate::names;

const VERSION_STATUSES: &[&str] = &["experimental", "stable", "deprecated"];

/// `lit`'s value when `check` accepts it.
pub(super) fn checked(
    lit: Option<&LitStr>,
    check: fn(&str) -> Result<(), String>,
    diags: &mut Diagnostics,
) -> Option<String> {
    let lit = lit?;
    match check(&lit.value()) {
        Ok(()) => Some(lit.value()),
        Err(reason) => {
            diags.error_spanned(lit, reason);
            None
        }
    }
}

/// `scope = "…"`, defaulting to `dev` for meta capabilities.
pub(super) fn scope(lit: Option<&LitStr>, diags: &mut Diagnostics) -> Option<ScopeDecl> {
    crate::signature::scope(lit, ScopeDecl::Dev, diags)
}

fn one_of(lit: Option<&LitStr>, key: &str, allowed: &[&str], default: &str, diags: &mut Diagnostics) -> String {
    match lit {
        Some(lit) if allowed.contains(&lit.value().as_str()) => lit.value(),
        Some(lit) => {
            diags.error_spanned(lit, format!("`{key}` must be one of {}", allowed.join(", ")));
            default.to_owned()
        }
        None => default.to_owned(),
    }
}

pub(super) fn version_status(lit: Option<&LitStr>, diags: &mut Diagnostics) -> String {
    one_of(lit, "version_status", VERSION_STATUSES, "stable", diags)
}

/// `reasoning = "none" | "rdfs"`; `owl-rl` says what is supported instead.
pub(super) fn reasoning(lit: Option<&LitStr>, diags: &mut Diagnostics) -> Reasoning {
    let Some(lit) = lit else { return Reasoning::None };
    let value = lit.value();
    if let Some(reasoning) = Reasoning::named(&value) {
        return reasoning;
    }
    let message = if value == "owl-rl" {
        "`reasoning = \"owl-rl\"` is not supported: Trails infers only what `extends` declares \
         (rdfs:subClassOf), so write `reasoning = \"rdfs\"` for reads of a node type to include the \
         types that extend it, or `\"none\"`"
            .to_owned()
    } else {
        let names: Vec<&str> = Reasoning::ALL.iter().map(|level| level.as_str()).collect();
        let nearest =
            crate::args::closest(&value, &names).map(|n| format!("did you mean `\"{n}\"`? ")).unwrap_or_default();
        format!("unknown reasoning `{value}`; {nearest}`reasoning` is one of: {}", names.join(", "))
    };
    diags.error_spanned(lit, message);
    Reasoning::None
}

/// `assurance = "L1"`: ADR-0013's levels are the vocabulary, and a level Trails cannot keep is
/// refused, naming what it needs.
pub(super) fn assurance(lit: Option<&LitStr>, diags: &mut Diagnostics) -> Option<String> {
    let lit = lit?;
    let value = lit.value();
    let levels = trails_pattern::ASSURANCE_LEVELS;
    match levels.iter().find(|(level, _)| *level == value) {
        Some(("L1", _)) => Some(value),
        Some((level, needs)) => {
            diags.error_spanned(
                lit,
                format!(
                    "`assurance = \"{level}\"` {needs}: Trails records each call as an unsigned provenance \
                     activity, which is `L1`; declare `assurance = \"L1\"` or leave it out"
                ),
            );
            None
        }
        None => {
            let names: Vec<&str> = levels.iter().map(|(level, _)| *level).collect();
            let nearest = crate::args::closest(&value.to_uppercase(), &names)
                .map(|n| format!("did you mean `\"{n}\"`? "))
                .unwrap_or_default();
            diags.error_spanned(
                lit,
                format!(
                    "unknown assurance level `{value}`; {nearest}`assurance` is one of ADR-0013's levels: L1, L2, L3"
                ),
            );
            None
        }
    }
}

/// `version = "…"`, or the crate's own version.
pub(super) fn version(lit: Option<&LitStr>, diags: &mut Diagnostics) -> String {
    match lit {
        Some(_) => checked(lit, names::check_semver, diags).unwrap_or_default(),
        None => std::env::var("CARGO_PKG_VERSION").unwrap_or_else(|_| "0.1.0".to_owned()),
    }
}

/// Each precondition's `key` names one of the named parameters (a `#[shape]` input's fields are
/// checked by the compiler, in the generated code).
pub(super) fn precondition_keys(preconditions: &[Precondition], input: &Input, diags: &mut Diagnostics) {
    let Input::Params(object) = input else { return };
    let names: Vec<&str> = object.fields.iter().map(|field| field.name.as_str()).collect();
    for precondition in preconditions {
        let instance = match &precondition.kind {
            PreconditionKind::InstanceExists(instance)
            | PreconditionKind::InstanceAbsent(instance)
            | PreconditionKind::FieldIn { instance, .. } => instance,
            PreconditionKind::Check(_) => continue,
        };
        let (key, span) = &instance.key;
        if names.contains(&key.as_str()) {
            continue;
        }
        let hint = match crate::args::closest(key, &names) {
            Some(near) => format!("; did you mean `{near}`?"),
            None => String::new(),
        };
        let listed = match names.as_slice() {
            [] => "it has none".to_owned(),
            _ => format!("it has {}", names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")),
        };
        diags.error_at(
            *span,
            format!("`key = \"{key}\"` names the argument that holds the instance's key, and the capability has no argument `{key}`{hint} ({listed})"),
        );
    }
}
