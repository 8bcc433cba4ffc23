//! Checks of what a capability declares: names, versions, IRIs and the values a key may take.
//! Each returns the checked value, or reports at the literal and returns `None`.

use syn::LitStr;

use crate::diag::Diagnostics;
use crate::ir::ScopeDecl;
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
