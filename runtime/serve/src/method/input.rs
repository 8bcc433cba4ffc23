//! Input-required results (MCP 2026-07-28's multi round-trip requests) and, for 2025 sessions,
//! the server-to-client requests: how `ctx.elicit`, `ctx.sample` and `ctx.roots` reach the
//! client of `tools/call`, `prompts/get` and `resources/read`.
//!
//! A 2026-07-28 call runs as a round ([`trails_core::ctx::input::Round`]) with the answers the
//! client gave so far. One that asks what the round has no answer for is answered with
//! `InputRequiredResult`: its questions, and a `requestState` sealing every answer so far
//! (XChaCha20-Poly1305 under the server's key, bound to the method, its target, the caller and
//! the arguments, with an expiry). The client calls again with the new answers and the state;
//! a state that does not open — tampered, expired, sealed for another call or under a key the
//! server no longer has — is refused (`-32602`) and nothing runs.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::model::{ErrorData, InputRequiredResult, InputResponses};
use serde_json::{json, Map, Value};

use super::Request;
use crate::state::Shared;
use crate::wire::request_state::{refused, MAX_STATE_BYTES};
use trails_core::ctx::input::{self, Asked, Asker, Input, Round};

/// Most bytes of the answers a call carries over its rounds: a state holding them fits.
const MAX_ANSWER_BYTES: usize = MAX_STATE_BYTES / 2;

/// Most answers one call collects over its rounds.
const MAX_ANSWERS: usize = 64;
/// What a state is bound to begins with this: no other use of the keys opens one.
const DOMAIN: &str = "trails/request-state/1";

/// A 2026-07-28 request's rounds: the round it runs as, and what its state is bound to.
pub(crate) struct Rounds {
    round: Arc<Round>,
    binding: Vec<u8>,
}

impl Rounds {
    /// The rounds of `request`, which asks `method` of `target` with `arguments`: the answers its
    /// `state` sealed, with those of the `responses` it carries now that answer what the state
    /// says was asked (without a state, any but the server's own keys: the first round asked
    /// nothing yet). `None` before 2026-07-28 (a 2025 client is asked through its session).
    /// `Err`: a state that does not open, answers that are not results or too many or too large
    /// (`-32602`); nothing runs.
    pub(crate) fn of(
        shared: &Shared,
        request: &Request,
        (method, target): (&str, &str),
        arguments: Option<&Map<String, Value>>,
        state: Option<String>,
        responses: Option<InputResponses>,
    ) -> Result<Option<Rounds>, ErrorData> {
        if !request.current() {
            return Ok(None);
        }
        // `{}` and no arguments are the same call; the same arguments in another order too.
        let arguments = arguments.filter(|arguments| !arguments.is_empty()).map(canonical);
        let caller = &request.caller;
        let scopes = caller.scopes.names();
        let bound = json!([DOMAIN, shared.name, method, target, caller.name, caller.client, scopes, arguments]);
        let binding = serde_json::to_vec(&bound).map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let (mut answers, asked) = match state {
            Some(state) => {
                let mut opened = shared.sealer.open(&state, &binding)?;
                let answers = match opened.remove("answers") {
                    Some(Value::Object(answers)) => answers,
                    _ => Map::new(),
                };
                let asked: Vec<String> =
                    opened.remove("asked").and_then(|asked| serde_json::from_value(asked).ok()).unwrap_or_default();
                (answers, Some(asked))
            }
            None => (Map::new(), None),
        };
        for (key, answer) in responses.unwrap_or_default() {
            let expected = match &asked {
                Some(asked) => asked.contains(&key),
                None => !key.starts_with(input::RESERVED_PREFIX),
            };
            // What was not asked is ignored (MCP: unrecognised answers are not an error).
            if !expected {
                continue;
            }
            if !answer.is_object() {
                return Err(refused(&format!("inputResponses.{key} is not a result object (the client's answer)")));
            }
            answers.insert(key, answer);
        }
        if answers.len() > MAX_ANSWERS {
            return Err(refused(&format!("one call takes at most {MAX_ANSWERS} answers")));
        }
        let size = serde_json::to_vec(&answers).map_or(0, |text| text.len());
        if size > MAX_ANSWER_BYTES {
            return Err(refused(&format!(
                "the answers come to {size} bytes; one call carries at most {MAX_ANSWER_BYTES} over its rounds"
            )));
        }
        Ok(Some(Rounds { round: Arc::new(Round::new(answers)), binding }))
    }

