//! What the macros implement: the [`Schema`], [`Shape`] and [`NodeType`] traits whose associated
//! constants carry the build-time projections, what a handler may return ([`ToolOutput`]), the
//! field types with a fixed projection ([`Ref`], [`DateTime`], [`Blob`]) and the RDF mapping of node types.

#[doc(hidden)]
pub mod blob;
mod content;
mod contract;
mod output;
mod prompt;
#[doc(hidden)]
pub mod rdf;
mod reference;
mod resource;
mod traits;

pub use blob::{Blob, BlobError};
pub use content::{Annotations, Audience, Content, Embedded};
pub use contract::{Effects, Unmet, WriteOp};
#[doc(hidden)]
pub use output::{shape_output, LIST_CUT_MEMBERS};
pub use output::{HandlerResult, Output, ToolOutput};
pub use prompt::{MessageRole, PromptMessage, PromptOutput, PromptResult};
pub use rdf::{Datatype, DisplayRole, NodeTypeInfo, PredicateInfo};
pub use reference::{DateTime, Ref};
pub use resource::{ResourceOutput, ResourceResult};
pub use traits::{NodeType, ObjectShape, Schema, Shape};
