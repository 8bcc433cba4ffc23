//! A dry run (`_meta.trails.dry_run: true`, `/invoke/{id}?dry_run=true`, `trails_dry_run`): every
//! check of a call but its handler — admission, validation, policies, the app's guards, the
//! preconditions, the confirmation it would ask, an idempotency key's syntax, its cost — with
//! nothing recorded, claimed or charged. The answer says whether the call would run now, and why
//! not: `{"would_run", "reasons": [{"kind", "message", "blocking", …}]}`.
//!
//! The guards that only note something (a precondition, the question a confirmation would ask,
//! a cost) note it on the call's [`DryRun`] and go on, so one dry run reports them all; a guard
//! that refuses ends it, and its refusal is the last reason.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::outcome::{
    Refusal, ToolResult, AUTHENTICATION_FAILED, BUDGET_EXCEEDED, INVALID_PARAMS, POLICY_DENIED, SCOPE_DENIED,
};
use super::{Answer, Failure};

/// What a dry run of one call found, shared by its guards (`call.dry_run()`).
#[derive(Clone, Default)]
pub struct DryRun(Arc<Mutex<Found>>);

#[derive(Default)]
struct Found {
    reasons: Vec<Value>,
    /// The call got past every guard: only its handler was left.
    reached_handler: bool,
}

impl DryRun {
    /// Note a reason: `kind` (`precondition`, `confirmation`, `cost`, …), what the model reads,
    /// whether it keeps the call from running, and anything more to say (`fields` merged in).
    pub fn note(&self, kind: &str, message: impl Into<String>, blocking: bool, more: Value) {
        let mut reason = json!({ "kind": kind, "message": message.into(), "blocking": blocking });
        if let (Some(reason), Value::Object(more)) = (reason.as_object_mut(), more) {
            reason.extend(more);
        }
        self.found().reasons.push(reason);
    }

    fn found(&self) -> std::sync::MutexGuard<'_, Found> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn reached_handler(&self) {
        self.found().reached_handler = true;
    }

    /// Whether the call got past every guard.
    pub(crate) fn reached(&self) -> bool {
        self.found().reached_handler
    }

    /// The dry run's answer, once the guards said what they had to (`ended`: how the call ended
    /// short of its handler, if it did). `structured`: the tool has no `outputSchema` of its
    /// own, so the verdict goes in `structuredContent` too (else in text alone, an `isError`
    /// result: `trails.dry_run` is the tool whose output the verdict is).
    pub(crate) fn answer(&self, ended: Option<Value>, structured: bool) -> Answer {
        let mut found = self.found();
        let reached = found.reached_handler;
        found.reasons.extend(ended);
        let would_run = reached && !found.reasons.iter().any(|reason| reason["blocking"] == true);
        let verdict = json!({ "would_run": would_run, "reasons": found.reasons });
        let mut result = ToolResult::success(verdict.to_string(), structured.then(|| verdict.clone()));
        // A tool with an output schema promises that every result that is not an error conforms
        // to it, and the SDKs check (the Python SDK raises, the TypeScript SDK throws): its verdict
        // is not its output, so it goes as an error result they let through, in text.
        result.is_error = !structured;
        result.set_trails_meta("dry_run", Value::Bool(true));
        Answer::new(result)
    }
}

/// A refusal as the reason a dry run gives for it.
pub(crate) fn reason_of_refusal(refusal: &Refusal) -> Value {
    let kind = match refusal.code() {
        INVALID_PARAMS => "validation",
        SCOPE_DENIED => "scope_denied",
        AUTHENTICATION_FAILED => "authentication_required",
        POLICY_DENIED => "policy_denied",
        BUDGET_EXCEEDED => "budget_exceeded",
        _ => "refused",
    };
    let mut reason = json!({ "kind": kind, "message": refusal.message(), "blocking": true, "code": refusal.code() });
    if let Some(data) = refusal.data() {
        reason["data"] = data;
    }
    reason
}

/// What a guard's own answer (one that did not let the call reach its handler) says as a
/// reason: a failure it stands for, or a replay of an earlier call's result.
pub(crate) fn reason_of_answer(answer: &Answer) -> Value {
    match answer.failure() {
        Some(Failure::Domain(domain)) => {
            let mut reason = domain.to_json();
            reason["blocking"] = Value::Bool(true);
            reason
        }
        Some(Failure::Code(code)) => json!({
            "kind": if *code == INVALID_PARAMS { "validation" } else { "refused" },
            "message": answer.result().text().unwrap_or_default(),
            "blocking": true,
            "code": code,
        }),
        None => {
            json!({ "kind": "answered", "message": "a guard would answer without running the handler", "blocking": true })
        }
    }
}
