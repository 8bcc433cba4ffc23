//! The authoring catalogue's scaffolders (`runtime/guide/06-authoring-tools.md`):
//! `trails.meta.gen.shape`, `gen.nodetype` and `gen.capability`, scope `dev`. Each takes a spec
//! and answers a [`FileDiff`]: the path, the whole new Rust source (formatted by `prettyplease`,
//! read back through the macros' own parser and checks, so it compiles), and a unified diff
//! from what that path holds now. Nothing is written: the agent (or the developer) applies it.

use std::path::{Component, Path, PathBuf};

use trails_codegen::scaffold;

use trails_core::{Error, Result};
use trails_core::{FieldCode, FieldError};
use trails_macros::{meta_capability, shape};

/// A file to write: where, all of it, and what changes.
#[shape(iri = "https://w3id.org/trails/meta#FileDiff")]
pub(crate) struct FileDiff {
    /// The path, relative to the app's working directory.
    pub path: String,
    /// The whole new content of the file.
    pub content: String,
    /// Unified diff from what the path holds now (nothing, for a new file) to `content`.
    pub diff: String,
    /// The path holds no file yet.
    pub created: bool,
}

/// One field (or parameter) to declare.
#[shape(iri = "https://w3id.org/trails/meta#FieldSpec")]
pub(crate) struct FieldSpec {
    /// The field's name, snake_case.
    #[predicate(pattern = r"^[a-z][a-z0-9_]{0,63}$")]
    pub name: String,
    /// The value type.
    #[predicate(one_of = ["string", "integer", "number", "boolean", "datetime", "ref"])]
    pub kind: String,
    /// For `ref`: the node type's Rust name (it must be in scope where the file goes).
    #[predicate(pattern = r"^[A-Z][A-Za-z0-9]{0,63}$")]
    pub target: Option<String>,
    /// Not required (`Option<…>`).
    pub optional: Option<bool>,
    /// A list (`Vec<…>`).
    pub many: Option<bool>,
    /// Its doc comment.
    #[predicate(max_length = 2000)]
    pub description: Option<String>,
    /// The RDF predicate IRI (default: the type IRI's namespace + the name).
    #[predicate(max_length = 2000)]
    pub iri: Option<String>,
    /// Shortest string.
    pub min_length: Option<u32>,
    /// Longest string.
    pub max_length: Option<u32>,
    /// A regular expression strings must match (the portable ECMA-262 subset).
    #[predicate(max_length = 1000)]
    pub pattern: Option<String>,
    /// The allowed values, written as text (`"3"` for the integer 3).
    #[predicate(max_count = 100, max_length = 200)]
    pub one_of: Option<Vec<String>>,
    /// Smallest number.
    pub min_value: Option<f64>,
    /// Largest number.
    pub max_value: Option<f64>,
    /// Fewest list items.
    pub min_count: Option<u32>,
    /// Most list items.
    pub max_count: Option<u32>,
    /// How lists show a node type's instances: the field that is its `title`, `summary`, `body`,
    /// `timestamp`, `status`, `identifier` or `url` (node types only).
    #[predicate(one_of = ["title", "summary", "body", "timestamp", "status", "identifier", "url"])]
    pub role: Option<String>,
}

/// A `#[shape]` to scaffold.
#[shape(iri = "https://w3id.org/trails/meta#ShapeSpec")]
pub(crate) struct ShapeSpec {
    /// The Rust type name, UpperCamelCase.
    #[predicate(pattern = r"^[A-Z][A-Za-z0-9]{0,63}$")]
    pub name: String,
    /// The shape IRI.
    #[predicate(pattern = r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\x22{}|\\^`]{1,2000}$")]
    pub iri: String,
    /// Its doc comment.
    #[predicate(max_length = 2000)]
    pub description: Option<String>,
    /// The fields, in order.
    #[predicate(max_count = 200)]
    pub fields: Vec<FieldSpec>,
    /// Where the file goes, relative to the app's directory (default `src/<name in snake_case>.rs`).
    #[predicate(max_length = 255)]
    pub path: Option<String>,
}

/// A `#[node_type]` to scaffold.
#[shape(iri = "https://w3id.org/trails/meta#NodeTypeSpec")]
pub(crate) struct NodeTypeSpec {
    /// The Rust type name, UpperCamelCase.
    #[predicate(pattern = r"^[A-Z][A-Za-z0-9]{0,63}$")]
    pub name: String,
    /// The RDF class IRI.
    #[predicate(pattern = r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\x22{}|\\^`]{1,2000}$")]
    pub iri: String,
    /// `trails://kg/<label>` (default: the name).
    #[predicate(max_length = 64)]
    pub label: Option<String>,
    /// The field whose value names an instance (default: a generated UUID).
    #[predicate(max_length = 64)]
    pub key: Option<String>,
    /// Fields unique together.
    #[predicate(max_count = 20, max_length = 64)]
    pub unique: Option<Vec<String>>,
    /// Its doc comment.
    #[predicate(max_length = 2000)]
    pub description: Option<String>,
    /// The fields, in order.
    #[predicate(max_count = 200)]
    pub fields: Vec<FieldSpec>,
    /// Where the file goes (default `src/<name in snake_case>.rs`).
    #[predicate(max_length = 255)]
    pub path: Option<String>,
}

