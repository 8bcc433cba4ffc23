//! `trails.meta.ping`: liveness.

use trails_core::{Ctx, Result};
use trails_macros::{meta_capability, shape};

/// Liveness answer of `trails.meta.ping`.
#[shape(iri = "https://w3id.org/trails/meta#Pong")]
pub(crate) struct Pong {
    /// Always `pong`.
    pub reply: String,
    /// The `message` argument, echoed back when one was given.
    pub echo: Option<String>,
    /// Trace id of this call, to correlate with server logs.
    pub trace_id: String,
}

/// Check that the server is up and answering; echoes `message` back.
#[meta_capability(op = "ping", scope = "runtime", version = "1.0.0", side_effects(none), idempotent)]
async fn ping(
    ctx: &Ctx,
    /// Optional text to echo back.
    #[predicate(max_length = 200)]
    message: Option<String>,
) -> Result<Pong> {
    Ok(Pong { reply: "pong".to_owned(), echo: message, trace_id: ctx.trace_id().to_owned() })
}
