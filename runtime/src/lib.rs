//! Trails for Rust — serve build-time projections of annotated capabilities to agents.
//!
//! Annotate types with [`shape`] / [`node_type`] and async handlers with [`capability`] /
//! [`meta_capability`]; the macros emit every projection (JSON Schema, MCP tool descriptor,
//! canonical JSON-LD descriptor, RDF mapping, validator) as static data collected into the
//! [`Registry`](registry::Registry). The runtime assembles and serves those tables; it never
//! derives a schema itself. This crate is its facade: what an author writes, re-exported from the
//! layers (`trails-core`, `trails-kg`, `trails-serve`), with features that select their parts.
//!
//! ```
//! use trails::registry::Registry;
//! use trails::{capability, meta_capability, node_type, shape, Ctx, Ref, Result};
//!
//! /// Someone who owns requirements.
//! #[node_type(label = "Person", iri = "https://example.org/req#Person", unique = ["email"])]
//! pub struct Person {
//!     #[predicate(min_length = 1, max_length = 120)]
//!     pub name: String,
//!     #[predicate(pattern = r"^[^@\s]+@[^@\s]+$", max_length = 254)]
//!     pub email: String,
//! }
//!
//! /// What `requirements.find` takes.
//! #[shape(iri = "https://example.org/req#FindInput")]
//! pub struct FindInput {
//!     /// Text to look for.
//!     #[predicate(min_length = 1, max_length = 200)]
//!     pub query: String,
//!     /// Only requirements owned by this person.
//!     pub owner: Option<Ref<Person>>,
//! }
//!
//! /// A match.
//! #[shape(iri = "https://example.org/req#Hit")]
//! pub struct Hit {
//!     pub title: String,
//! }
//!
//! /// Find requirements by text.
//! #[capability(id = "requirements.find", version = "1.0.0", side_effects(none), idempotent)]
//! async fn find(input: FindInput) -> Result<Vec<Hit>> {
//!     Ok(vec![Hit { title: format!("about {}", input.query) }])
//! }
//!
//! /// How many requirements there are (builder scope).
//! #[meta_capability(namespace = "requirements", op = "count", scope = "builder", side_effects(none))]
//! async fn count(_ctx: &Ctx) -> Result<String> {
//!     Ok("0".to_owned())
//! }
//!
//! // Every annotated item is in the registry, validated before it is dispatched.
//! let registry = Registry::collect().unwrap();
//! let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let hits = runtime
//!     .block_on(registry.call("requirements.find", Ctx::local(), serde_json::json!({"query": "login"})))
//!     .unwrap();
//! assert_eq!(hits.structured.unwrap()["items"][0]["title"], "about login");
//! let refused = runtime.block_on(registry.call("requirements.find", Ctx::local(), serde_json::json!({"query": ""})));
//! assert!(matches!(refused, Err(trails::Error::Validation { total: 1, .. })));
//! assert!(registry.tool("trails_meta_requirements_count").is_some());
//! // A binary serves them all: `fn main() -> std::process::ExitCode { trails::App::new().run() }`.
//! ```
#![warn(missing_docs)]

/// The call pipeline: a call's path through the guards to the handler, and [`Guard`](pipeline::Guard),
/// the one extension point (the built-in checks are guards too).
pub use trails_core::pipeline;
/// The knowledge graph: typed instances of node types, the stores, provenance.
pub use trails_kg as kg;
pub use trails_serve::{config, part, serve};

// What an author writes; everything else is in a named module.
pub use trails_core::{Blob, Ctx, DateTime, Error, LogLevel, Ref, Result};
pub use trails_macros::{capability, meta_capability, node_type, prompt, resource, shape};
pub use trails_serve::{App, BuildError};

#[cfg(feature = "dev")]
#[doc(hidden)]
pub use trails_serve::snapshot;

/// What the attribute macros implement and a handler returns: the traits behind `#[shape]`
/// and `#[node_type]`, and a capability's output.
pub mod declare {
    pub use trails_core::{
        BlobError, Datatype, DisplayRole, HandlerResult, NodeType, NodeTypeInfo, ObjectShape, Output, PredicateInfo,
        Schema, Shape, ToolOutput,
    };
}

