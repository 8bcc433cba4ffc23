//! The transport-neutral core of [Trails for Rust](https://docs.rs/trails): what the macros
//! declare (schemas, node types, capabilities), the validators, the registry that collects them,
//! the projections rendered from it, and the call pipeline with its guards.
//!
//! Applications depend on `trails`, which re-exports what they use from here; this crate is for
//! the other Trails crates (the knowledge graph, governance, the servers) and for guards.
#![warn(missing_docs)]

#[doc(hidden)]
pub mod auth;
#[doc(hidden)]
pub mod ctx;
#[doc(hidden)]
pub mod declare;
#[doc(hidden)]
pub mod error;
pub mod pipeline;
#[doc(hidden)]
pub mod projection;
#[doc(hidden)]
pub mod registry;
#[doc(hidden)]
pub mod validate;

pub use auth::{sha256_hex, BadTokenHash, Scope, ScopeSet, UnknownScope};
pub use ctx::input::{Elicited, Root, Sample, Sampled};
pub use ctx::{
    AppState, Cancellation, ClientLog, Ctx, DistributedTrace, LogLevel, LogSink, Progress, ProgressSink, RequestInfo,
    TaskSink, TaskSwitch,
};
pub use declare::{
    Annotations, Audience, Blob, BlobError, Content, Datatype, DateTime, DisplayRole, Effects, Embedded, HandlerResult,
    MessageRole, NodeType, NodeTypeInfo, ObjectShape, Output, PredicateInfo, PromptMessage, PromptOutput, PromptResult,
    Ref, ResourceOutput, ResourceResult, Schema, Shape, ToolOutput, Unmet, WriteOp,
};
pub use error::{DomainError, Error, ErrorKind, Result};
pub use pipeline::NoSuchTool;
pub use pipeline::SPANS;
pub use registry::{
    Cost, DuplicateError, PromptEntry, Reasoning, Registry, RegistryError, ResourceEntry, ShapeEntry, TaskSupport,
    ToolEntry, ToolKind,
};
pub use validate::{Errors, FieldCode, FieldError, Path, PatternError, MAX_FIELD_ERRORS};

/// Support for generated code. Not a public API: names here change without notice. Generated
/// code names nothing outside this module (the facade adds the knowledge graph's query types).
#[doc(hidden)]
pub mod __private {
    pub use const_format::concatcp;
    pub use linkme;
    pub use serde;
    pub use serde_json;

    pub use crate::auth::Scope;
    pub use crate::ctx::Ctx;
    pub use crate::declare::{
        shape_output, Datatype, DisplayRole, Effects, Embedded, HandlerResult, NodeType, NodeTypeInfo, ObjectShape,
        Output, PredicateInfo, PromptMessage, PromptResult, ResourceResult, Schema, Shape, ToolOutput, Unmet,
        LIST_CUT_MEMBERS,
    };
    pub use crate::error::{Error, Result};
    pub use crate::registry::{
        BoxFuture, Declared, PromptEntry, Reasoning, ResourceEntry, ShapeEntry, TaskSupport, ToolEntry, ToolKind,
        PROMPTS, RESOURCES, SHAPES, TOOLS,
    };
    pub use crate::validate::{
        concat_names, contains_name, if_nonempty, may_hold, validate_item, validate_object, ArrayRule, Errors,
        FieldRule, IntegerRule, ItemRule, NumberRule, ObjectRules, Path, Pattern, StringRule, NO_RULES, PATTERNS,
    };

    /// Turn a deserialisation failure of already-validated arguments into an internal error:
    /// reaching it means a validator and its type disagree, which is a bug, not bad input.
    pub fn deserialize_failed(tool: &str, error: serde_json::Error) -> crate::Error {
        crate::Error::internal(format!("{tool}: validated arguments did not deserialise: {error}"))
    }
}
