//! `policy_required`, enforced with Cedar. A capability that declares
//! `policy_required = ["reports.read", …]` runs only when the Cedar policies of those names
//! (`@id("reports.read")` on a policy in a `[policy] files` file) allow the call:
//!
//! - principal: `Trails::Caller::"<token name>"` for a caller with a token, `Trails::Anonymous::"anonymous"`
//!   for one without;
//! - action: `Trails::Action::"<capability id>"`;
//! - resource: `Trails::Capability::"<capability id>"`;
//! - context: `{ arguments: <the validated arguments>, scopes: [<the caller's scopes>] }`. Cedar
//!   has no floating-point numbers: a number that is not an `i64` arrives as its decimal string;
//!   `null` members are absent.
//!
//! Only the named policies decide, so another policy in the files cannot open the capability;
//! Cedar's default is deny, so a call nothing permits is refused (`-32002`, HTTP 403). A policy
//! that fails to evaluate denies the call (Cedar would skip it: a skipped `forbid` allows).
//! Entities (groups, attributes) come from `[policy] entities`, a Cedar entities JSON file.
//!
//! A capability whose policies cannot be found stops the start with [`PolicyError`], naming it:
//! never silently allowed.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::str::FromStr;

use cedar_policy::{
    Authorizer, Context, Decision, Entities, EntityId, EntityTypeName, EntityUid, PolicyId, PolicySet, Request,
    RestrictedExpression,
};
use serde_json::Value;

use trails_core::auth::Caller;
use trails_core::error::Error;
use trails_core::pipeline::{Call, Guard, GuardFuture, Next};
use trails_core::registry::ToolEntry;

/// Why the policies could not be loaded. Each names what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// Capabilities require policies and no `[policy] files` are configured.
    #[error(
        "{} require{} Cedar policies ({}), but trails.toml names no policy file: add `[policy] files = [\"policies.cedar\"]` with a policy `@id(\"…\")` for each",
        names(.capabilities), if .capabilities.len() == 1 { "s" } else { "" }, .policies.join(", ")
    )]
    NoPolicyFile {
        /// The capabilities that declare `policy_required`.
        capabilities: Vec<String>,
        /// The policy names they require.
        policies: Vec<String>,
    },
    /// A policy or entities file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A policy file is not valid Cedar.
    #[error("{}: not valid Cedar: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Cedar's message.
        message: String,
    },
    /// Two policies carry the same `@id`.
    #[error("two Cedar policies are `@id(\"{0}\")`: give each policy its own id")]
    DuplicateId(String),
    /// The entities file is not Cedar entities JSON.
    #[error("{}: not Cedar entities JSON: {message}", path.display())]
    Entities {
        /// The file.
        path: PathBuf,
        /// Cedar's message.
        message: String,
    },
    /// A capability requires a policy no file defines.
    #[error("capability `{capability}` requires Cedar policy `{policy}`, which no `[policy] files` file defines: add a policy annotated `@id(\"{policy}\")`")]
    UnknownPolicy {
        /// The capability.
        capability: String,
        /// The missing policy name.
        policy: String,
    },
}

fn names(capabilities: &[String]) -> String {
    capabilities.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
}

/// The loaded policies, one set per capability that requires any.
pub struct Policies {
    by_tool: HashMap<&'static str, (PolicySet, Vec<&'static str>)>,
    entities: Entities,
    authorizer: Authorizer,
}

impl std::fmt::Debug for Policies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policies").field("capabilities", &self.by_tool.keys().collect::<Vec<_>>()).finish()
    }
}