/// A `#[capability]` handler to scaffold.
#[shape(iri = "https://w3id.org/trails/meta#CapabilitySpec")]
pub(crate) struct CapabilitySpec {
    /// The capability id (`reports.export`).
    #[predicate(pattern = r"^[A-Za-z0-9_.-]{1,128}$")]
    pub id: String,
    /// SemVer (default `0.1.0`).
    #[predicate(pattern = r"^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})$")]
    pub version: Option<String>,
    /// What it does: the tool description.
    #[predicate(min_length = 1, max_length = 2000)]
    pub description: String,
    /// The handler function's name, snake_case.
    #[predicate(pattern = r"^[a-z][a-z0-9_]{0,63}$")]
    pub handler: String,
    /// Its named parameters.
    #[predicate(max_count = 100)]
    pub params: Vec<FieldSpec>,
    /// The result type: a shape's Rust name, or `String` (the default).
    #[predicate(pattern = r"^[A-Z][A-Za-z0-9]{0,63}$")]
    pub output: Option<String>,
    /// Declares `side_effects(none)`: the tool is read-only.
    pub read_only: Option<bool>,
    /// Declares `idempotent`.
    pub idempotent: Option<bool>,
    /// Where the file goes (default `src/<handler>.rs`).
    #[predicate(max_length = 255)]
    pub path: Option<String>,
}

/// Scaffold a `#[shape]`; returns a FileDiff.
#[meta_capability(namespace = "gen", op = "shape", scope = "dev", version = "1.0.0", side_effects(none), idempotent)]
async fn gen_shape(spec: ShapeSpec) -> Result<FileDiff> {
    let fields = field_specs(spec.fields, "fields")?;
    let source = scaffold::shape(&scaffold::ShapeSpec {
        name: spec.name.clone(),
        iri: spec.iri,
        description: spec.description,
        fields,
        node_type: None,
    });
    file_diff(spec.path, &format!("src/{}.rs", scaffold::snake_case(&spec.name)), source)
}

/// Scaffold a `#[node_type]`; returns a FileDiff.
#[meta_capability(namespace = "gen", op = "nodetype", scope = "dev", version = "1.0.0", side_effects(none), idempotent)]
async fn gen_nodetype(spec: NodeTypeSpec) -> Result<FileDiff> {
    let fields = field_specs(spec.fields, "fields")?;
    let source = scaffold::shape(&scaffold::ShapeSpec {
        name: spec.name.clone(),
        iri: spec.iri,
        description: spec.description,
        fields,
        node_type: Some(scaffold::NodeTypeSpec {
            label: spec.label,
            key: spec.key,
            unique: spec.unique.unwrap_or_default(),
        }),
    });
    file_diff(spec.path, &format!("src/{}.rs", scaffold::snake_case(&spec.name)), source)
}

/// Scaffold a `#[capability]` handler (its body returns "not implemented yet"); returns a FileDiff.
#[meta_capability(
    namespace = "gen",
    op = "capability",
    scope = "dev",
    version = "1.0.0",
    side_effects(none),
    idempotent
)]
async fn gen_capability(spec: CapabilitySpec) -> Result<FileDiff> {
    let params = field_specs(spec.params, "params")?;
    let source = scaffold::capability(&scaffold::CapabilitySpec {
        id: spec.id,
        version: spec.version.unwrap_or_else(|| "0.1.0".to_owned()),
        description: spec.description,
        handler: spec.handler.clone(),
        params,
        output: spec.output.unwrap_or_else(|| "String".to_owned()),
        read_only: spec.read_only.unwrap_or(false),
        idempotent: spec.idempotent.unwrap_or(false),
    });
    file_diff(spec.path, &format!("src/{}.rs", spec.handler), source)
}