/// What a result (and a prompt's message) is made of besides text and structured content:
/// images, audio, embedded resources and links, with MCP's annotations. A capability returns one
/// [`Content`](content::Content) or a `Vec<Content>` (mixed content); see chapter 2 of the guide.
pub mod content {
    pub use trails_core::{Annotations, Audience, Content, Embedded};
}

/// The app's own resources: what a `#[resource]` returns, and the linked entries; see chapter 2
/// of the guide.
pub mod resource {
    pub use trails_core::{ResourceEntry, ResourceOutput, ResourceResult};
}

/// Prompts: what a `#[prompt]` returns ([`PromptMessage`](prompt::PromptMessage)s), and the
/// linked entries; see chapter 2 of the guide.
pub mod prompt {
    pub use trails_core::{MessageRole, PromptEntry, PromptMessage, PromptOutput, PromptResult};
}

/// What a handler asks its client while it runs ([`Ctx::elicit`], [`Ctx::sample`],
/// [`Ctx::roots`]): the user's answer, the client's model's, the client's roots; see chapter 2 of
/// the guide.
pub mod input {
    pub use trails_core::{Elicited, Root, Sample, Sampled};
}

/// What a call fails with: validation failures (the field errors a refused call carries, which a
/// handler may return for its own rules) and the domain errors a handler returns for the caller to
/// act on (`Error::not_found`, `conflict`, `precondition_failed`, `unavailable`).
pub mod error {
    pub use trails_core::{
        DomainError, Error, ErrorKind, Errors, FieldCode, FieldError, Path, Result, MAX_FIELD_ERRORS,
    };
}

/// The linked tables of an app's declarations: what [`App`] collects, and what a test or a tool
/// may list and call directly.
pub mod registry {
    pub use trails_core::{
        Cost, DuplicateError, NoSuchTool, PatternError, Reasoning, Registry, RegistryError, ShapeEntry, TaskSupport,
        ToolEntry, ToolKind,
    };
}

/// Scopes (`runtime`, `builder`, `dev`), bearer-token digests, and who calls (a part's routes
/// read the `Caller` from the request's extensions).
pub mod auth {
    pub use trails_core::auth::Caller;
    pub use trails_core::{sha256_hex, BadTokenHash, Scope, ScopeSet, UnknownScope};
}

/// What a module of capabilities needs: `use trails::prelude::*;`.
pub mod prelude {
    pub use crate::content::{Content, Embedded};
    pub use crate::declare::Output;
    pub use crate::error::{FieldCode, FieldError};
    pub use crate::input::{Elicited, Sample};
    pub use crate::kg::KgCtx;
    pub use crate::prompt::PromptMessage;
    pub use crate::{
        capability, meta_capability, node_type, prompt, resource, shape, Blob, Ctx, DateTime, Error, LogLevel, Ref,
        Result,
    };
}