impl Policies {
    /// Read `files` and `entities` for the `tools` that declare `policy_required`. `None` when no
    /// tool requires a policy.
    pub fn load(
        files: &[PathBuf],
        entities: Option<&PathBuf>,
        tools: &[&'static ToolEntry],
    ) -> Result<Option<Policies>, PolicyError> {
        let guarded: Vec<&'static ToolEntry> =
            tools.iter().copied().filter(|t| !t.policy_required().is_empty()).collect();
        if guarded.is_empty() {
            return Ok(None);
        }
        if files.is_empty() {
            let mut policies: Vec<String> =
                guarded.iter().flat_map(|t| t.policy_required().iter().map(|p| (*p).to_owned())).collect();
            policies.sort();
            policies.dedup();
            return Err(PolicyError::NoPolicyFile {
                capabilities: guarded.iter().map(|t| t.id().to_owned()).collect(),
                policies,
            });
        }
        let mut by_id = BTreeMap::new();
        for path in files {
            let text = read(path)?;
            let set = PolicySet::from_str(&text)
                .map_err(|e| PolicyError::Parse { path: path.clone(), message: cedar_message(&e) })?;
            // Only `@id`-named policies can be required. Each is re-identified by its name:
            // Cedar numbers the policies of every file from `policy0`, so two files' policies
            // would otherwise share an id and one would be lost when they are put in one set.
            for policy in set.policies() {
                let Some(id) = policy.annotation("id") else { continue };
                let renamed = policy.new_id(PolicyId::new(id));
                if by_id.insert(id.to_owned(), renamed).is_some() {
                    return Err(PolicyError::DuplicateId(id.to_owned()));
                }
            }
        }
        let mut by_tool = HashMap::new();
        for tool in guarded {
            let mut set = PolicySet::new();
            for name in tool.policy_required() {
                let policy = by_id.get(*name).ok_or_else(|| PolicyError::UnknownPolicy {
                    capability: tool.id().to_owned(),
                    policy: (*name).to_owned(),
                })?;
                // Ids are the unique `@id`s (checked above): adding cannot collide, and if it
                // did, the start would stop rather than lose a policy.
                set.add(policy.clone()).map_err(|_| PolicyError::DuplicateId((*name).to_owned()))?;
            }
            by_tool.insert(tool.name(), (set, tool.policy_required().to_vec()));
        }
        let entities = match entities {
            Some(path) => Entities::from_json_str(&read(path)?, None)
                .map_err(|e| PolicyError::Entities { path: path.clone(), message: cedar_message(&e) })?,
            None => Entities::empty(),
        };
        Ok(Some(Policies { by_tool, entities, authorizer: Authorizer::new() }))
    }

    /// Whether `caller` is refused every call of `tool`, whatever its arguments: Cedar evaluates
    /// the policies with `context.arguments` unknown, and a definite deny — or a policy that
    /// fails whatever they are, which [`check`](Self::check) turns into a denial — decides it.
    /// A decision that depends on the arguments (a residual) keeps the tool listed.
    pub fn denies_always(&self, tool: &ToolEntry, caller: &Caller) -> bool {
        let Some((set, _)) = self.by_tool.get(tool.name()) else { return false };
        let Ok(request) = request_with(tool, caller, RestrictedExpression::new_unknown("arguments")) else {
            return false; // Undecided here: listed, and `check` decides each call.
        };
        let response = self.authorizer.is_authorized_partial(&request, set, &self.entities);
        response.decision() == Some(Decision::Deny) || response.definitely_errored().next().is_some()
    }

    /// Whether `caller` may call `tool` with `arguments` (already validated).
    pub fn check(&self, tool: &ToolEntry, caller: &Caller, arguments: &Value) -> Result<(), Error> {
        let Some((set, names)) = self.by_tool.get(tool.name()) else { return Ok(()) };
        let denied = || Error::policy_denied(format!("`{}` is not allowed by policy {}", tool.id(), names.join(", ")));
        let request = match request(tool, caller, arguments) {
            Ok(request) => request,
            Err(cause) => {
                tracing::warn!(%cause, capability = tool.id(), "could not build the Cedar request; denied");
                return Err(denied());
            }
        };
        let response = self.authorizer.is_authorized(&request, set, &self.entities);
        // Cedar skips a policy whose evaluation fails (a missing attribute, an argument of
        // another type than it expects): a skipped `forbid` would let the call through. Fail
        // closed instead, and tell the policy's author why.
        let mut failed = false;
        for error in response.diagnostics().errors() {
            failed = true;
            tracing::warn!(%error, capability = tool.id(), "a Cedar policy failed to evaluate; the call is denied");
        }
        match response.decision() {
            Decision::Allow if !failed => Ok(()),
            _ => Err(denied()),
        }
    }
}

/// The policy guard: a `policy_required` capability runs only when its Cedar policies allow the
/// call, with its validated arguments.
pub struct PolicyGuard(pub Policies);

impl Guard for PolicyGuard {
    fn call<'a>(&'a self, call: Call, next: Next<'a>) -> GuardFuture<'a> {
        Box::pin(async move {
            match self.0.check(call.tool(), call.caller(), call.arguments()) {
                Ok(()) => next.run(call).await,
                Err(error) => call.failed(error),
            }
        })
    }

    fn refuses_always(&self, tool: &ToolEntry, caller: &Caller) -> bool {
        self.0.denies_always(tool, caller)
    }

