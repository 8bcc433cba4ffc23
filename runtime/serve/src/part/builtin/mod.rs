//! The built-in parts, listed once ([`parts`]): each is in the build (its feature) or a stand-in
//! that refuses what asks for it with [`BuildError::NotBuiltIn`], naming the feature, and does
//! nothing else.

#[cfg(feature = "redis")]
mod coordination;
#[cfg(feature = "ledger")]
mod ledger;
#[cfg(feature = "oauth")]
mod oauth;
#[cfg(feature = "cedar")]
mod policies;
mod store;

use super::{Assembly, BuildError, Part, Slot};

/// `Some(part)` when the build has `feature`, else `None`.
macro_rules! built_with {
    ($feature:literal, $part:expr) => {{
        #[cfg(feature = $feature)]
        let part: Option<Box<dyn Part>> = Some(Box::new($part));
        #[cfg(not(feature = $feature))]
        let part: Option<Box<dyn Part>> = None;
        part
    }};
}

/// The built-in parts, in the order they assemble. The stand-ins for parts left out of the build
/// come first (they open nothing: a configuration that asks for one stops the start before the
/// store opens or Redis connects); then the policies (read before anything is opened: a missing
/// policy stops the start), the store, OAuth, coordination, and the ledger (beside the store, and
/// shared through coordination when it connected).
pub(crate) fn parts() -> Vec<Box<dyn Part>> {
    let list = [
        BuiltIn { name: "policies", feature: "cedar", asks: policies, part: built_with!("cedar", policies::Policies) },
        BuiltIn { name: "store", feature: "", asks: |_| None, part: Some(Box::new(store::Store)) },
        BuiltIn { name: "oauth", feature: "oauth", asks: oauth, part: built_with!("oauth", oauth::OAuth) },
        BuiltIn {
            name: "coordination",
            feature: "redis",
            asks: coordination,
            part: built_with!("redis", coordination::Coordination),
        },
        BuiltIn { name: "ledger", feature: "ledger", asks: ledger, part: built_with!("ledger", ledger::Ledger) },
    ];
    let (built, missing): (Vec<_>, Vec<_>) = list.into_iter().partition(|built_in| built_in.part.is_some());
    let missing = missing
        .into_iter()
        .map(|BuiltIn { name, feature, asks, .. }| Box::new(Missing { name, feature, asks }) as Box<dyn Part>);
    missing.chain(built.into_iter().filter_map(|built_in| built_in.part)).collect()
}

/// One entry of the list.
struct BuiltIn {
    name: &'static str,
    /// The feature of `trails-mcp` that builds it in.
    feature: &'static str,
    /// What asks for it, when it is left out.
    asks: fn(&mut Assembly<'_>) -> Option<String>,
    part: Option<Box<dyn Part>>,
}

/// A part this binary was built without.
struct Missing {
    name: &'static str,
    feature: &'static str,
    asks: fn(&mut Assembly<'_>) -> Option<String>,
}

impl Part for Missing {
    fn name(&self) -> &'static str {
        self.name
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        match (self.asks)(assembly) {
            Some(what) => Err(BuildError::NotBuiltIn { what, feature: self.feature }),
            None => Ok(()),
        }
    }
}

/// `[coordination]`.
fn coordination(assembly: &mut Assembly<'_>) -> Option<String> {
    let asked = assembly.settings.coordination.is_some();
    asked.then(|| "[coordination] (state shared by replicas, in Redis)".to_owned())
}

/// A capability that requires Cedar policies would run unchecked.
fn policies(assembly: &mut Assembly<'_>) -> Option<String> {
    if let Some(tool) = assembly.registry.tools().find(|tool| !tool.policy_required().is_empty()) {
        return Some(format!("capability `{}`'s `policy_required`", tool.id()));
    }
    (!assembly.settings.policy_files.is_empty()).then(|| "`[policy] files`".to_owned())
}

/// Budget limits would go unenforced. (A call that carries an idempotency key promises a replay
/// no one keeps: it is refused.)
fn ledger(assembly: &mut Assembly<'_>) -> Option<String> {
    assembly.guard(Slot::Settle, trails_governance::idempotency::NoKeys);
    let budget = &assembly.settings.budget;
    if !budget.default.is_unlimited() {
        return Some("`[budget]` limits".into());
    }
    let mut own: Vec<&str> =
        budget.by_caller.iter().filter(|(_, limit)| !limit.is_unlimited()).map(|(name, _)| name.as_str()).collect();
    own.sort_unstable();
    own.first().map(|name| format!("token `{name}`'s `budget`"))
}

/// `[auth.oauth]`: every token would be refused.
fn oauth(assembly: &mut Assembly<'_>) -> Option<String> {
    assembly.settings.oauth.is_some().then(|| "[auth.oauth] (an OAuth resource server)".to_owned())
}