/// The field specs of the list the spec calls `list` (`fields`, `params`).
fn field_specs(fields: Vec<FieldSpec>, list: &str) -> Result<Vec<scaffold::FieldSpec>> {
    let mut errors = Vec::new();
    let specs = fields
        .into_iter()
        .enumerate()
        .map(|(index, field)| {
            if let (Some(role), "params") = (&field.role, list) {
                errors.push(FieldError::rejecting(
                    &format!("{list}/{index}/role"),
                    FieldCode::OneOf,
                    "display roles say how a node type's instances are listed; a capability parameter has none"
                        .to_owned(),
                    &serde_json::Value::String(role.clone()),
                    serde_json::json!([]),
                ));
            }
            let numeric = matches!(field.kind.as_str(), "integer" | "number");
            let one_of = field
                .one_of
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .filter_map(|(i, text)| {
                    let value = match field.kind.as_str() {
                        _ if !numeric && field.kind != "boolean" => Some(serde_json::Value::String(text.clone())),
                        "boolean" => text.parse::<bool>().ok().map(serde_json::Value::Bool),
                        _ => serde_json::from_str::<serde_json::Number>(&text).ok().map(serde_json::Value::Number),
                    };
                    if value.is_none() {
                        errors.push(FieldError::rejecting(
                            &format!("{list}/{index}/one_of/{i}"),
                            FieldCode::TypeMismatch,
                            format!("`{text}` is not a {} value", field.kind),
                            &serde_json::Value::String(text),
                            serde_json::json!(field.kind),
                        ));
                    }
                    value
                })
                .collect();
            scaffold::FieldSpec {
                name: field.name,
                kind: field.kind,
                target: field.target,
                optional: field.optional.unwrap_or(false),
                many: field.many.unwrap_or(false),
                description: field.description,
                iri: field.iri,
                min_length: field.min_length.map(u64::from),
                max_length: field.max_length.map(u64::from),
                pattern: field.pattern,
                one_of,
                min_value: field.min_value,
                max_value: field.max_value,
                min_count: field.min_count.map(u64::from),
                max_count: field.max_count.map(u64::from),
                role: field.role,
            }
        })
        .collect();
    if errors.is_empty() {
        Ok(specs)
    } else {
        Err(Error::validation(errors))
    }
}

/// `path` checked: relative, inside the app's directory, a `.rs` file, plain names only
/// (`[A-Za-z0-9_.-]` per segment: no control characters to forge a diff header), and no
/// symbolic link on the way (one could lead out of the directory).
fn checked_path(path: &str) -> Option<PathBuf> {
    let plain = |segment: &std::ffi::OsStr| {
        segment.to_str().is_some_and(|s| s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)))
    };
    let path = Path::new(path);
    let inside = path.components().all(|c| matches!(c, Component::Normal(segment) if plain(segment)));
    if !inside || path.extension().is_none_or(|e| e != "rs") {
        return None;
    }
    let mut prefix = PathBuf::new();
    for component in path.components() {
        prefix.push(component);
        if std::fs::symlink_metadata(&prefix).is_ok_and(|meta| meta.file_type().is_symlink()) {
            return None;
        }
    }
    Some(path.to_owned())
}

/// Largest existing file a diff is made against.
const MAX_EXISTING_BYTES: u64 = 1024 * 1024;

fn file_diff(
    path: Option<String>,
    default: &str,
    source: std::result::Result<String, Vec<scaffold::SpecError>>,
) -> Result<FileDiff> {
    let content = source.map_err(|errors| {
        Error::validation(
            errors
                .into_iter()
                .map(|e| {
                    FieldError::rejecting(
                        &e.field,
                        FieldCode::Pattern,
                        e.message,
                        &serde_json::Value::Null,
                        serde_json::Value::Null,
                    )
                })
                .collect(),
        )
    })?;
    let text = path.unwrap_or_else(|| default.to_owned());
    let refuse = |message: &str| {
        FieldError::refuse(
            "path",
            FieldCode::Pattern,
            message,
            &serde_json::json!(text),
            serde_json::json!("src/name.rs"),
        )
    };
    let Some(relative) = checked_path(&text) else {
        return Err(refuse(
            "must be a relative path to a .rs file inside the app's directory: plain names \
             ([A-Za-z0-9_.-]), no `..`, no symbolic link",
        ));
    };
    // Not a regular file (a FIFO would block the open): refused before anything is opened.
    if std::fs::symlink_metadata(&relative).is_ok_and(|meta| !meta.is_file()) {
        return Err(refuse("names something that is not a file"));
    }
    let current = match std::fs::File::open(&relative) {
        Err(_) => None,
        Ok(file) => {
            // One handle: what is checked is what is read, and no more than the bound.
            if !file.metadata().is_ok_and(|meta| meta.is_file()) {
                return Err(refuse("names something that is not a file"));
            }
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_EXISTING_BYTES + 1), &mut bytes)
                .map_err(|_| refuse("names a file that cannot be read"))?;
            if bytes.len() as u64 > MAX_EXISTING_BYTES {
                return Err(refuse("names a file over 1 MiB"));
            }
            Some(String::from_utf8(bytes).map_err(|_| refuse("names a file that is not UTF-8"))?)
        }
    };
    let old = current.as_deref().unwrap_or_default();
    let diff = similar::TextDiff::from_lines(old, &content)
        .unified_diff()
        .header(&format!("a/{text}"), &format!("b/{text}"))
        .to_string();
    Ok(FileDiff { path: text, content, diff, created: current.is_none() })
}
