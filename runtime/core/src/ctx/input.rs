//! Asking the client while a call runs: its user (elicitation), its model (sampling), its roots.
//!
//! A transport attaches an [`Input`] to the call: in a 2025 session (or over stdio before
//! 2026-07-28) a server-to-client request that the call awaits ([`Asker`]); from 2026-07-28 on a
//! [`Round`] of an input-required result (MCP's multi round-trip requests): what the client
//! answered so far, by key. A question the round has no answer for stops the call where it
//! waits ([`until_asked`]); the transport answers `InputRequiredResult` with every question
//! asked by then, and the client calls again with the answers, which the call — run again from
//! the start — finds under the same keys.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::declare::{Content, ObjectShape};
use crate::error::Error;
use crate::validate::{FieldCode, FieldError};

/// A server-to-client request a transport sends and awaits: `method` (`elicitation/create`,
/// `sampling/createMessage`, `roots/list`) with `params`, asked under the call's `key`, answered
/// with the client's result.
pub trait Asker: Send + Sync + 'static {
    /// Send the request and await the client's result.
    fn ask(&self, key: &str, method: &'static str, params: Value) -> BoxFuture<'static, Result<Value, Error>>;
}

/// How a call reaches its client for input, attached by the transport.
#[derive(Clone)]
pub enum Input {
    /// A request to the client, awaited (2025 sessions, stdio).
    Ask(Arc<dyn Asker>),
    /// A round of an input-required result (2026-07-28).
    Round(Arc<Round>),
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Input::Ask(_) => f.write_str("Input::Ask"),
            Input::Round(round) => f.debug_tuple("Input::Round").field(round).finish(),
        }
    }
}

impl Input {
    /// The round, when it is one.
    pub fn round(&self) -> Option<&Arc<Round>> {
        match self {
            Input::Round(round) => Some(round),
            Input::Ask(_) => None,
        }
    }
}

/// The keys the server asks under itself (the confirmation's); a handler's must not start so.
pub const RESERVED_PREFIX: &str = "trails_";

/// One round of a call answered with input-required results: the answers the client gave so
/// far (by the key the call asked under), and what the call did with them while it ran.
#[derive(Default)]
pub struct Round {
    answers: Map<String, Value>,
    state: Mutex<RoundState>,
}

#[derive(Default)]
struct RoundState {
    /// The questions asked that have no answer yet, by key.
    asked: Map<String, Value>,
    /// The keys whose answers the call has read.
    consulted: BTreeSet<String>,
    /// `until_asked` is running the call: only then can a question wait for its round to end.
    running: bool,
    /// Who to wake when a question is asked off the polled future (a spawned task's).
    waker: Option<Waker>,
    /// Where questions go once the call outlived its round ([`Round::escalate`]): an MCP task's.
    escalated: Option<Arc<dyn Asker>>,
    /// A question waited for an answer: the round ends with an input-required result, whatever
    /// `until_asked` has taken of `asked` by now.
    waited: bool,
}

// The answers are the user's: never in a log line.
impl std::fmt::Debug for Round {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Round").field("answers", &self.answers.keys().collect::<Vec<_>>()).finish_non_exhaustive()
    }
}

/// What a round makes of a question.
enum Asking {
    Answered(Value),
    Waiting,
    /// To ask of the client through the asker the round escalated to (the question's params).
    Escalated(Arc<dyn Asker>, Value),
    /// Asked outside `until_asked` (a guard, or a task still running after its call ended).
    Outside,
}

