//! `trails.meta.kg.validate` (scope `builder`): check stored instances against their node types'
//! declarations as they are now — after a constraint was tightened, or when data was written
//! around Trails (a shared remote store) — and answer the violations as FieldErrors per instance
//! IRI. It reads a bounded number of instances per call and its answer fits the tool window; the
//! `next_call` continues where it stopped.

use serde_json::{json, Value};

use super::kg::{call, shared, text_len};
use crate::resources::tools as read;
use oxrdf::NamedNode;
use trails_core::declare::{NodeTypeInfo, Output, ToolOutput};
use trails_core::error::{Error, Result};
use trails_core::validate::{FieldCode, FieldError};
use trails_core::Ctx;
use trails_kg::{mapping, KgCtx};
use trails_macros::meta_capability;

/// Instances one call checks when `limit` is unset.
const DEFAULT_LIMIT: usize = 100;
/// Instances read from the store per query.
const PAGE: usize = 100;

#[doc(hidden)]
pub struct KgValidation(Value);

impl ToolOutput for KgValidation {
    const OUTPUT_SCHEMA_MEMBER: &'static str = concat!(
        ",\"outputSchema\":",
        r#"{"type":"object","properties":{"checked":{"type":"integer"},"violations":{"type":"array","items":{"type":"object","properties":{"node_type":{"type":"string"},"id":{"type":"string"},"iri":{"type":"string"},"fields":{"type":"array","items":{"type":"object","properties":{"field":{"type":"string"},"code":{"type":"string"},"message":{"type":"string"},"value":{},"constraint":{}},"required":["field","code","message","value","constraint"]}},"fields_total":{"type":"integer"}},"required":["node_type","id","iri","fields","fields_total"]}},"cursor":{"type":["string","null"]},"next_call":{"type":["object","null"]},"cut":{"type":"string"}},"required":["checked","violations","cursor","next_call"]}"#
    );
    fn into_output(self) -> Result<Output> {
        Ok(Output::structured(self.0))
    }
}

/// Where a check stands: the node type, and the IRI of the last instance checked in it.
struct Position {
    node: &'static NodeTypeInfo,
    after: Option<String>,
}