    fn may_hide(&self) -> bool {
        true
    }
}

fn read(path: &PathBuf) -> Result<String, PolicyError> {
    std::fs::read_to_string(path).map_err(|source| PolicyError::Read { path: path.clone(), source })
}

fn cedar_message(error: &dyn std::fmt::Display) -> String {
    error.to_string()
}

fn uid(kind: &str, id: &str) -> Result<EntityUid, String> {
    let kind = EntityTypeName::from_str(kind).map_err(|e| e.to_string())?;
    Ok(EntityUid::from_type_name_and_id(kind, EntityId::new(id)))
}

fn request(tool: &ToolEntry, caller: &Caller, arguments: &Value) -> Result<Request, String> {
    request_with(tool, caller, expression(arguments)?)
}

fn request_with(tool: &ToolEntry, caller: &Caller, arguments: RestrictedExpression) -> Result<Request, String> {
    let principal = match &caller.name {
        Some(name) => uid("Trails::Caller", name)?,
        None => uid("Trails::Anonymous", "anonymous")?,
    };
    let action = uid("Trails::Action", tool.id())?;
    let resource = uid("Trails::Capability", tool.id())?;
    let scopes = RestrictedExpression::new_set(
        caller.scopes.names().into_iter().map(|s| RestrictedExpression::new_string(s.to_owned())),
    );
    let context = Context::from_pairs([("arguments".to_owned(), arguments), ("scopes".to_owned(), scopes)])
        .map_err(|e| e.to_string())?;
    Request::new(principal, action, resource, context, None).map_err(|e| e.to_string())
}

/// A JSON value as a Cedar value (see the module docs for numbers and `null`).
fn expression(value: &Value) -> Result<RestrictedExpression, String> {
    Ok(match value {
        Value::Null => RestrictedExpression::new_record([]).map_err(|e| e.to_string())?,
        Value::Bool(b) => RestrictedExpression::new_bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => RestrictedExpression::new_long(i),
            None => RestrictedExpression::new_string(n.to_string()),
        },
        Value::String(s) => RestrictedExpression::new_string(s.clone()),
        Value::Array(items) => {
            let items: Result<Vec<_>, String> = items.iter().filter(|v| !v.is_null()).map(expression).collect();
            RestrictedExpression::new_set(items?)
        }
        Value::Object(members) => {
            let members: Result<Vec<_>, String> = members
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| expression(v).map(|e| (k.clone(), e)))
                .collect();
            RestrictedExpression::new_record(members?).map_err(|e| e.to_string())?
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trails_core::auth::ScopeSet;

    fn entry(policies: &'static [&'static str]) -> &'static ToolEntry {
        Box::leak(Box::new(ToolEntry::__new(
            "reports.read",
            "reports.read",
            "1.0.0",
            trails_core::registry::ToolKind::Runtime,
            trails_core::auth::Scope::Runtime,
            "",
            "{}",
            "{}",
            "",
            trails_core::registry::Declared::__new(
                policies,
                0,
                0.0,
                false,
                false,
                None,
                false,
                None,
                false,
                None,
                trails_core::TaskSupport::Forbidden,
                trails_core::Effects::Undeclared,
                None,
                trails_core::Reasoning::None,
                "",
            ),
            |_, _, _| {},
            |_, _| Box::pin(async { Ok(trails_core::declare::Output::text("")) }),
            "test",
        )))
    }

    fn policies(text: &str, tool: &'static ToolEntry) -> Policies {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.cedar");
        std::fs::write(&file, text).unwrap();
        Policies::load(&[file], None, &[tool]).unwrap().unwrap()
    }

