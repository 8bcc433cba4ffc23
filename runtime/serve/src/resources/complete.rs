//! `completion/complete` for the resource templates (`trails://kg/<Type>/{id}` and
//! `trails://kg/<Type>{?where,limit,offset}`): instance keys that start with what was typed,
//! read from the store and bounded; the `<field>=` of a `where` clause. MCP completes prompt and
//! resource-template arguments only: a tool's `one_of` values are in its `inputSchema`.

use oxrdf::{Literal, Term};
use rmcp::model::{ArgumentInfo, CompletionInfo, Reference};
use rmcp::ErrorData;
use serde_json::json;

use super::uri::SCHEME;
use super::Resources;
use crate::wire::errors;
use trails_core::declare::NodeTypeInfo;
use trails_kg::{mapping, store, store_failed};

/// Values one answer holds (MCP's own limit).
const MAX_VALUES: usize = CompletionInfo::MAX_VALUES;

/// Completions of `argument` of the template `reference` names.
pub(crate) async fn complete(
    resources: &Resources,
    reference: &Reference,
    argument: &ArgumentInfo,
    trace_id: &str,
) -> Result<CompletionInfo, ErrorData> {
    let Some(uri) = reference.as_resource_uri() else {
        return Err(ErrorData::invalid_params("this server has no prompts", Some(json!({ "ref": "ref/prompt" }))));
    };
    let not_ours = || {
        let uri = trails_core::validate::echo_name(uri);
        ErrorData::invalid_params(
            format!("`{uri}` is not one of this server's resource templates (resources/templates/list)"),
            Some(json!({ "uri": uri })),
        )
    };
    let (Some(kg), Some(rest)) = (&resources.kg, uri.strip_prefix(SCHEME).and_then(|r| r.strip_prefix("kg/"))) else {
        return Err(not_ours());
    };
    let (label, variables) = match rest.split_once('/') {
        Some((label, "{id}")) => (label, "id"),
        _ => match rest.strip_suffix("{?where,limit,offset}") {
            Some(label) => (label, "page"),
            None => return Err(not_ours()),
        },
    };
    let Some(node) = resources.node_types.iter().copied().find(|node| node.label == label) else {
        return Err(not_ours());
    };
    let typed = argument.value.as_str();
    let values = match (variables, argument.name.as_str()) {
        ("id", "id") => return keys(kg, node, typed).await.map_err(|e| errors::from_error(e, trace_id)),
        ("page", "where") => return Ok(where_fields(node, typed)),
        ("page", "limit" | "offset") => Vec::new(),
        _ => {
            let name = trails_core::validate::echo_name(&argument.name);
            return Err(ErrorData::invalid_params(
                format!("the template has no variable `{name}`"),
                Some(json!({ "uri": uri, "argument": name })),
            ));
        }
    };
    Ok(CompletionInfo::with_all_values(values).expect("fewer values than MCP's limit"))
}

/// `<field>=` for each field of `node` that starts with what was typed (before any `=`: the
/// value's completion would need the stored values, which a clause does not narrow).
fn where_fields(node: &NodeTypeInfo, typed: &str) -> CompletionInfo {
    let mut fields: Vec<String> = node
        .all_predicates()
        .into_iter()
        .filter(|predicate| !typed.contains('=') && predicate.field.starts_with(typed))
        .map(|predicate| format!("{}=", predicate.field))
        .collect();
    let more = fields.len() > MAX_VALUES;
    fields.truncate(MAX_VALUES);
    CompletionInfo::with_pagination(fields, None, more).expect("at most MCP's limit")
}

/// The keys of `node` that start with `typed`, in IRI order: at most [`MAX_VALUES`], with
/// `hasMore` when there are others.
async fn keys(kg: &trails_kg::Kg, node: &NodeTypeInfo, typed: &str) -> trails_core::Result<CompletionInfo> {
    let prefix = mapping::key_prefix_iri(kg.base(), node.label, typed);
    let query = format!(
        "SELECT ?s WHERE {{ GRAPH <{graph}> {{ ?s a <{class}> }} FILTER(STRSTARTS(STR(?s), ?prefix)) }} \
         ORDER BY STR(?s) LIMIT {limit}",
        graph = mapping::graph_iri(kg.base(), node.label),
        class = node.iri,
        limit = MAX_VALUES + 1,
    );
    let bindings = vec![("prefix".to_owned(), Term::Literal(Literal::new_simple_literal(prefix)))];
    let rows = kg.store().select(query, bindings).await.map_err(store_failed)?;
    let type_prefix = mapping::key_prefix_iri(kg.base(), node.label, "");
    let mut keys: Vec<String> = rows
        .iter()
        .filter_map(|row| store::bound_iri(row, "s"))
        .map(|iri| {
            let key = iri.as_str().strip_prefix(&type_prefix).unwrap_or(iri.as_str());
            percent_encoding::percent_decode_str(key).decode_utf8_lossy().into_owned()
        })
        .collect();
    let more = keys.len() > MAX_VALUES;
    keys.truncate(MAX_VALUES);
    Ok(CompletionInfo::with_pagination(keys, None, more).expect("at most MCP's limit"))
}