impl Round {
    /// A round with these answers (none: the call's first).
    pub fn new(answers: Map<String, Value>) -> Round {
        Round { answers, state: Mutex::default() }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, RoundState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The answers the call read: what the next round's state carries (an answer the call never
    /// asked for is not kept).
    pub fn consulted(&self) -> Map<String, Value> {
        let state = self.state();
        self.answers
            .iter()
            .filter(|(key, _)| state.consulted.contains(*key))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// From now on, a question the round has no answer for is asked through `asker` (the call
    /// became an MCP task: its questions wait on the task) instead of ending the round — unless
    /// one is waiting already (`false`: the round ends with it, as it would have).
    pub fn escalate(&self, asker: Arc<dyn Asker>) -> bool {
        let mut state = self.state();
        if state.waited || !state.asked.is_empty() {
            return false;
        }
        state.escalated = Some(asker);
        true
    }

    fn ask(&self, key: &str, method: &'static str, params: Value) -> Asking {
        let mut state = self.state();
        if !state.running {
            return Asking::Outside;
        }
        // A key asked again in the same round (its answer did not do) is asked anew.
        if let Some(answer) = self.answers.get(key).filter(|_| state.consulted.insert(key.to_owned())) {
            return Asking::Answered(answer.clone());
        }
        if let Some(asker) = &state.escalated {
            return Asking::Escalated(asker.clone(), params);
        }
        state.asked.insert(key.to_owned(), json!({ "method": method, "params": params }));
        state.waited = true;
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
        Asking::Waiting
    }
}

/// What a round asked that it had no answer for: the transport's input-required result.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// The questions, by key: `{"method", "params"}` each (MCP's `inputRequests`).
    pub requests: Map<String, Value>,
}

/// Run `future` to its end, or — given a `round` — until it waits for an answer the round does
/// not have: then it is dropped where it waits, and every question it asked by then is the
/// `Err` (questions asked together — `join!` — are one round when each branch reaches its
/// question before the call waits). A question asked outside it (a guard's, a task's that
/// outlives the call) fails at once instead of waiting.
pub async fn until_asked<F: Future>(round: Option<&Round>, future: F) -> Result<F::Output, Asked> {
    let Some(round) = round else { return Ok(future.await) };
    struct Running<'a>(&'a Round);
    impl Drop for Running<'_> {
        fn drop(&mut self) {
            let mut state = self.0.state();
            state.running = false;
            state.waker = None;
        }
    }
    round.state().running = true;
    let _running = Running(round);
    let mut future = pin!(future);
    std::future::poll_fn(|cx| {
        round.state().waker = Some(cx.waker().clone());
        match future.as_mut().poll(cx) {
            Poll::Ready(output) => Poll::Ready(Ok(output)),
            Poll::Pending => {
                let requests = std::mem::take(&mut round.state().asked);
                match requests.is_empty() {
                    true => Poll::Pending,
                    false => Poll::Ready(Err(Asked { requests })),
                }
            }
        }
    })
    .await
}

/// What the user answered an elicitation ([`crate::Ctx::elicit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user answered: the shape, validated.
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the question without answering.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The answer, if the user gave one.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(value) => Some(value),
            _ => None,
        }
    }
}

/// A request to the client's model ([`crate::Ctx::sample`]): messages, and the most tokens
/// the answer may take.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    messages: Vec<Value>,
    max_tokens: u32,
    system_prompt: Option<String>,
}

impl Sample {
    /// One user message asking `text`, answered in at most `max_tokens` tokens.
    pub fn user(text: impl Into<String>, max_tokens: u32) -> Sample {
        Sample { messages: Vec::new(), max_tokens, system_prompt: None }.then_user(text)
    }

    /// A further user message.
    pub fn then_user(mut self, text: impl Into<String>) -> Sample {
        self.messages.push(json!({ "role": "user", "content": Content::text(text) }));
        self
    }

    /// The system prompt the client's model is asked to use.
    pub fn system(mut self, prompt: impl Into<String>) -> Sample {
        self.system_prompt = Some(prompt.into());
        self
    }

    fn params(&self) -> Value {
        let mut params = json!({ "messages": self.messages, "maxTokens": self.max_tokens });
        if let Some(prompt) = &self.system_prompt {
            params["systemPrompt"] = json!(prompt);
        }
        params
    }
}

/// What the client's model answered ([`crate::Ctx::sample`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Sampled {
    /// The model that answered.
    #[serde(default)]
    pub model: String,
    /// Why it stopped (`endTurn`, `maxTokens`, …).
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// What it answered.
    #[serde(deserialize_with = "one_or_many")]
    pub content: Vec<Content>,
}

impl Sampled {
    /// The answer's text (its text blocks, joined).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|content| match content {
                Content::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<Content>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(Content),
        Many(Vec<Content>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(content) => vec![content],
        OneOrMany::Many(contents) => contents,
    })
}

/// One of the client's roots ([`crate::Ctx::roots`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// What the client calls it.
    #[serde(default)]
    pub name: Option<String>,
}

/// The capability a client declares for each question.
pub(super) enum Kind {
    Elicitation,
    Sampling,
    Roots,
}

impl Kind {
    pub(super) fn capability(&self) -> &'static str {
        match self {
            Kind::Elicitation => "elicitation",
            Kind::Sampling => "sampling",
            Kind::Roots => "roots",
        }
    }

    fn method(&self) -> &'static str {
        match self {
            Kind::Elicitation => "elicitation/create",
            Kind::Sampling => "sampling/createMessage",
            Kind::Roots => "roots/list",
        }
    }
}

