//! OpenAPI 3.1: one `POST /invoke/{id}` operation per capability, assembled from the two
//! descriptors the macros emitted for it — the tool descriptor gives the input and output
//! schemas, the canonical descriptor gives every `x-trails-*` extension — so the HTTP
//! projection cannot say anything the MCP one and the manifest do not.
//!
//! The answer of `/invoke` is the MCP `CallToolResult` (`content`, `structuredContent`,
//! `isError`, `_meta`): the same result in another envelope. Errors are `{"error": {code,
//! message, data}}` with the JSON-RPC code MCP would have answered (`runtime/guide/07-wire-contract.md`) and an HTTP
//! status that says the same thing.

use serde_json::{json, Map, Value};

use crate::auth::Scope;
use crate::registry::{Registry, ToolEntry};

/// What the document says it describes.
#[derive(Debug, Clone, Copy)]
pub struct Info<'a> {
    /// The app's name (`serverInfo.name`).
    pub title: &'a str,
    /// The app's version.
    pub version: &'a str,
    /// The manifest is served: operations link to it (`x-trails-manifest-uri`).
    pub manifest: bool,
}

/// The path of a capability's operation.
pub(crate) fn invoke_path(id: &str) -> String {
    format!("/invoke/{id}")
}

/// The whole document for `tools`, in their order.
pub fn render<'a>(tools: impl IntoIterator<Item = &'a ToolEntry>, info: Info<'_>) -> String {
    render_served(tools.into_iter().map(|tool| (tool, tool.descriptor(), tool.canonical())), info)
}

/// The same, each tool with the descriptor and canonical descriptor it is served with (a server
/// may publish more than the macros knew: the labels of the app's node types in the
/// `trails_kg_*` schemas, the graphs under its `[kg] base`).
pub fn render_served<'a>(tools: impl IntoIterator<Item = (&'a ToolEntry, &'a str, &'a str)>, info: Info<'_>) -> String {
    let mut paths = Map::new();
    for (tool, descriptor, canonical) in tools {
        paths.insert(invoke_path(tool.id()), json!({ "post": operation(tool, descriptor, canonical, info.manifest) }));
    }
    let document = json!({
        "openapi": "3.1.0",
        "info": {
            "title": info.title,
            "version": info.version,
            "description": if info.manifest {
                "Every capability this caller may call as `POST /invoke/{id}`: the same dispatch, validation, scopes \
                 and provenance as the MCP tool of the same capability. The canonical descriptors are at \
                 `/.well-known/capabilities`; `x-trails-*` carries them here."
            } else {
                "Every capability this caller may call as `POST /invoke/{id}`: the same dispatch, validation, scopes \
                 and provenance as the MCP tool of the same capability. `x-trails-*` carries the canonical \
                 descriptors."
            },
        },
        "paths": paths,
        "components": components(),
    });
    serde_json::to_string(&document).expect("a JSON value serialises")
}

