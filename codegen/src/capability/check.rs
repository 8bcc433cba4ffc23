//! Checks of what a capability declares: names, versions, IRIs and the values a key may take.
//! Each returns the checked value, or reports at the literal and returns `None`.

use syn::LitStr;

use crate::diag::Diagnostics;
use crate::ir::{Input, Precondition, PreconditionKind, ScopeDecl};
use crate::names;

const VERSION_STATUSES: &[&str] = &["experimental", "stable", "deprecated"];
const REASONING: &[&str] = &["none", "rdfs", "owl-rl"];

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

pub(super) fn reasoning(lit: Option<&LitStr>, diags: &mut Diagnostics) -> String {
    one_of(lit, "reasoning", REASONING, "none", diags)
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