/// Test your capabilities in process, without sockets: a [`Client`](testing::Client) calls a built
/// [`Server`](crate::serve::Server) through the same path as `tools/call` over MCP — the caller's scopes, bearer
/// tokens checked as HTTP checks them, admission, every guard, validation, the handler, result
/// bounding — and gets what the wire would carry. A handler's questions (`ctx.elicit`, a declared
/// `confirm`) get the answers given with [`Client::answering`](testing::Client::answering), or end
/// the call with the input-required result naming them. What it does not do: send an
/// idempotency key, apply a transport's own limits (`[http] max_body_bytes`, the stdio line
/// bound), or answer in a 2026-07-28 peer's shape. The `testing` feature, for dev-dependencies:
///
/// ```toml
/// [dev-dependencies]
/// trails-mcp = { version = "0.1", features = ["testing"] }
/// tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
/// serde_json = "1"
/// ```
///
/// ```
/// use serde_json::json;
/// use trails::prelude::*;
/// use trails::testing::Client;
///
/// #[shape(iri = "https://example.org/notes#EchoInput")]
/// pub struct EchoInput {
///     /// Text to echo.
///     #[predicate(min_length = 1, max_length = 200)]
///     pub text: String,
/// }
///
/// /// Echo the text back.
/// #[capability(id = "notes.echo", version = "1.0.0", side_effects(none), idempotent)]
/// async fn echo(input: EchoInput) -> Result<EchoInput> {
///     Ok(input)
/// }
///
/// #[tokio::main]
/// async fn main() {
///     let server = trails::App::new().build(trails::config::Settings::default()).unwrap();
///     let client = Client::anonymous(&server);
///
///     let echoed = client.call("notes.echo", json!({ "text": "hello" })).await.unwrap();
///     assert_eq!(echoed["structuredContent"]["text"], "hello");
///
///     let refused = client.call("notes.echo", json!({ "text": "" })).await.unwrap_err();
///     assert_eq!(refused.code, -32602);
///     assert_eq!(refused.data.unwrap()["fields"][0]["field"], "text"); // and `code`, `constraint`, …
/// }
/// ```
///
/// Access control is tested the same way: settings built as typed values (the sections of
/// `trails.toml`), a token, and the scopes it grants.
///
/// ```
/// # use trails::prelude::*;
/// use trails::config::{Config, HttpConfig, McpConfig, Settings, TokenConfig};
/// use trails::testing::Client;
///
/// /// How many notes there are (builder scope).
/// #[meta_capability(namespace = "notes", op = "count", scope = "builder", side_effects(none))]
/// async fn count(_ctx: &Ctx) -> Result<String> {
///     Ok("0".to_owned())
/// }
///
/// # #[tokio::main]
/// # async fn main() {
/// let token = TokenConfig {
///     name: "ci".into(),
///     sha256: trails::auth::sha256_hex("s3cret"),
///     scopes: vec!["builder".into()],
///     budget: None,
/// };
/// let config = Config {
///     mcp: McpConfig { scopes: Some(vec!["runtime".into(), "builder".into()]), ..Default::default() },
///     http: HttpConfig { tokens: vec![token], ..Default::default() },
///     ..Default::default()
/// };
/// let settings = Settings::resolve(config, |_variable| None).unwrap(); // no TRAILS_* here
/// let server = trails::App::new().build(settings).unwrap();
///
/// let name = "trails_meta_notes_count";
/// let denied = Client::anonymous(&server).call(name, serde_json::json!({})).await.unwrap_err();
/// assert_eq!(denied.code, -32001); // authentication required for a builder tool
/// let builder = Client::with_token(&server, "s3cret").unwrap();
/// assert_eq!(builder.call(name, serde_json::json!({})).await.unwrap()["content"][0]["text"], "0");
/// assert!(Client::with_token(&server, "wrong").is_err());
/// # }
/// ```
#[cfg(feature = "testing")]
pub mod testing {
    pub use trails_serve::testing::{CallError, Client};
}

/// The guide, in chapters: the files in `runtime/guide/` (the README links them), here so that
/// rustdoc renders them and the test suite compiles their Rust snippets as doctests.
#[cfg(any(doc, doctest))]
pub mod _guide {
    #[doc = include_str!("../guide/01-first-app.md")]
    pub mod _01_first_app {}
    #[doc = include_str!("../guide/02-declaring.md")]
    pub mod _02_declaring {}
    #[doc = include_str!("../guide/03-knowledge-graph.md")]
    pub mod _03_knowledge_graph {}
    #[doc = include_str!("../guide/04-serving.md")]
    pub mod _04_serving {}
    #[doc = include_str!("../guide/05-governance.md")]
    pub mod _05_governance {}
    #[doc = include_str!("../guide/06-authoring-tools.md")]
    pub mod _06_authoring_tools {}
    #[doc = include_str!("../guide/07-wire-contract.md")]
    pub mod _07_wire_contract {}
    #[doc = include_str!("../guide/08-benchmarks.md")]
    pub mod _08_benchmarks {}
    #[doc = include_str!("../guide/09-replicas.md")]
    pub mod _09_replicas {}
    #[doc = include_str!("../guide/10-tasks.md")]
    pub mod _10_tasks {}
}

/// The fuzz targets' entry points (`fuzz/`, built with `--cfg fuzzing`).
#[cfg(fuzzing)]
#[doc(hidden)]
pub use trails_serve::__fuzz;

#[doc(hidden)]
pub use trails_serve::__private;