fn operation(tool: &ToolEntry, descriptor: &str, canonical: &str, manifest: bool) -> Value {
    // Both are the macros' own output (or its served form): `tests/tests/it/registry.rs` reads
    // every declared one.
    let descriptor: Value = serde_json::from_str(descriptor).expect("tool descriptors are JSON");
    let canonical: Map<String, Value> = serde_json::from_str(canonical).expect("canonical descriptors are JSON");
    let description = tool.description();
    let summary = description.lines().next().unwrap_or_default().trim();
    let mut op = Map::new();
    op.insert("operationId".into(), json!(tool.id()));
    if !summary.is_empty() {
        op.insert("summary".into(), json!(summary));
    }
    if !description.is_empty() {
        op.insert("description".into(), json!(description));
    }
    op.insert("tags".into(), json!([tool.kind().as_str()]));
    if tool.deprecated() {
        op.insert("deprecated".into(), json!(true));
    }
    if tool.idempotent() {
        op.insert(
            "parameters".into(),
            json!([{
                "name": "Idempotency-Key",
                "in": "header",
                "required": false,
                "description": "Retry safely: the first call with this key runs and its result is kept; a call with \
                    the same key, caller and arguments answers that result again (`Idempotent-Replayed: true`) \
                    without running; the same key with other arguments is refused with 409.",
                "schema": { "type": "string", "pattern": "^[!-~]{1,255}$" },
            }]),
        );
    }
    // Runtime capabilities also serve anonymous callers; the rest need a token with their scope.
    let security = match tool.scope() {
        Scope::Runtime => json!([{}, { "bearer": [] }]),
        Scope::Builder | Scope::Dev => json!([{ "bearer": [] }]),
    };
    op.insert("security".into(), security);
    op.insert(
        "requestBody".into(),
        json!({
            "required": true,
            "description": "The capability's arguments: the tool's `inputSchema`.",
            "content": { "application/json": { "schema": request_schema(descriptor["inputSchema"].clone()) } },
        }),
    );
    op.insert("responses".into(), responses(descriptor.get("outputSchema"), tool.idempotent()));
    op.insert("x-trails-kind".into(), json!(tool.kind().as_str()));
    op.insert("x-trails-scope".into(), json!(tool.scope().as_str()));
    op.insert("x-trails-tool".into(), json!(tool.name()));
    if let Some(uri) = descriptor.pointer("/_meta/trails/manifest_uri").filter(|_| manifest) {
        op.insert("x-trails-manifest-uri".into(), uri.clone());
    }
    // The canonical descriptor's fields after id and description, in canonical order.
    for (field, value) in canonical {
        if !matches!(field.as_str(), "@id" | "@type" | "id" | "description") {
            op.insert(format!("x-trails-{}", field.replace('_', "-")), value);
        }
    }
    Value::Object(op)
}

/// The input schema as the validator reads a request. The MCP schema serves requests and results
/// alike and stays simple for MCP clients; an OpenAPI 3.1 document can state the request
/// contract exactly:
/// - an optional property may also be `null` (read as absent). MCP schemas leave `null` out on
///   purpose: some MCP clients break on type unions (`runtime/guide/02-declaring.md`);
/// - a `writeOnly` member is required in a request (a blob's `base64`: results show the blob's
///   metadata, requests must send its bytes). OpenAPI reads `required` + `writeOnly` as
///   "required in requests".
fn request_schema(mut schema: Value) -> Value {
    fn visit(schema: &mut Value) {
        let Some(object) = schema.as_object_mut() else { return };
        if let Some(items) = object.get_mut("items") {
            visit(items);
        }
        let mut required: Vec<String> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        let write_only: Vec<String> = match object.get("properties") {
            Some(Value::Object(properties)) => properties
                .iter()
                .filter(|(name, p)| p["writeOnly"] == json!(true) && !required.contains(name))
                .map(|(name, _)| name.clone())
                .collect(),
            _ => Vec::new(),
        };
        if !write_only.is_empty() {
            required.extend(write_only);
            object.insert("required".into(), json!(required));
        }
        let Some(Value::Object(properties)) = object.get_mut("properties") else { return };
        for (name, property) in properties.iter_mut() {
            visit(property);
            if required.contains(name) {
                continue;
            }
            let Some(property) = property.as_object_mut() else { continue };
            match property.get("type").cloned() {
                Some(Value::String(single)) if single != "null" => {
                    property.insert("type".into(), json!([single, "null"]));
                }
                Some(Value::Array(mut types)) if !types.contains(&json!("null")) => {
                    types.push(json!("null"));
                    property.insert("type".into(), Value::Array(types));
                }
                _ => {}
            }
            if let Some(Value::Array(values)) = property.get_mut("enum") {
                if !values.contains(&Value::Null) {
                    values.push(Value::Null);
                }
            }
        }
    }
    visit(&mut schema);
    schema
}

