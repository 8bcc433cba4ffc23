//! What a capability promises and the runtime holds it to: the instances it may change
//! ([`Effects`], from `side_effects(…)`) and what must hold before it runs ([`Unmet`], what a
//! declared precondition reports when it does not).

use serde_json::{json, Value};

use super::rdf::NodeTypeInfo;

/// How a write changes an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOp {
    /// A new instance.
    Create,
    /// A stored instance changed (`overwrites`).
    Update,
    /// A stored instance removed (`deletes`).
    Delete,
}

impl WriteOp {
    fn verb(self) -> &'static str {
        match self {
            WriteOp::Create => "create",
            WriteOp::Update => "update",
            WriteOp::Delete => "delete",
        }
    }
}

/// The knowledge-graph writes a capability declared (`side_effects(…)`), which its calls are held
/// to: a write its declaration does not allow is refused before anything is stored.
#[derive(Debug, Clone, Copy)]
pub enum Effects {
    /// No `side_effects(…)`: published as unknown (MCP's conservative hints), and not held.
    Undeclared,
    /// `side_effects(…)`: creates instances of `writes` only; updates them with `overwrites`,
    /// deletes them with `deletes`. `side_effects(none)` writes nothing to the knowledge graph.
    Declared {
        /// The node types whose instances it writes (`writes = [Requirement]`).
        writes: &'static [&'static NodeTypeInfo],
        /// It changes stored instances of those types.
        overwrites: bool,
        /// It deletes instances of those types.
        deletes: bool,
    },
}

impl Effects {
    /// Used by `#[capability]` / `#[meta_capability]`; not a public API.
    #[doc(hidden)]
    pub const fn __declared(writes: &'static [&'static NodeTypeInfo], overwrites: bool, deletes: bool) -> Effects {
        Effects::Declared { writes, overwrites, deletes }
    }

    /// Whether it declared it changes nothing (`side_effects(none)`, or only external calls):
    /// MCP's `readOnlyHint`. (`overwrites` or `deletes` without `writes` change something outside
    /// the knowledge graph: the server's state, files.)
    pub fn read_only(&self) -> bool {
        matches!(self, Effects::Declared { writes: [], overwrites: false, deletes: false })
    }

    /// The node types it declared it writes (none when undeclared).
    pub fn writes(&self) -> &'static [&'static NodeTypeInfo] {
        match self {
            Effects::Undeclared => &[],
            Effects::Declared { writes, .. } => writes,
        }
    }

    /// `Err` with what to declare when `capability`'s declaration does not allow `op` on an
    /// instance of `node`: the message names the declaration to change.
    pub fn allows(&self, capability: &str, node: &NodeTypeInfo, op: WriteOp) -> Result<(), String> {
        let Effects::Declared { writes, overwrites, deletes } = *self else {
            return Ok(());
        };
        let label = node.label;
        let declared = writes.iter().any(|written| written.iri == node.iri);
        let flag = match op {
            WriteOp::Create => None,
            WriteOp::Update => Some(("overwrites", overwrites)),
            WriteOp::Delete => Some(("deletes", deletes)),
        };
        let missing_flag = flag.filter(|(_, set)| !set).map(|(name, _)| name);
        if declared && missing_flag.is_none() {
            return Ok(());
        }
        let mut parts = Vec::new();
        if !writes.is_empty() {
            let names: Vec<&str> = writes.iter().map(|written| written.label).collect();
            parts.push(format!("writes = [{}]", names.join(", ")));
        }
        for (name, set) in [("overwrites", overwrites), ("deletes", deletes)] {
            if set {
                parts.push(name.to_owned());
            }
        }
        let now = match parts.is_empty() {
            true => "side_effects(none)".to_owned(),
            false => format!("side_effects({})", parts.join(", ")),
        };
        let add = match (declared, missing_flag) {
            (false, Some(name)) => format!("`{label}` in `writes` and `{name}`"),
            (false, None) => format!("`{label}` in `writes`"),
            (true, Some(name)) => format!("`{name}`"),
            (true, None) => unreachable!("allowed writes returned above"),
        };
        Err(format!(
            "capability {capability} tried to {} a {label}, which its declaration `{now}` does not allow; \
             nothing was stored. Add {add} to its `side_effects`",
            op.verb()
        ))
    }
}

/// A declared precondition that does not hold for a call: what was declared and why it fails.
/// A call with one is refused as `precondition_failed` before its handler runs; a dry run lists
/// them.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmet {
    /// The precondition's kind as published (`instance_exists`, `field_in`, `check`, …).
    pub kind: &'static str,
    /// Its parameters as published (the manifest's `parameters`).
    pub parameters: &'static str,
    /// Why it does not hold, for the model.
    pub message: String,
}

impl Unmet {
    /// `{"kind", "parameters", "message"}`: how a refusal or a dry run shows it.
    pub fn to_json(&self) -> Value {
        let parameters: Value = serde_json::from_str(self.parameters).unwrap_or(Value::Null);
        json!({ "kind": self.kind, "parameters": parameters, "message": self.message })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(label: &'static str) -> NodeTypeInfo {
        NodeTypeInfo {
            label,
            iri: label,
            parent: None,
            unique: &[],
            key: None,
            predicates: &[],
            validate: |_, _, _| {},
        }
    }

    #[test]
    fn a_write_is_allowed_only_as_declared_and_a_refusal_names_what_to_add() {
        static NOTE: std::sync::LazyLock<NodeTypeInfo> = std::sync::LazyLock::new(|| node("Note"));
        let (note, other) = (&*NOTE, node("Attachment"));
        let notes: &'static [&'static NodeTypeInfo] = Box::leak(Box::new([note]));
        let create_only = Effects::__declared(notes, false, false);
        assert!(create_only.allows("n.create", note, WriteOp::Create).is_ok());
        assert_eq!(
            create_only.allows("n.create", note, WriteOp::Update).unwrap_err(),
            "capability n.create tried to update a Note, which its declaration `side_effects(writes = [Note])` does \
             not allow; nothing was stored. Add `overwrites` to its `side_effects`"
        );
        let refused = create_only.allows("n.create", &other, WriteOp::Delete).unwrap_err();
        assert!(refused.ends_with("Add `Attachment` in `writes` and `deletes` to its `side_effects`"), "{refused}");
        let none = Effects::__declared(&[], false, false);
        assert!(none.read_only());
        let refused = none.allows("n.read", note, WriteOp::Create).unwrap_err();
        assert!(refused.contains("its declaration `side_effects(none)` does not allow"), "{refused}");
        assert!(!Effects::__declared(&[], true, false).read_only(), "overwrites something outside the graph");
        assert!(Effects::Undeclared.allows("n.any", &other, WriteOp::Delete).is_ok(), "undeclared is not held");
    }
}
