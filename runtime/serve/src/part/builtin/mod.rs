//! The built-in parts, listed once ([`parts`]): each is in the build (its feature), handed its
//! own section of `trails.toml` and resolving it, or a stand-in that refuses what asks for it with
//! [`BuildError::NotBuiltIn`], naming the feature, and does nothing else.

#[cfg(feature = "redis")]
mod coordination;
#[cfg(feature = "ledger")]
mod ledger;
#[cfg(feature = "oauth")]
mod oauth;
#[cfg(feature = "cedar")]
mod policies;
mod store;
#[cfg(feature = "ledger")]
mod tasks;

use std::path::PathBuf;

use super::{Assembly, BuildError, Part, Slot};
use crate::config::{CoordinationConfig, Env, PartSections, PolicyConfig};

/// `Some($part)` (itself an `Option`: `None` when its section configures nothing) when the build
/// has `feature`; `None` when the part is left out of it.
macro_rules! built_with {
    ($feature:literal, $part:expr) => {{
        #[cfg(feature = $feature)]
        let part: Build = Some($part.map(|part| Box::new(part) as Box<dyn Part>));
        #[cfg(not(feature = $feature))]
        let part: Build = None;
        part
    }};
}

/// A built-in part: `None` when left out of the build; `Some(None)` when built but its section
/// configures nothing.
type Build = Option<Option<Box<dyn Part>>>;

/// The built-in parts, each with its own section resolved (a section that does not resolve stops
/// the start here, before any part opens anything), in the order they assemble: the stand-ins
/// for parts left out of the build first (a configuration that asks for one stops the start
/// before the store opens or Redis connects); then the policies (a missing policy stops the
/// start), the store, OAuth, coordination, the ledger (beside the store, and shared through
/// coordination when it connected), and the tasks (kept in the ledger). Returns the sections left for the app's parts too.
#[cfg_attr(not(all(feature = "oauth", feature = "ledger")), allow(unused_variables))]
pub(crate) fn parts(
    sections: PartSections,
    public_url: Option<&str>,
    env: &Env,
) -> Result<(Vec<Box<dyn Part>>, toml::Table), BuildError> {
    let PartSections { kg, policy, budget, idempotency, token_budgets, oauth, coordination, tasks, other } = sections;
    // What a stand-in refuses, read from the section as written.
    let asks_policies = (!policy_files(&policy, env).is_empty()).then(|| "`[policy] files`".to_owned());
    let asks_oauth = oauth.is_some().then(|| "[auth.oauth] (an OAuth resource server)".to_owned());
    let asks_coordination =
        redis_url(&coordination, env).map(|_| "[coordination] (state shared by replicas, in Redis)".to_owned());
    let limited = |tokens: Option<u64>, usd: Option<f64>| tokens.is_some() || usd.is_some();
    let mut own: Vec<&str> =
        token_budgets.iter().filter(|(_, own)| limited(own.tokens, own.usd)).map(|(name, _)| name.as_str()).collect();
    own.sort_unstable();
    let asks_ledger = match limited(budget.tokens, budget.usd) {
        true => Some("`[budget]` limits".to_owned()),
        false => own.first().map(|name| format!("token `{name}`'s `budget`")),
    };
    let list = [
        BuiltIn {
            name: "policies",
            feature: "cedar",
            asks: Box::new(move |assembly| {
                let tool = assembly.registry.tools().find(|tool| !tool.policy_required().is_empty());
                tool.map(|tool| format!("capability `{}`'s `policy_required`", tool.id())).or(asks_policies)
            }),
            part: built_with!("cedar", Some(policies::Policies::resolve(policy, env))),
        },
        BuiltIn {
            name: "store",
            feature: "",
            asks: Box::new(|_| None),
            part: Some(Some(Box::new(store::Store::resolve(kg, env)?))),
        },
        BuiltIn {
            name: "oauth",
            feature: "oauth",
            asks: Box::new(|_| asks_oauth),
            part: built_with!("oauth", oauth.map(|config| oauth::OAuth::resolve(config, public_url, env)).transpose()?),
        },
        BuiltIn {
            name: "coordination",
            feature: "redis",
            asks: Box::new(|_| asks_coordination),
            part: built_with!("redis", coordination::Coordination::resolve(coordination, env)?),
        },
        BuiltIn {
            name: "ledger",
            feature: "ledger",
            // A call that carries an idempotency key promises a replay no one keeps: it is refused.
            asks: Box::new(|assembly| {
                assembly.guard(Slot::Settle, trails_governance::idempotency::NoKeys);
                asks_ledger
            }),
            part: built_with!("ledger", Some(ledger::Ledger::resolve(budget, token_budgets, idempotency)?)),
        },
        BuiltIn {
            name: "tasks",
            feature: "ledger",
            asks: Box::new(|assembly| {
                let tool = assembly.registry.tools().find(|tool| tool.task() != trails_core::TaskSupport::Forbidden);
                tool.map(|tool| format!("capability `{}`'s `task` (its records are kept in the ledger)", tool.id()))
            }),
            part: built_with!("ledger", Some(tasks::TasksPart::resolve(tasks)?)),
        },
    ];
    let mut missing: Vec<Box<dyn Part>> = Vec::new();
    let mut built = Vec::new();
    for BuiltIn { name, feature, asks, part } in list {
        match part {
            Some(part) => built.extend(part),
            None => missing.push(Box::new(Missing { name, feature, asks })),
        }
    }
    missing.append(&mut built);
    Ok((missing, other))
}

/// What asks for a part, when it is left out.
type Asks = Box<dyn FnOnce(&mut Assembly<'_>) -> Option<String> + Send>;

/// One entry of the list.
struct BuiltIn {
    name: &'static str,
    /// The feature of `trails-mcp` that builds it in.
    feature: &'static str,
    asks: Asks,
    part: Build,
}

/// A part this binary was built without.
struct Missing {
    name: &'static str,
    feature: &'static str,
    asks: Asks,
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

/// `[policy] files`, or `TRAILS_POLICY_FILES` (`:`-separated) instead.
fn policy_files(config: &PolicyConfig, env: &Env) -> Vec<PathBuf> {
    match env.get("TRAILS_POLICY_FILES") {
        Some(list) => std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()).collect(),
        None => config.files.clone(),
    }
}

/// The Redis URL `TRAILS_REDIS_URL` or `[coordination] url` names, if any.
fn redis_url(config: &CoordinationConfig, env: &Env) -> Option<String> {
    env.get("TRAILS_REDIS_URL").filter(|url| !url.trim().is_empty()).or_else(|| config.url.clone())
}
