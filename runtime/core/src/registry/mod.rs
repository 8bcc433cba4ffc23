//! The registry: the static tables the macros fill, assembled once into a [`Registry`], and the
//! type-erased call that validates before it dispatches.
//!
//! Every `#[capability]`, `#[meta_capability]`, `#[shape]` and `#[node_type]` adds one entry to a
//! linker-collected slice ([`linkme`]): no code runs per item at start-up.

mod entry;
mod prompt;
mod resource;

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{json, Value};

pub use entry::{
    BoxFuture, Cost, Declared, PreconditionFn, Reasoning, ShapeEntry, TaskSupport, ToolEntry, ToolKind, SHAPES, TOOLS,
};
pub use prompt::{PromptEntry, PromptFn, PROMPTS};
pub use resource::{ResourceEntry, ResourceFn, RESOURCES};

use crate::ctx::Ctx;
use crate::declare::{NodeTypeInfo, Output};
use crate::error::Error;
use crate::validate::{check_patterns, run, FieldCode, FieldError, PatternError};

/// Two items that claim the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateError {
    /// `tool`, `prompt` or `node type`.
    pub what: &'static str,
    /// The shared name.
    pub name: &'static str,
    /// The first item's Rust path.
    pub first: &'static str,
    /// The second item's Rust path.
    pub second: &'static str,
    /// For tools whose canonical ids differ (`a.b` and `a_b`), the two ids that project to
    /// `name`.
    pub ids: Option<(&'static str, &'static str)>,
}

impl fmt::Display for DuplicateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fix = match self.what {
            "tool" => "change its `id`, or its `namespace`/`op`",
            "prompt" => "change its `name`",
            "resource" => "change its `uri`",
            _ => "give one a different `label`",
        };
        write!(f, "two {}s are both named `{}`: `{}` and `{}`", self.what, self.name, self.first, self.second)?;
        if let Some((first, second)) = self.ids {
            write!(f, " (ids `{first}` and `{second}` project to the same tool name: `.` becomes `_`)")?;
        }
        write!(f, "; rename one ({fix})")
    }
}

impl std::error::Error for DuplicateError {}

/// Why the linked tables cannot be served.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two tools, prompts or node types share a name.
    #[error(transparent)]
    Duplicate(#[from] DuplicateError),
    /// A declared `pattern` that this binary's `regex` does not parse.
    #[error(transparent)]
    Pattern(#[from] PatternError),
}

/// The assembled view of the static tables: sorted, de-duplicated, looked up by name.
#[derive(Debug)]
pub struct Registry {
    tools: BTreeMap<&'static str, &'static ToolEntry>,
    shapes: BTreeMap<&'static str, &'static ShapeEntry>,
    prompts: BTreeMap<&'static str, &'static PromptEntry>,
    resources: BTreeMap<&'static str, &'static ResourceEntry>,
}

impl Registry {
    /// Everything linked into this binary. Fails, naming both items, if two tools (or two
    /// node types) share a name — the macros catch this within one module, this catches the rest
    /// — or if a declared `pattern` does not parse here.
    pub fn collect() -> Result<Registry, RegistryError> {
        check_patterns()?;
        let mut registry = Registry::from_entries(TOOLS.iter(), SHAPES.iter())?;
        registry.prompts = prompt::by_name(PROMPTS.iter())?;
        registry.resources = resource::by_uri(RESOURCES.iter())?;
        Ok(registry)
    }

    pub(crate) fn from_entries(
        tools: impl IntoIterator<Item = &'static ToolEntry>,
        shapes: impl IntoIterator<Item = &'static ShapeEntry>,
    ) -> Result<Registry, DuplicateError> {
        let mut by_name = BTreeMap::new();
        for tool in tools {
            if let Some(first) = by_name.insert(tool.name, tool) {
                let ids = (first.id != tool.id).then_some((first.id, tool.id));
                return Err(DuplicateError {
                    what: "tool",
                    name: tool.name,
                    first: first.source,
                    second: tool.source,
                    ids,
                });
            }
        }
        let mut shapes_by_name = BTreeMap::new();
        let mut labels: BTreeMap<&'static str, &'static ShapeEntry> = BTreeMap::new();
        for shape in shapes {
            if let Some(info) = shape.node_type {
                if let Some(first) = labels.insert(info.label, shape) {
                    return Err(DuplicateError {
                        what: "node type",
                        name: info.label,
                        first: first.source,
                        second: shape.source,
                        ids: None,
                    });
                }
            }
            // Two plain shapes may share a Rust name in different modules; key by source then.
            shapes_by_name.insert(shape.source, shape);
        }
        Ok(Registry { tools: by_name, shapes: shapes_by_name, prompts: BTreeMap::new(), resources: BTreeMap::new() })
    }

    /// Tools in name order.
    pub fn tools(&self) -> impl Iterator<Item = &'static ToolEntry> + '_ {
        self.tools.values().copied()
    }

    /// The tool named `name`: its MCP name (`notes_echo`) or its capability id (`notes.echo`).
    pub fn tool(&self, name: &str) -> Option<&'static ToolEntry> {
        self.tools.get(name).or_else(|| self.tools.values().find(|tool| tool.id == name)).copied()
    }

    /// Shapes and node types, ordered by their Rust path.
    pub fn shapes(&self) -> impl Iterator<Item = &'static ShapeEntry> + '_ {
        self.shapes.values().copied()
    }

    /// The node types' RDF mappings.
    pub fn node_types(&self) -> impl Iterator<Item = &'static NodeTypeInfo> + '_ {
        self.shapes.values().filter_map(|s| s.node_type)
    }

    /// Validate then run a tool: the generated validator sees the raw arguments first, so a
    /// handler never receives input that breaks a declared constraint. Scope checks belong to the
    /// transport, which knows the caller.
    pub async fn call(&self, name: &str, ctx: Ctx, arguments: Value) -> Result<Output, Error> {
        let tool = self.tool(name).ok_or_else(|| Error::UnknownTool(name.to_owned()))?;
        let arguments = validated(tool, arguments, &[])?;
        (tool.call)(ctx, arguments).await
    }

    /// Check `arguments` against tool `name`'s declared input without running it: exactly the
    /// check a call makes first (a dry run; missing arguments mean `{}`).
    pub fn check(&self, name: &str, arguments: &Value) -> Result<(), Error> {
        let tool = self.tool(name).ok_or_else(|| Error::UnknownTool(name.to_owned()))?;
        validated(tool, arguments.clone(), &[]).map(drop)
    }
}

