//! The knowledge graph as a handler reaches it: `ctx.kg()`.

use super::Kg;
use crate::error::Error;
use trails_core::Ctx;

/// [`Kg`] on a call's [`Ctx`]: the server attaches the configured graph to every call (recording
/// what the call touches, for its provenance); a test attaches its own. In `trails::prelude`.
pub trait KgCtx: Sized {
    /// The knowledge graph. Its absence is a server misconfiguration, reported to the client as
    /// an internal error.
    fn kg(&self) -> Result<&Kg, Error>;
    /// The same context with a knowledge graph (the server sets the configured one; tests can
    /// give `Kg::temporary()`).
    fn with_kg(self, kg: Kg) -> Self;
}

impl KgCtx for Ctx {
    fn kg(&self) -> Result<&Kg, Error> {
        self.extension::<Kg>().ok_or_else(|| Error::internal("no knowledge graph is configured for this call"))
    }

    fn with_kg(self, kg: Kg) -> Self {
        self.with_extension(kg)
    }
}