/// Ask through `input` under `key`: the client's answer. In a round without one, the call
/// waits until [`until_asked`] stops it.
pub(super) async fn ask(input: &Input, key: &str, kind: Kind, params: Value) -> Result<Value, Error> {
    match input {
        Input::Ask(asker) => asker.ask(key, kind.method(), params).await,
        Input::Round(round) => match round.ask(key, kind.method(), params) {
            Asking::Answered(answer) => Ok(answer),
            Asking::Waiting => std::future::pending().await,
            Asking::Escalated(asker, params) => asker.ask(key, kind.method(), params).await,
            Asking::Outside => Err(Error::internal(format!(
                "`{key}` was asked outside the handler's own run (from a guard, or by a task that outlived its \
                 call): only a handler's questions, and a declared `confirm`, reach the client"
            ))),
        },
    }
}

/// A malformed answer under `key`: `-32602`, naming it (the answer is the client's input).
fn malformed(key: &str, expected: &str, answer: &Value, error: impl std::fmt::Display) -> Error {
    let field = format!("inputResponses.{key}");
    let message = format!("the answer to `{key}` is not {expected}: {error}");
    Error::validation(vec![FieldError::rejecting(&field, FieldCode::Type, message, answer, json!(expected))])
}

pub(super) fn elicit_params<T: ObjectShape>(message: &str) -> Result<Value, Error> {
    let schema: Value = serde_json::from_str(T::SCHEMA)
        .map_err(|error| Error::internal(format!("{}'s schema is not JSON: {error}", T::NAME)))?;
    Ok(json!({ "mode": "form", "message": message, "requestedSchema": schema }))
}

/// An elicitation result as the client sent it.
#[derive(Deserialize)]
struct ElicitAnswer {
    action: String,
    #[serde(default)]
    content: Option<Value>,
}

fn elicit_answer(key: &str, answer: &Value) -> Result<ElicitAnswer, Error> {
    serde_json::from_value(answer.clone()).map_err(|error| malformed(key, "an elicitation result", answer, error))
}

pub(super) fn elicited<T: ObjectShape>(key: &str, answer: Value) -> Result<Elicited<T>, Error> {
    let parsed = elicit_answer(key, &answer)?;
    match parsed.action.as_str() {
        "accept" => {
            let content = parsed.content.unwrap_or_else(|| json!({}));
            let mut errors = T::validate(&content);
            if !errors.is_empty() {
                for error in &mut errors {
                    error.field = format!("inputResponses.{key}.content.{}", error.field);
                }
                return Err(Error::validation(errors));
            }
            serde_json::from_value(content.clone())
                .map(Elicited::Accepted)
                .map_err(|error| malformed(key, T::NAME, &content, error))
        }
        "decline" => Ok(Elicited::Declined),
        "cancel" => Ok(Elicited::Cancelled),
        other => Err(malformed(key, "an elicitation result", &answer, format!("unknown action `{other}`"))),
    }
}

/// The key the confirmation guard asks under (a handler's keys may not start with
/// [`RESERVED_PREFIX`]).
pub const CONFIRM_KEY: &str = "trails_confirm";

pub(super) fn confirmed(answer: Value) -> Result<bool, Error> {
    let parsed = elicit_answer(CONFIRM_KEY, &answer)?;
    let yes = parsed.content.as_ref().and_then(|content| content.get("confirm")).and_then(Value::as_bool);
    Ok(parsed.action == "accept" && yes == Some(true))
}

pub(super) fn sample_params(sample: &Sample) -> Value {
    sample.params()
}

pub(super) fn sampled(key: &str, answer: Value) -> Result<Sampled, Error> {
    serde_json::from_value(answer.clone()).map_err(|error| malformed(key, "a sampling result", &answer, error))
}