    /// The round the request runs as.
    pub(crate) fn round(&self) -> Arc<Round> {
        self.round.clone()
    }

    /// The input-required result for what the round `asked`: its questions, and the state
    /// sealing what the next round needs (the answers the call read, the keys it asked).
    pub(crate) fn input_required(&self, shared: &Shared, asked: Asked) -> Result<InputRequiredResult, ErrorData> {
        let keys: Vec<&String> = asked.requests.keys().collect();
        let mut payload = Map::new();
        payload.insert("answers".to_owned(), Value::Object(self.round.consulted()));
        payload.insert("asked".to_owned(), json!(keys));
        let state = shared.sealer.seal(payload, &self.binding)?;
        let requests = serde_json::from_value(Value::Object(asked.requests))
            .map_err(|error| ErrorData::internal_error(format!("an input request rmcp cannot carry: {error}"), None))?;
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }
}

/// `value` with every object's keys in order (a binding must not depend on how they were sent).
fn canonical(arguments: &Map<String, Value>) -> Value {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|key| (key.clone(), sorted(&map[key]))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(&Value::Object(arguments.clone()))
}

/// The answer to a request that ran as a round and asked: its input-required result, or —
/// where no round could carry it — the refusal saying so.
pub(crate) fn asked(shared: &Shared, rounds: Option<&Rounds>, asked: Asked) -> Result<InputRequiredResult, ErrorData> {
    match rounds {
        Some(rounds) => rounds.input_required(shared, asked),
        None => Err(crate::wire::call::refusal(&trails_core::pipeline::Refusal::InputRequired(Box::new(asked)))),
    }
}

/// A 2025 session's (or stdio's) way to ask: a request to the client on its connection, waited
/// for at most `within` (the time a user has to answer, `[mcp] request_state_secs`) and until
/// the client cancels the call.
pub(crate) struct ToClient {
    pub(crate) peer: rmcp::Peer<rmcp::RoleServer>,
    pub(crate) within: std::time::Duration,
    pub(crate) cancel: Option<tokio_util::sync::CancellationToken>,
}

impl Asker for ToClient {
    fn ask(
        &self,
        _key: &str,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, trails_core::Error>> {
        let (peer, within, cancel) = (self.peer.clone(), self.within, self.cancel.clone().unwrap_or_default());
        Box::pin(async move {
            let request: rmcp::model::ServerRequest =
                serde_json::from_value(json!({ "method": method, "params": params }))
                    .map_err(|error| trails_core::Error::internal(format!("{method} rmcp cannot carry: {error}")))?;
            let answered = tokio::select! {
                answered = tokio::time::timeout(within, peer.send_request(request)) => answered,
                () = cancel.cancelled() => {
                    return Err(trails_core::Error::precondition_failed(format!("the client cancelled the call while it asked ({method})")));
                }
            };
            let answer = match answered {
                Err(_) => {
                    let secs = within.as_secs();
                    return Err(trails_core::Error::unavailable(format!(
                        "the client did not answer {method} within {secs} s"
                    )));
                }
                Ok(Err(rmcp::ServiceError::McpError(error))) => {
                    let message = format!("the client refused {method}: {}", error.message);
                    return Err(trails_core::Error::precondition_failed(message));
                }
                Ok(Err(error)) => {
                    return Err(trails_core::Error::unavailable(format!(
                        "the client did not answer {method}: {error}"
                    )));
                }
                Ok(Ok(answer)) => answer,
            };
            serde_json::to_value(answer).map_err(|error| trails_core::Error::internal(error.to_string()))
        })
    }
}

/// How a request's handler asks its client: rounds from 2026-07-28 on, else a request on the
/// connection where one carries the answer back (stdio, a 2025 session), else not at all.
pub(crate) fn input(round: Option<Arc<Round>>, request: &Request, within: std::time::Duration) -> Option<Input> {
    if let Some(round) = round {
        return Some(Input::Round(round));
    }
    let connected = request.transport == super::Transport::Stdio || request.session.is_some();
    let peer = request.peer.as_ref().filter(|_| connected)?;
    Some(Input::Ask(Arc::new(ToClient { peer: peer.clone(), within, cancel: request.cancel.clone() })))
}