fn responses(output_schema: Option<&Value>, idempotent: bool) -> Value {
    let mut result = json!({
        "type": "object",
        "required": ["content"],
        "properties": {
            "content": {
                "type": "array",
                "description": "The MCP content blocks: the result's text (a mirror of `structuredContent` when there \
                    is one), then, when a text result was cut to the window (`[mcp] tool_window_chars`), a note \
                    saying so (`cut`) with the call that reads on (`next_call`).",
                "items": { "type": "object" },
            },
            "isError": {
                "type": "boolean",
                "description": "The call ran but its result could not be sent whole (too large to cut); `content` says \
                    why, and its `next_call` reads it a page at a time.",
            },
            "_meta": {
                "type": "object",
                "description": "`trails.replayed` when this is an earlier call's kept result.",
            },
        },
    });
    if let Some(schema) = output_schema {
        result["properties"]["structuredContent"] = schema.clone();
    }
    let reference = |name: &str| json!({ "$ref": format!("#/components/responses/{name}") });
    let mut responses = json!({
        "200": {
            "description": "The capability ran: its result, as MCP's `tools/call` returns it.",
            "content": { "application/json": { "schema": result } },
        },
        "400": reference("BadRequest"),
        "401": reference("Unauthorized"),
        "403": reference("Forbidden"),
        "404": reference("NotFound"),
        "409": reference("Conflict"),
        "408": reference("TimedOut"),
        "412": reference("PreconditionFailed"),
        "413": reference("TooLarge"),
        "415": reference("UnsupportedMediaType"),
        "422": reference("ValidationFailed"),
        "429": reference("BudgetExceeded"),
        "500": reference("InternalError"),
        "503": reference("Unavailable"),
    });
    if idempotent {
        responses["200"]["description"] = json!(
            "The capability ran (or, for a repeated `Idempotency-Key`, had run): its result, as MCP's `tools/call` \
             returns it."
        );
        responses["200"]["headers"] = json!({
            "Idempotent-Replayed": {
                "description": "`true` when this is the kept result of an earlier call with the same \
                    `Idempotency-Key` (nothing ran now).",
                "schema": { "type": "string", "enum": ["true"] },
            },
        });
    }
    responses
}