pub(super) fn roots(key: &str, answer: Value) -> Result<Vec<Root>, Error> {
    #[derive(Deserialize)]
    struct Roots {
        roots: Vec<Root>,
    }
    serde_json::from_value::<Roots>(answer.clone())
        .map(|roots| roots.roots)
        .map_err(|error| malformed(key, "a roots/list result", &answer, error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_stops_the_call_at_its_first_unanswered_questions_and_asks_them_together() {
        let round = Arc::new(Round::default());
        let input = Input::Round(round.clone());
        let mut reached_the_end = false;
        let asked = futures_util::FutureExt::now_or_never(until_asked(Some(&round), async {
            let (a, b) = futures_util::future::join(
                ask(&input, "a", Kind::Roots, json!({})),
                ask(&input, "b", Kind::Sampling, json!({ "maxTokens": 1 })),
            )
            .await;
            reached_the_end = true;
            (a.is_ok(), b.is_ok())
        }))
        .expect("never waits");
        let asked = asked.expect_err("both unanswered");
        assert!(!reached_the_end, "stopped where it waited");
        assert_eq!(asked.requests.len(), 2);
        assert_eq!(asked.requests["a"]["method"], "roots/list");
        assert_eq!(asked.requests["b"]["params"]["maxTokens"], 1);
    }

    #[test]
    fn an_answered_round_runs_the_call_to_its_end() {
        let mut answers = Map::new();
        answers.insert("a".into(), json!({ "roots": [{ "uri": "file:///r" }] }));
        let round = Arc::new(Round::new(answers));
        let input = Input::Round(round.clone());
        let done = futures_util::FutureExt::now_or_never(until_asked(Some(&round), async {
            roots("a", ask(&input, "a", Kind::Roots, json!({})).await.unwrap()).unwrap()
        }))
        .unwrap()
        .unwrap();
        assert_eq!(done, vec![Root { uri: "file:///r".into(), name: None }]);
    }

    #[test]
    fn a_malformed_answer_names_its_key() {
        let Err(Error::Validation { errors, .. }) = roots("where", json!(12345)) else { panic!() };
        assert_eq!(errors[0].field, "inputResponses.where");
        let Err(Error::Validation { .. }) = sampled("s", json!({ "role": "assistant" })) else { panic!() };
        let sampled = sampled("s", json!({ "content": { "type": "text", "text": "Paris" }, "model": "m" })).unwrap();
        assert_eq!(sampled.text(), "Paris");
    }

    #[tokio::test]
    async fn a_question_a_spawned_task_asks_ends_the_round_too() {
        let round = Arc::new(Round::default());
        let input = Input::Round(round.clone());
        let asked = until_asked(Some(&round), async {
            let input = input.clone();
            tokio::spawn(async move { ask(&input, "later", Kind::Roots, json!({})).await.is_ok() }).await
        })
        .await;
        assert_eq!(asked.expect_err("asked from the task").requests.len(), 1);
    }

    struct Echo;
    impl Asker for Echo {
        fn ask(&self, key: &str, _: &'static str, _: Value) -> BoxFuture<'static, Result<Value, Error>> {
            let key = key.to_owned();
            Box::pin(async move { Ok(json!({ "roots": [{ "uri": format!("file:///{key}") }] })) })
        }
    }

    #[test]
    fn an_escalated_round_asks_through_its_asker_and_one_that_waited_cannot_escalate() {
        let round = Arc::new(Round::default());
        let input = Input::Round(round.clone());
        assert!(round.escalate(Arc::new(Echo)));
        let roots = futures_util::FutureExt::now_or_never(until_asked(Some(&round), async {
            roots("r", ask(&input, "r", Kind::Roots, json!({})).await.unwrap()).unwrap()
        }))
        .unwrap()
        .expect("asked of the asker, not ended");
        assert_eq!(roots[0].uri, "file:///r");

        let waited = Arc::new(Round::default());
        let input = Input::Round(waited.clone());
        let asked = futures_util::FutureExt::now_or_never(until_asked(Some(&waited), async {
            ask(&input, "q", Kind::Roots, json!({})).await.is_ok()
        }));
        assert!(matches!(asked, Some(Err(_))), "ended with its question");
        assert!(!waited.escalate(Arc::new(Echo)), "its question was taken: it ends as an input-required round");
    }

    #[test]
    fn a_question_outside_the_run_fails_at_once_and_a_key_asked_again_is_asked_anew() {
        let mut answers = Map::new();
        answers.insert("a".into(), json!({ "roots": [] }));
        answers.insert("unasked".into(), json!({ "roots": [] }));
        let round = Arc::new(Round::new(answers));
        let input = Input::Round(round.clone());
        let outside = futures_util::FutureExt::now_or_never(ask(&input, "a", Kind::Roots, json!({})));
        assert!(matches!(outside, Some(Err(Error::Internal(_)))), "no round is running");
        let asked = futures_util::FutureExt::now_or_never(until_asked(Some(&round), async {
            assert!(ask(&input, "a", Kind::Roots, json!({})).await.is_ok(), "answered the first time");
            ask(&input, "a", Kind::Roots, json!({})).await.is_ok()
        }))
        .expect("never waits");
        assert!(asked.expect_err("asked again").requests.contains_key("a"));
        let kept: Vec<String> = round.consulted().keys().cloned().collect();
        assert_eq!(kept, ["a"], "an answer the call never read is not carried on");
    }
}
