//! The app's own resources, as `#[resource]` emits them: a fixed URI (`memo://insights`) or a
//! template with variables (`test://template/{id}/data`, RFC 6570's simple `{var}`: one path
//! segment — no `/`, not `.` or `..` — as written in the URI, not percent-decoded), each read
//! by its function.

use std::collections::BTreeMap;

use linkme::distributed_slice;
use serde_json::{Map, Value};

use super::{BoxFuture, DuplicateError, Registry};
use crate::auth::Scope;
use crate::ctx::Ctx;
use crate::declare::Embedded;
use crate::error::Error;

/// Run a resource's function with the template's variables (an object of strings).
pub type ResourceFn = fn(Ctx, String, Value) -> BoxFuture<Result<Embedded, Error>>;

/// One resource (or template) as `#[resource]` emitted it.
pub struct ResourceEntry {
    pub(crate) uri: &'static str,
    pub(crate) name: &'static str,
    pub(crate) scope: Scope,
    pub(crate) descriptor: &'static str,
    pub(crate) variables: &'static [&'static str],
    pub(crate) completions: &'static [(&'static str, &'static [&'static str])],
    pub(crate) read: ResourceFn,
    pub(crate) source: &'static str,
}

impl ResourceEntry {
    /// Used by `#[resource]`; not a public API.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub const fn __new(
        uri: &'static str,
        name: &'static str,
        scope: Scope,
        descriptor: &'static str,
        variables: &'static [&'static str],
        completions: &'static [(&'static str, &'static [&'static str])],
        read: ResourceFn,
        source: &'static str,
    ) -> ResourceEntry {
        ResourceEntry { uri, name, scope, descriptor, variables, completions, read, source }
    }

    /// Its URI, or URI template.
    pub fn uri(&self) -> &'static str {
        self.uri
    }
    /// Its name.
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// The scope a caller needs to list and read it.
    pub fn scope(&self) -> Scope {
        self.scope
    }
    /// Whether it is a template (it has variables).
    pub fn is_template(&self) -> bool {
        !self.variables.is_empty()
    }
    /// Its `resources/list` (or `resources/templates/list`) entry, JSON, exactly as served.
    pub fn descriptor(&self) -> &'static str {
        self.descriptor
    }
    /// The values variable `variable` may take (its `one_of`), for `completion/complete`.
    pub fn completions(&self, variable: &str) -> &'static [&'static str] {
        self.completions.iter().find(|(name, _)| *name == variable).map_or(&[], |(_, values)| values)
    }
    /// The Rust path of its function.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// The variables of `uri` if it names this resource: `{}` for its fixed URI, each `{var}` of
    /// a template bound to the non-empty text between its neighbours (never a `/`).
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let mut variables = Map::new();
        let mut rest = uri;
        let mut template = self.uri;
        while let Some(open) = template.find('{') {
            rest = rest.strip_prefix(&template[..open])?;
            let close = open + template[open..].find('}')?;
            let name = &template[open + 1..close];
            template = &template[close + 1..];
            // Up to the next literal text of the template (the template's tail: the end, less it),
            // within one segment.
            let end = match template.find('{') {
                Some(next) => rest.find(&template[..next])?,
                None => rest.len().checked_sub(template.len()).filter(|end| rest[*end..] == *template)?,
            };
            let value = rest.get(..end)?;
            // One segment, and not one that walks the path (`.`, `..`): a variable is often used
            // as a name. Values arrive as the URI writes them (not percent-decoded).
            if value.is_empty() || value.contains('/') || value == "." || value == ".." {
                return None;
            }
            variables.insert(name.to_owned(), Value::String(value.to_owned()));
            rest = &rest[end..];
        }
        (rest == template).then_some(variables)
    }

    /// Read `uri` (which [`ResourceEntry::matches`]) with its `variables`.
    pub async fn read(&self, ctx: Ctx, uri: &str, variables: Map<String, Value>) -> Result<Embedded, Error> {
        (self.read)(ctx, uri.to_owned(), Value::Object(variables)).await
    }
}

impl std::fmt::Debug for ResourceEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceEntry").field("uri", &self.uri).field("source", &self.source).finish_non_exhaustive()
    }
}

/// Every `#[resource]` linked into the binary.
#[doc(hidden)]
#[distributed_slice]
pub static RESOURCES: [ResourceEntry];

/// The resources by URI (template); two of one (or two templates of one form) are refused,
/// naming both.
pub(crate) fn by_uri(
    resources: impl IntoIterator<Item = &'static ResourceEntry>,
) -> Result<BTreeMap<&'static str, &'static ResourceEntry>, DuplicateError> {
    let mut by_uri = BTreeMap::new();
    // Two templates that differ only in their variables' names match the same URIs.
    let mut by_form = BTreeMap::new();
    for resource in resources {
        let form: String = resource
            .uri
            .split('{')
            .map(|part| part.split_once('}').map_or(part, |(_, rest)| rest))
            .collect::<Vec<_>>()
            .join("{}");
        let clash = by_uri.insert(resource.uri, resource).or(by_form.insert(form, resource));
        if let Some(first) = clash {
            return Err(DuplicateError {
                what: "resource",
                name: resource.uri,
                first: first.source,
                second: resource.source,
                ids: None,
            });
        }
    }
    Ok(by_uri)
}

impl Registry {
    /// The app's own resources and templates, in URI order.
    pub fn resources(&self) -> impl Iterator<Item = &'static ResourceEntry> + '_ {
        self.resources.values().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(uri: &'static str, variables: &'static [&'static str]) -> ResourceEntry {
        ResourceEntry::__new(
            uri,
            "r",
            Scope::Runtime,
            "{}",
            variables,
            &[],
            |_, _, _| Box::pin(async { Err(Error::internal("unused")) }),
            "t",
        )
    }

    static A: std::sync::LazyLock<ResourceEntry> = std::sync::LazyLock::new(|| entry("a://{x}/data", &["x"]));
    static B: std::sync::LazyLock<ResourceEntry> = std::sync::LazyLock::new(|| entry("a://{y}/data", &["y"]));

    #[test]
    fn two_templates_of_one_form_are_refused() {
        let error = by_uri([&*A, &*B]).unwrap_err();
        assert_eq!(error.what, "resource");
        assert!(by_uri([&*A]).is_ok());
    }

    #[test]
    fn a_uri_matches_its_resource_and_binds_the_variables() {
        let fixed = entry("memo://insights", &[]);
        assert_eq!(fixed.matches("memo://insights"), Some(Map::new()));
        assert_eq!(fixed.matches("memo://insights/x"), None);
        let template = entry("test://template/{id}/data", &["id"]);
        let bound = template.matches("test://template/123/data").unwrap();
        assert_eq!(bound["id"], "123");
        for miss in
            ["test://template//data", "test://template/1/2/data", "test://template/1/datum", "test://other/1/data"]
        {
            assert_eq!(template.matches(miss), None, "{miss}");
        }
        let suffixed = entry("x://{name}.md", &["name"]);
        assert_eq!(suffixed.matches("x://a.md.md").unwrap()["name"], "a.md", "up to the template's tail");
        assert_eq!(suffixed.matches("x://..md"), None, "`.` walks the path");
        assert_eq!(template.matches("test://template/../data"), None);
        let two = entry("files://{dir}/{name}", &["dir", "name"]);
        let bound = two.matches("files://docs/readme.md").unwrap();
        assert_eq!((bound["dir"].as_str(), bound["name"].as_str()), (Some("docs"), Some("readme.md")));
        assert_eq!(two.matches("files://docs/a/b"), None);
    }
}