/// `arguments` (missing means `{}`) if they meet `tool`'s declared input and the enums the
/// server added to its schema (`served`), with every integer written as a float rewritten as the
/// integer it is, so the handler's types read them. Every failure is reported at once.
pub(crate) fn validated(tool: &'static ToolEntry, arguments: Value, served: &[ServedEnum]) -> Result<Value, Error> {
    let mut arguments = if arguments.is_null() { Value::Object(Default::default()) } else { arguments };
    let mut errors = run(tool.validate, &arguments);
    for rule in served {
        let Some(Value::String(text)) = arguments.get(rule.property) else { continue };
        // A value the declared constraints refused already (empty, too long) is reported once.
        let flagged = errors.iter().any(|error| error.field == rule.property);
        if !flagged && !rule.values.iter().any(|value| value == text) {
            // The message names a few; the constraint holds them all (the published enum).
            const NAMED: usize = 20;
            let shown = rule.values.iter().take(NAMED).map(|value| format!("{value:?}")).collect::<Vec<_>>().join(", ");
            let more = rule.values.len().saturating_sub(NAMED);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            let message = format!("{} must be one of [{shown}]{more}", rule.property);
            errors.push(FieldError::rejecting(
                rule.property,
                FieldCode::OneOf,
                message,
                &json!(text),
                json!(rule.values),
            ));
        }
    }
    if !errors.is_empty() {
        return Err(Error::from(errors));
    }
    errors.rewrite_integral_floats(&mut arguments);
    Ok(arguments)
}

/// A string argument's allowed values that only the running server knows (the app's node-type
/// labels in the `trails_kg_*` schemas): published as the property's `enum` and checked with
/// the declared constraints.
#[derive(Debug, Clone)]
pub struct ServedEnum {
    /// The top-level argument.
    pub property: &'static str,
    /// What it may be, as the served schema lists them.
    pub values: Vec<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Scope;

    static FIRST: ToolEntry = fake("dup.tool", "dup_tool", "crate_a::handler");
    static SECOND: ToolEntry = fake("dup.tool", "dup_tool", "crate_b::handler");
    static PROJECTED: ToolEntry = fake("dup_tool", "dup_tool", "crate_c::handler");

    const fn fake(id: &'static str, name: &'static str, source: &'static str) -> ToolEntry {
        ToolEntry::__new(
            name,
            id,
            "1.0.0",
            ToolKind::Runtime,
            Scope::Runtime,
            "fake",
            "{}",
            "{}",
            "",
            Declared::__new(
                &[],
                0,
                0.0,
                false,
                false,
                None,
                false,
                None,
                false,
                None,
                TaskSupport::Forbidden,
                crate::declare::Effects::Undeclared,
                None,
                Reasoning::None,
                "",
            ),
            |_, _, _| {},
            |_, _| Box::pin(async { Err(Error::internal("unused")) }),
            source,
        )
    }

    #[test]
    fn duplicate_names_across_crates_refuse_to_start_naming_both() {
        let error = Registry::from_entries([&FIRST, &SECOND], []).unwrap_err();
        assert_eq!(
            error.to_string(),
            "two tools are both named `dup_tool`: `crate_a::handler` and `crate_b::handler`; rename one (change its `id`, or its `namespace`/`op`)"
        );
    }

    #[test]
    fn ids_that_project_to_one_tool_name_refuse_to_start_naming_both_ids() {
        let error = Registry::from_entries([&FIRST, &PROJECTED], []).unwrap_err();
        assert_eq!(
            error.to_string(),
            "two tools are both named `dup_tool`: `crate_a::handler` and `crate_c::handler` (ids `dup.tool` and `dup_tool` project to the same tool name: `.` becomes `_`); rename one (change its `id`, or its `namespace`/`op`)"
        );
    }
}