fn components() -> Value {
    let error = |description: &str| {
        json!({
            "description": description,
            "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } },
        })
    };
    let mut unauthorized = error(
        "No valid token: a token that does not verify (any capability), or none for a capability that needs a \
         scope (`-32001`).",
    );
    unauthorized["headers"] = json!({
        "WWW-Authenticate": { "description": "`Bearer realm=\"trails\"`", "schema": { "type": "string" } },
    });
    json!({
        "securitySchemes": {
            "bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "A token of `[[http.tokens]]` in trails.toml; it grants its scopes (`runtime`, \
                    `builder`, `dev`).",
            },
        },
        "responses": {
            "BadRequest": error("The body is not a JSON object (`-32700` when it does not parse, `-32602` otherwise)."),
            "Unauthorized": unauthorized,
            "Forbidden": error(
                "The caller's token lacks the capability's scope (`-32004`), a Cedar policy the capability requires \
                 denies the call (`-32002`), or the request's `Origin` is not allowed (`-32600`).",
            ),
            "TimedOut": error("The body did not arrive within `[http] body_timeout_secs` (`-32600`)."),
            "BudgetExceeded": {
                "description": "The capability's declared cost exceeds what the caller has left of its budget in this \
                    window (`[budget]`; `-32003`, `error.data.retry_after_secs`). The handler did not run.",
                "headers": { "Retry-After": { "description": "Seconds until the budget renews.", "schema": { "type": "integer" } } },
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } },
            },
            "NotFound": {
                "description": "No capability of that id is served to this caller (unknown, disabled, or masked; \
                    `-32602`), or the capability ran and found nothing by what the call names (`error.kind` \
                    `not_found`).",
                "headers": { "Retry-After": { "description": "Seconds before a retry may succeed, when the capability says.", "schema": { "type": "integer" } } },
                "content": { "application/json": { "schema": { "anyOf": [
                    { "$ref": "#/components/schemas/Error" },
                    { "$ref": "#/components/schemas/DomainError" },
                ] } } },
            },
            "Conflict": {
                "description": "The arguments are well-formed but conflict with the stored data: a `unique` value \
                    another instance has, or a `reference` to an instance that does not exist; or the \
                    `Idempotency-Key` was first used with other arguments, or its first call still runs \
                    (`-32602`, with the fields in `error.data.fields`). Or the capability reports a conflict \
                    with the current state (`error.kind` `conflict`; `error.retryable` when a retry may pass).",
                "headers": { "Retry-After": { "description": "Seconds before a retry may succeed, when the capability says.", "schema": { "type": "integer" } } },
                "content": { "application/json": { "schema": { "anyOf": [
                    { "$ref": "#/components/schemas/ValidationError" },
                    { "$ref": "#/components/schemas/DomainError" },
                ] } } },
            },
            "PreconditionFailed": {
                "description": "The capability ran and refused: a condition the call depends on does not hold \
                    (`error.kind` `precondition_failed`, the reason in `error.message`).",
                "headers": { "Retry-After": { "description": "Seconds before a retry may succeed, when the capability says.", "schema": { "type": "integer" } } },
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/DomainError" } } },
            },
            "Unavailable": {
                "description": "Something the capability depends on is unavailable now (`error.kind` `unavailable`): \
                    retry, after `Retry-After` seconds when given.",
                "headers": { "Retry-After": { "description": "Seconds before a retry may succeed.", "schema": { "type": "integer" } } },
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/DomainError" } } },
            },
            "TooLarge": error("The body is over `[http] max_body_bytes`."),
            "UnsupportedMediaType": error("The body is not `application/json`."),
            "ValidationFailed": {
                "description": "The arguments break the capability's declared constraints (`-32602`); \
                    `error.data.fields` lists every rejected field, not only the first.",
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ValidationError" } } },
            },
            "InternalError": error("The capability failed (`-32603`); `error.data.trace_id` finds it in the log."),
        },
        "schemas": {
            "Error": {
                "type": "object",
                "required": ["error"],
                "properties": {
                    "error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {
                            "code": { "type": "integer", "description": "The JSON-RPC code MCP answers for the same failure." },
                            "message": { "type": "string" },
                            "data": { "description": "Depends on the code: a validation failure's fields, a refusal's tool and scope." },
                        },
                    },
                },
            },
            "ValidationError": {
                "type": "object",
                "required": ["error"],
                "properties": {
                    "error": {
                        "type": "object",
                        "required": ["code", "message", "data"],
                        "properties": {
                            "code": { "const": -32602 },
                            "message": { "type": "string" },
                            "data": {
                                "type": "object",
                                "required": ["fields"],
                                "properties": {
                                    "fields": { "type": "array", "items": { "$ref": "#/components/schemas/FieldError" } },
                                    "omitted": { "type": "integer", "minimum": 1, "description": "Rejected fields left out of `fields` at its bound." },
                                },
                            },
                        },
                    },
                },
            },
            "DomainError": {
                "type": "object",
                "required": ["error"],
                "properties": {
                    "error": {
                        "type": "object",
                        "required": ["kind", "message", "retryable"],
                        "properties": {
                            "kind": { "type": "string", "enum": ["not_found", "conflict", "precondition_failed", "unavailable"] },
                            "message": { "type": "string", "description": "The capability's own words, for the caller." },
                            "retryable": { "type": "boolean", "description": "Whether the same call may succeed later." },
                            "retry_after_secs": { "type": "integer", "minimum": 0, "description": "When a retry may succeed." },
                        },
                    },
                },
            },
            "FieldError": {
                "type": "object",
                "required": ["field", "code", "message", "value", "constraint"],
                "properties": {
                    "field": { "type": "string", "description": "Path from the root of the arguments (`tags/3`)." },
                    "code": {
                        "type": "string",
                        "enum": ["required", "type", "unknown_field", "min_length", "max_length", "pattern", "one_of",
                            "min_value", "max_value", "min_count", "max_count", "unique_items", "max_size", "type_mismatch", "unique",
                            "reference"],
                    },
                    "message": { "type": "string" },
                    "value": { "description": "What was sent, shortened." },
                    "constraint": { "description": "The declared constraint it broke." },
                },
            },
        },
    })
}

impl Registry {
    /// The OpenAPI 3.1 document of every tool from the descriptors the macros wrote, titled
    /// `title` and `version`. A server serves the same, except that its `trails_kg_*`
    /// operations also list the app's node types and field names (see [`render_served`]).
    pub fn openapi(&self, title: &str, version: &str) -> String {
        render(self.tools(), Info { title, version, manifest: true })
    }
}
