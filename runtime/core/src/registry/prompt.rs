//! The prompts the `#[prompt]` attribute emits, and how one is got: its arguments validated as
//! a tool's are (every field error at once), then its function run.

use std::collections::BTreeMap;

use linkme::distributed_slice;
use serde_json::Value;

use super::{BoxFuture, DuplicateError, Registry};
use crate::auth::Scope;
use crate::ctx::Ctx;
use crate::declare::PromptMessage;
use crate::error::Error;
use crate::validate::{run, NestedValidator};

/// Deserialise the (already validated) arguments and run the prompt's function.
pub type PromptFn = fn(Ctx, Value) -> BoxFuture<Result<Vec<PromptMessage>, Error>>;

/// One prompt as `#[prompt]` emitted it.
pub struct PromptEntry {
    pub(crate) name: &'static str,
    pub(crate) scope: Scope,
    pub(crate) descriptor: &'static str,
    pub(crate) completions: &'static [(&'static str, &'static [&'static str])],
    pub(crate) validate: NestedValidator,
    pub(crate) get: PromptFn,
    pub(crate) source: &'static str,
}

impl PromptEntry {
    /// Used by `#[prompt]`; not a public API.
    #[doc(hidden)]
    pub const fn __new(
        name: &'static str,
        scope: Scope,
        descriptor: &'static str,
        completions: &'static [(&'static str, &'static [&'static str])],
        validate: NestedValidator,
        get: PromptFn,
        source: &'static str,
    ) -> PromptEntry {
        PromptEntry { name, scope, descriptor, completions, validate, get, source }
    }

    /// Its name in `prompts/list`.
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// The scope a caller needs to list and get it.
    pub fn scope(&self) -> Scope {
        self.scope
    }
    /// The `prompts/list` entry, JSON, exactly as served.
    pub fn descriptor(&self) -> &'static str {
        self.descriptor
    }
    /// The values argument `argument` may take (its `one_of`), for `completion/complete`.
    pub fn completions(&self, argument: &str) -> &'static [&'static str] {
        self.completions.iter().find(|(name, _)| *name == argument).map_or(&[], |(_, values)| values)
    }
    /// The Rust path of its function.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// Validate `arguments` (missing means `{}`) then run the prompt's function: every argument
    /// error at once, as a tool's.
    pub async fn get(&self, ctx: Ctx, arguments: Value) -> Result<Vec<PromptMessage>, Error> {
        let arguments = if arguments.is_null() { Value::Object(Default::default()) } else { arguments };
        let errors = run(self.validate, &arguments);
        if !errors.is_empty() {
            return Err(Error::from(errors));
        }
        (self.get)(ctx, arguments).await
    }
}

impl std::fmt::Debug for PromptEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptEntry").field("name", &self.name).field("source", &self.source).finish_non_exhaustive()
    }
}

/// Every `#[prompt]` linked into the binary.
#[doc(hidden)]
#[distributed_slice]
pub static PROMPTS: [PromptEntry];

/// The prompts by name; two of one name are refused, naming both.
pub(crate) fn by_name(
    prompts: impl IntoIterator<Item = &'static PromptEntry>,
) -> Result<BTreeMap<&'static str, &'static PromptEntry>, DuplicateError> {
    let mut by_name = BTreeMap::new();
    for prompt in prompts {
        if let Some(first) = by_name.insert(prompt.name, prompt) {
            return Err(DuplicateError {
                what: "prompt",
                name: prompt.name,
                first: first.source,
                second: prompt.source,
                ids: None,
            });
        }
    }
    Ok(by_name)
}

impl Registry {
    /// Prompts in name order.
    pub fn prompts(&self) -> impl Iterator<Item = &'static PromptEntry> + '_ {
        self.prompts.values().copied()
    }

    /// The prompt named `name`.
    pub fn prompt(&self, name: &str) -> Option<&'static PromptEntry> {
        self.prompts.get(name).copied()
    }
}