/// Re-validate stored instances against their node types' declarations: values of the wrong
/// datatype, several values for a single-valued field, and every constraint tool input obeys.
/// Answers the violations as FieldErrors per instance IRI, a bounded number of instances per call;
/// follow `next_call` (the same call with `cursor`) until it is null.
#[meta_capability(
    namespace = "kg",
    op = "validate",
    scope = "builder",
    version = "1.0.0",
    side_effects(none),
    idempotent
)]
async fn kg_validate(
    ctx: &Ctx,
    /// One node type (its label, as in `trails://kg/types`); default: every node type, in turn.
    #[predicate(min_length = 1, max_length = 128)]
    node_type: Option<String>,
    /// Most instances to check in this call (default 100).
    #[predicate(min_value = 1, max_value = 1000)]
    limit: Option<i64>,
    /// Where the previous call stopped: its `cursor`.
    #[predicate(min_length = 1, max_length = 4096)]
    cursor: Option<String>,
) -> Result<KgValidation> {
    let shared = shared(ctx)?;
    let kg = ctx.kg()?;
    let window = shared.mcp.tool_window_chars;
    let limit = limit.map_or(DEFAULT_LIMIT, |n| usize::try_from(n).unwrap_or(1));
    let only = node_type.as_deref().map(|label| read::node_type(&shared.resources, label)).transpose()?;
    let order: Vec<&'static NodeTypeInfo> = match only {
        Some(node) => vec![node],
        None => shared.resources.node_types.clone(),
    };
    // The cursor is `<label> <iri>`: the node type and the last instance checked in it.
    let bad_cursor = || {
        let constraint = json!("the cursor of the previous answer");
        FieldError::refuse("cursor", FieldCode::Pattern, "is not a cursor this call gave", &json!(cursor), constraint)
    };
    let mut at = match &cursor {
        None => order.first().map(|node| Position { node, after: None }),
        Some(text) => {
            let (label, iri) = text.split_once(' ').ok_or_else(bad_cursor)?;
            let node = order.iter().copied().find(|node| node.label == label).ok_or_else(bad_cursor)?;
            Some(Position { node, after: Some(iri.to_owned()) })
        }
    };
    let answer = |checked: usize, violations: &[Value], next: Option<&Position>| {
        let (cursor, next_call) = match next {
            Some(Position { node, after }) => {
                let cursor = match after {
                    Some(iri) => format!("{} {iri}", node.label),
                    // Nothing checked in `node` yet: resume before its first instance.
                    None => format!("{} ", node.label),
                };
                let mut arguments = json!({ "cursor": cursor, "limit": limit });
                if let Some(label) = &node_type {
                    arguments["node_type"] = json!(label);
                }
                (json!(cursor), call("trails_meta_kg_validate", arguments))
            }
            None => (Value::Null, Value::Null),
        };
        json!({ "checked": checked, "violations": violations, "cursor": cursor, "next_call": next_call })
    };
    const CUT: &str = "the violations found so far fill the window; next_call continues after them";
    // Room kept for what the final answer may add to a measured one: `cut`, and a cursor that
    // names the next node type instead of an instance.
    let slack = CUT.len() + 16 + order.iter().map(|node| node.label.len()).max().unwrap_or(0);
    let fits = |body: &Value| text_len(body) + slack <= window;
    let mut checked = 0;
    let mut violations: Vec<Value> = Vec::new();
    let mut cut = None;
    'scan: while let Some(position) = at.as_mut() {
        let after = position.after.as_deref().filter(|iri| !iri.is_empty());
        let wanted = (limit - checked).min(PAGE);
        let page = read::page(&shared.resources, kg, position.node, None, wanted, after, false).await?;
        let items = page["items"].as_array().cloned().unwrap_or_default();
        for item in &items {
            let iri = item["iri"].as_str().ok_or_else(|| Error::internal("a page item without an IRI"))?;
            let id = item["id"].as_str().unwrap_or(iri);
            // Read by the IRI the page gave (an instance written around Trails may have an IRI
            // its key does not spell).
            let errors = match NamedNode::new(iri) {
                Ok(subject) => {
                    let graph = NamedNode::new_unchecked(mapping::graph_iri(kg.base(), position.node.label));
                    let triples = kg.store().describe(graph, subject).await.map_err(trails_kg::store_failed)?;
                    // Deleted since the page was read: nothing to check.
                    if triples.is_empty() {
                        Vec::new()
                    } else {
                        mapping::recheck(position.node, &triples)
                    }
                }
                Err(error) => vec![FieldError::rejecting(
                    "@id",
                    FieldCode::Pattern,
                    format!("the instance's IRI is not one the store should hold: {error}"),
                    &json!(iri),
                    json!("an IRI"),
                )],
            };
            let next = Position { node: position.node, after: Some(iri.to_owned()) };
            if !errors.is_empty() {
                let total = errors.len();
                let violation = json!({ "node_type": position.node.label, "id": id, "iri": iri, "fields": errors, "fields_total": total });
                violations.push(violation);
            }
            // Every step measures the answer it would give if it stopped here.
            if !violations.is_empty() && !fits(&answer(checked + 1, &violations, Some(&next))) {
                let mine = if errors.is_empty() { None } else { violations.pop() };
                if !violations.is_empty() {
                    // Stop before this instance: the next call starts with it.
                    cut = Some(CUT);
                    break 'scan;
                }
                // One instance alone is over: show the first of its errors that fit.
                let mut violation = mine.expect("a lone violation is this instance's");
                let mut shown = errors.len();
                while shown > 1 {
                    shown -= 1;
                    violation["fields"] = json!(errors[..shown]);
                    if fits(&answer(checked + 1, std::slice::from_ref(&violation), Some(&next))) {
                        break;
                    }
                }
                violations.push(violation);
            }
            checked += 1;
            *position = next;
            if checked == limit {
                break;
            }
        }
        let more_here = !page["next"].is_null();
        if checked == limit {
            if !more_here {
                at = next_node(&order, position.node);
            }
            break;
        }
        if !more_here {
            at = next_node(&order, position.node);
        }
    }
    let mut body = answer(checked, &violations, at.as_ref());
    if let Some(cut) = cut {
        body["cut"] = json!(cut);
    }
    if text_len(&body) > window {
        let message = format!(
            "one violation (with its IRI, cursor and next call) does not fit the window ({window} characters); \
             raise [mcp] tool_window_chars"
        );
        return Err(FieldError::refuse("limit", FieldCode::MaxLength, message, &json!(limit), json!(window)));
    }
    Ok(KgValidation(body))
}

/// The start of the node type after `node` in `order`.
fn next_node(order: &[&'static NodeTypeInfo], node: &'static NodeTypeInfo) -> Option<Position> {
    let index = order.iter().position(|n| std::ptr::eq(*n, node))?;
    order.get(index + 1).map(|node| Position { node, after: None })
}
