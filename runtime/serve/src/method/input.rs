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
use crate::wire::request_state::refused;
use trails_core::ctx::input::{Asked, Asker, Input, Round};

/// Most answers one call collects over its rounds.
const MAX_ANSWERS: usize = 64;

/// A 2026-07-28 request's rounds: the round it runs as, and what its state is bound to.
pub(crate) struct Rounds {
    round: Arc<Round>,
    binding: Vec<u8>,
}

impl Rounds {
    /// The rounds of `request`, which asks `method` of `target` with `arguments`: the answers its
    /// `state` sealed, with the `responses` it carries now. `None` before 2026-07-28 (a 2025
    /// client asks through the session instead). `Err`: a state that does not open, or answers
    /// that are not results (`-32602`); nothing runs.
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
        // `{}` and no arguments are the same call.
        let arguments = arguments.filter(|arguments| !arguments.is_empty());
        let caller = &request.caller;
        let binding =
            serde_json::to_vec(&json!([method, target, caller.name, caller.client, caller.scopes.names(), arguments]))
                .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let mut answers = match state {
            Some(state) => shared.sealer.open(&state, &binding)?,
            None => Map::new(),
        };
        for (key, answer) in responses.unwrap_or_default() {
            if !answer.is_object() {
                return Err(refused(&format!("inputResponses.{key} is not a result object (the client's answer)")));
            }
            answers.insert(key, answer);
        }
        if answers.len() > MAX_ANSWERS {
            return Err(refused(&format!("one call takes at most {MAX_ANSWERS} answers")));
        }
        Ok(Some(Rounds { round: Arc::new(Round::new(answers)), binding }))
    }

    /// The round the request runs as.
    pub(crate) fn round(&self) -> Arc<Round> {
        self.round.clone()
    }

    /// The input-required result for what the round `asked`: its questions, and the state
    /// sealing the round's answers for the next one.
    pub(crate) fn input_required(&self, shared: &Shared, asked: Asked) -> Result<InputRequiredResult, ErrorData> {
        let requests = serde_json::from_value(Value::Object(asked.requests))
            .map_err(|error| ErrorData::internal_error(format!("an input request rmcp cannot carry: {error}"), None))?;
        let state = shared.sealer.seal(self.round.answers(), &self.binding)?;
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }
}

/// The answer to a request that ran as a round and asked: its input-required result, or —
/// where no round could carry it — the refusal saying so.
pub(crate) fn asked(shared: &Shared, rounds: Option<&Rounds>, asked: Asked) -> Result<InputRequiredResult, ErrorData> {
    match rounds {
        Some(rounds) => rounds.input_required(shared, asked),
        None => Err(crate::wire::call::refusal(&trails_core::pipeline::Refusal::InputRequired(Box::new(asked)))),
    }
}

/// A 2025 session's (or stdio's) way to ask: a request to the client on its connection.
pub(crate) struct ToClient(pub(crate) rmcp::Peer<rmcp::RoleServer>);

impl Asker for ToClient {
    fn ask(&self, method: &'static str, params: Value) -> BoxFuture<'static, Result<Value, trails_core::Error>> {
        let peer = self.0.clone();
        Box::pin(async move {
            let request: rmcp::model::ServerRequest =
                serde_json::from_value(json!({ "method": method, "params": params }))
                    .map_err(|error| trails_core::Error::internal(format!("{method} rmcp cannot carry: {error}")))?;
            let answer = peer.send_request(request).await.map_err(|error| match error {
                rmcp::ServiceError::McpError(error) => {
                    trails_core::Error::precondition_failed(format!("the client refused {method}: {}", error.message))
                }
                error => trails_core::Error::unavailable(format!("the client did not answer {method}: {error}")),
            })?;
            serde_json::to_value(answer).map_err(|error| trails_core::Error::internal(error.to_string()))
        })
    }
}

/// How a request's handler asks its client: rounds from 2026-07-28 on, else through `peer`.
pub(crate) fn input(round: Option<Arc<Round>>, peer: Option<&rmcp::Peer<rmcp::RoleServer>>) -> Option<Input> {
    match (round, peer) {
        (Some(round), _) => Some(Input::Round(round)),
        (None, Some(peer)) => Some(Input::Ask(Arc::new(ToClient(peer.clone())))),
        (None, None) => None,
    }
}
