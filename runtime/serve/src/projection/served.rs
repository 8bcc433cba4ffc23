//! The descriptors an app serves where they say more than the macros could: the `trails_kg_*`
//! tools are compiled into the runtime before any app declares a node type, so their schemas
//! learn the app's labels and field names here, once at start; and a capability's canonical
//! descriptor learns what only the server knows — the graphs its writes go to under its own
//! `[kg] base`, and whether its calls record provenance. Every projection of a tool (the
//! listings, the manifest, OpenAPI, the goldens) reads the served descriptor.

use std::collections::{BTreeSet, HashMap};

use serde_json::{json, Value};
use trails_core::declare::NodeTypeInfo;
use trails_core::registry::{ServedEnum, ToolEntry};

/// The `trails_kg_*` (and `trails_meta_kg_validate`) descriptors as this app serves them, by tool name: `node_type` is an enum
/// of its node types' labels and `field` of their field names, so a client that fills the
/// arguments from the schema sends only names the server knows. (The macros wrote these tools
/// before any app declared a node type.) Nothing without node types: the tools are not served.
pub(crate) fn own_descriptors(
    tools: impl Iterator<Item = &'static ToolEntry>,
    node_types: &[&'static NodeTypeInfo],
) -> HashMap<&'static str, String> {
    let mut own = HashMap::new();
    for (tool, enums) in own_enums(tools, node_types) {
        let mut descriptor: Value = serde_json::from_str(tool.descriptor()).expect("tool descriptors are JSON");
        let Some(properties) = descriptor.pointer_mut("/inputSchema/properties").and_then(Value::as_object_mut) else {
            continue;
        };
        for rule in enums {
            if let Some(Value::Object(property)) = properties.get_mut(rule.property) {
                property.insert("enum".into(), json!(rule.values));
            }
        }
        own.insert(tool.name(), descriptor.to_string());
    }
    own
}

/// The enums [`own_descriptors`] publishes, by tool name, for the validation guard to check with
/// the declared constraints (`Validation::served`): a call is refused for every field at once.
pub(crate) fn served_enums(
    tools: impl Iterator<Item = &'static ToolEntry>,
    node_types: &[&'static NodeTypeInfo],
) -> HashMap<&'static str, Vec<ServedEnum>> {
    own_enums(tools, node_types).into_iter().map(|(tool, enums)| (tool.name(), enums)).collect()
}

fn own_enums(
    tools: impl Iterator<Item = &'static ToolEntry>,
    node_types: &[&'static NodeTypeInfo],
) -> Vec<(&'static ToolEntry, Vec<ServedEnum>)> {
    // Sorted: the schemas stay the same when a declaration moves to another module.
    let labels: BTreeSet<&'static str> = node_types.iter().map(|node| node.label).collect();
    let fields: BTreeSet<&'static str> =
        node_types.iter().flat_map(|node| node.all_predicates()).map(|predicate| predicate.field).collect();
    let reads_kg = |tool: &ToolEntry| {
        tool.source().starts_with("trails_serve::builtin::")
            && (tool.id().starts_with("trails.kg.") || tool.id() == "trails.meta.kg.validate")
    };
    tools
        .filter(|tool| !labels.is_empty() && reads_kg(tool))
        .map(|tool| {
            let descriptor: Value = serde_json::from_str(tool.descriptor()).expect("tool descriptors are JSON");
            let has = |property: &str| descriptor.pointer(&format!("/inputSchema/properties/{property}")).is_some();
            let mut enums = Vec::new();
            if has("node_type") {
                enums.push(ServedEnum { property: "node_type", values: labels.iter().copied().collect() });
            }
            if has("field") {
                enums.push(ServedEnum { property: "field", values: fields.iter().copied().collect() });
            }
            (tool, enums)
        })
        .collect()
}

/// The canonical descriptors this server publishes in place of the macros', by tool name: a
/// capability's `side_effects.writes` are the graphs the store writes under `base` (the macros
/// wrote them under the default base), and `side_effects.provenance` says whether its calls
/// record provenance (every call does where the app has a knowledge graph). Only those that
/// differ are kept.
pub(crate) fn own_canonical(
    tools: impl Iterator<Item = &'static ToolEntry>,
    base: &str,
    provenance: bool,
) -> HashMap<&'static str, String> {
    let mut own = HashMap::new();
    if base == trails_kg::DEFAULT_BASE && !provenance {
        return own;
    }
    for tool in tools {
        let writes = tool.effects().writes();
        let mut canonical: Value = serde_json::from_str(tool.canonical()).expect("canonical descriptors are JSON");
        let Some(effects) = canonical.get_mut("side_effects").and_then(Value::as_object_mut) else { continue };
        let graphs: Vec<String> = writes.iter().map(|node| trails_kg::mapping::graph_iri(base, node.label)).collect();
        effects.insert("writes".into(), json!(graphs));
        effects.insert("provenance".into(), json!(provenance));
        own.insert(tool.name(), canonical.to_string());
    }
    own
}