    #[test]
    fn arguments_reach_the_policy_as_cedar_values() {
        let tool = entry(&["reports"]);
        let set = policies(
            r#"@id("reports") permit (principal, action, resource) when {
                context.arguments.n == 3 && context.arguments.big == "18446744073709551615"
                && context.arguments.ratio == "0.5" && context.arguments.tags.contains("a")
                && context.arguments.nested.ok && !(context.arguments has gone)
            };"#,
            tool,
        );
        let caller = Caller::anonymous(ScopeSet::up_to(trails_core::auth::Scope::Runtime));
        let arguments = serde_json::json!({
            "n": 3, "big": 18446744073709551615u64, "ratio": 0.5, "tags": ["a", "b"],
            "nested": { "ok": true }, "gone": null
        });
        assert!(set.check(tool, &caller, &arguments).is_ok());
        let mut other = arguments.clone();
        other["n"] = serde_json::json!(4);
        assert!(matches!(set.check(tool, &caller, &other), Err(Error::PolicyDenied(_))));
    }

    /// Hidden from a caller exactly when every call would be denied, whatever the arguments.
    #[test]
    fn a_tool_is_denied_always_only_when_no_arguments_could_open_it() {
        let tool = entry(&["reports"]);
        let runtime = ScopeSet::up_to(trails_core::auth::Scope::Runtime);
        let anonymous = Caller::anonymous(runtime);
        let alice = Caller { name: Some("alice".into()), client: None, scopes: runtime };
        let cases = [
            // Names the principal: decided without the arguments.
            (r#"permit (principal == Trails::Caller::"alice", action, resource);"#, true, false),
            // Depends on the arguments: decided per call, so listed to both.
            (r#"permit (principal, action, resource) when { context.arguments.n < 3 };"#, false, false),
            // A forbid that holds whatever the arguments, for anonymous callers only.
            (
                r#"permit (principal, action, resource) when { context.arguments.n < 3 };
                   @id("no-anonymous") forbid (principal is Trails::Anonymous, action, resource);"#,
                true,
                false,
            ),
            // Scopes are known: a scope the caller lacks denies whatever the arguments.
            (r#"permit (principal, action, resource) when { context.scopes.contains("builder") };"#, true, true),
            // Fails for every call (no such attribute), which `check` denies: hidden too.
            (r#"permit (principal, action, resource) when { principal.team == "x" };"#, true, true),
        ];
        for (text, anonymous_denied, alice_denied) in cases {
            let text = format!("@id(\"reports\") {text}");
            let names: &'static [&'static str] =
                if text.contains("no-anonymous") { &["reports", "no-anonymous"] } else { &["reports"] };
            let tool = if names.len() == 2 { entry(names) } else { tool };
            let set = policies(&text, tool);
            assert_eq!(set.denies_always(tool, &anonymous), anonymous_denied, "anonymous: {text}");
            assert_eq!(set.denies_always(tool, &alice), alice_denied, "alice: {text}");
            // Never hidden while some call would be allowed.
            if anonymous_denied {
                for n in [0, 1, 2, 5] {
                    let allowed = set.check(tool, &anonymous, &serde_json::json!({ "n": n })).is_ok();
                    assert!(!allowed, "hidden, yet n = {n} is allowed: {text}");
                }
            }
        }
    }

    #[test]
    fn policies_from_several_files_all_decide_and_an_evaluation_error_denies() {
        let tool = entry(&["allow", "block"]);
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("a.cedar"), dir.path().join("b.cedar"));
        std::fs::write(&first, r#"@id("allow") permit (principal, action, resource);"#).unwrap();
        // Both files' first policy is Cedar's `policy0`: the forbid must not be lost.
        std::fs::write(
            &second,
            r#"@id("block") forbid (principal, action, resource) when { context.arguments.n > 5 };"#,
        )
        .unwrap();
        let set = Policies::load(&[first, second], None, &[tool]).unwrap().unwrap();
        let caller = Caller::anonymous(ScopeSet::up_to(trails_core::auth::Scope::Runtime));
        assert!(set.check(tool, &caller, &serde_json::json!({ "n": 1 })).is_ok());
        assert!(set.check(tool, &caller, &serde_json::json!({ "n": 9 })).is_err(), "the forbid decides");
        // `n` as a string (a float or a huge number arrives so): `>` fails, the forbid is skipped
        // by Cedar, and the call must still be denied.
        assert!(set.check(tool, &caller, &serde_json::json!({ "n": 9.5 })).is_err(), "fails closed");
        assert!(set.check(tool, &caller, &serde_json::json!({})).is_err(), "a missing attribute fails closed");
    }

    #[test]
    fn no_tool_requiring_a_policy_needs_no_file_and_duplicate_ids_are_refused() {
        assert!(Policies::load(&[], None, &[entry(&[])]).unwrap().is_none());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.cedar");
        std::fs::write(
            &file,
            r#"@id("a") permit (principal, action, resource); @id("a") forbid (principal, action, resource);"#,
        )
        .unwrap();
        let error = Policies::load(&[file], None, &[entry(&["a"])]).unwrap_err();
        assert!(matches!(error, PolicyError::DuplicateId(ref id) if id == "a"), "{error}");
    }
}
