//! Grammar of names and identifiers: each check returns the reason *and* the fix.

/// Longest tool name the hosts' model APIs accept (`^[a-zA-Z0-9_-]{1,64}$`, enforced by Claude and
/// OpenAI behind most hosts; SEP-986 itself allows 128). An id projects to a name of its length.
pub const MAX_ID_LEN: usize = 64;

/// A meta capability's `op`: `[a-z0-9]+` (no `_`, so tool names stay reversible).
pub fn check_op(op: &str) -> Result<(), String> {
    if op.is_empty() {
        return Err("op name is empty; use lowercase letters and digits, e.g. `op = \"shape\"`".into());
    }
    if op.contains('_') {
        let joined: String = op.chars().filter(|c| *c != '_').collect();
        return Err(format!(
            "op name `{op}` contains `_`, which would make the MCP tool name `trails_meta_…_{op}` ambiguous; \
             op names are lowercase letters and digits only: write `{joined}`, or move the prefix into the namespace"
        ));
    }
    if let Some(bad) = op.chars().find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit())) {
        return Err(format!(
            "op name `{op}` contains `{bad}`; op names are lowercase ASCII letters and digits only (`[a-z0-9]+`), e.g. `op = \"{}\"`",
            op.to_ascii_lowercase().chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>()
        ));
    }
    Ok(())
}

/// A meta capability's dotted `namespace`.
pub fn check_namespace(namespace: &str) -> Result<(), String> {
    if namespace.is_empty() {
        return Err(
            "namespace is empty; omit `namespace` or give dotted lowercase segments such as `gen` or `kg.admin`".into(),
        );
    }
    for segment in namespace.split('.') {
        let valid = segment.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && segment.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if !valid {
            return Err(format!(
                "namespace `{namespace}` has segment `{segment}`; segments are a lowercase letter then lowercase letters or digits, \
                 separated by `.` (no `_`: the MCP name joins segments with `_`)"
            ));
        }
    }
    Ok(())
}

/// A prompt's name: `[A-Za-z0-9_.-]`, at most 64 (as a tool's: hosts show prompts as slash
/// commands, and the MCP schema's name pattern is a tool's).
pub fn check_prompt_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("prompt name is empty; write `name = \"review\"`, or leave it out for the function's name".into());
    }
    if name.len() > MAX_ID_LEN {
        return Err(format!(
            "prompt name is {} characters long; hosts accept at most {MAX_ID_LEN}: shorten it",
            name.len()
        ));
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))) {
        return Err(format!(
            "prompt name `{name}` contains `{bad}`; names may use only ASCII letters, digits, `_`, `.` and `-`"
        ));
    }
    Ok(())
}

/// A capability id: `[A-Za-z0-9_.-]`, at most 128, not under the reserved `trails.meta`.
pub fn check_capability_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("capability id is empty; use dotted names such as `requirements.search`".into());
    }
    if id.len() > MAX_ID_LEN {
        return Err(format!(
            "capability id is {} characters long; its MCP tool name would be too, and hosts accept at most {MAX_ID_LEN}: shorten it",
            id.len()
        ));
    }
    if let Some(bad) = id.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))) {
        let shown = if bad.is_whitespace() { "whitespace".to_owned() } else { format!("`{bad}`") };
        return Err(format!(
            "capability id `{id}` contains {shown}; ids may use only ASCII letters, digits, `_`, `.` and `-`, e.g. `requirements.search`"
        ));
    }
    if id.starts_with("trails.meta.") || id.starts_with("trails_meta_") {
        return Err(format!(
            "capability id `{id}` uses the reserved `trails.meta` prefix; declare it with `#[meta_capability(namespace = …, op = …)]` instead"
        ));
    }
    Ok(())
}

/// A SemVer version.
pub fn check_semver(version: &str) -> Result<(), String> {
    semver::Version::parse(version).map(|_| ()).map_err(|error| {
        format!("version `{version}` is not SemVer ({error}); write MAJOR.MINOR.PATCH, e.g. `version = \"1.2.0\"`")
    })
}

/// An absolute IRI (RFC 3987), as the store and the manifest require.
pub fn check_iri(iri: &str) -> Result<(), String> {
    match oxiri::Iri::parse(iri) {
        Ok(_) => Ok(()),
        Err(error) => Err(format!(
            "`{iri}` is not an absolute IRI ({error}); write a full IRI such as `https://example.org/ns#Name`"
        )),
    }
}

/// The namespace part of a type IRI: up to and including its last `#` or `/`.
pub fn iri_namespace(iri: &str) -> String {
    match iri.rfind(['#', '/']) {
        Some(index) if index + 1 < iri.len() || iri.ends_with(['#', '/']) => iri[..=index].to_owned(),
        _ => format!("{iri}#"),
    }
}

/// MCP name of a runtime capability: its id with `.` → `_` (`requirements.search` →
/// `requirements_search`), since the hosts' model APIs refuse dots in tool names.
pub fn runtime_tool_name(id: &str) -> String {
    id.replace('.', "_")
}

/// A meta capability's canonical id (and so its tool name, of the same length) fits in
/// [`MAX_ID_LEN`].
pub fn check_meta_id_len(id: &str) -> Result<(), String> {
    if id.len() > MAX_ID_LEN {
        return Err(format!(
            "meta capability id `{id}` is {} characters long; its MCP tool name would be too, and hosts accept at most {MAX_ID_LEN}: shorten the namespace or op",
            id.len()
        ));
    }
    Ok(())
}

/// MCP name of a meta capability: `trails_meta_<namespace with _>_<op>`.
pub fn meta_tool_name(namespace: Option<&str>, op: &str) -> String {
    match namespace {
        Some(ns) => format!("trails_meta_{}_{op}", ns.replace('.', "_")),
        None => format!("trails_meta_{op}"),
    }
}

/// Canonical id of a meta capability: `trails.meta.<namespace>.<op>`.
pub fn meta_capability_id(namespace: Option<&str>, op: &str) -> String {
    match namespace {
        Some(ns) => format!("trails.meta.{ns}.{op}"),
        None => format!("trails.meta.{op}"),
    }
}

/// serde's `rename_all` rules, applied to enum variants exactly as serde_derive does (ASCII case
/// mapping, `char::is_uppercase` for word breaks), so the schema's `enum` and the wire agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenameRule {
    /// `lowercase`
    Lower,
    /// `UPPERCASE`
    Upper,
    /// `PascalCase`
    Pascal,
    /// `camelCase`
    Camel,
    /// `snake_case`
    Snake,
    /// `SCREAMING_SNAKE_CASE`
    ScreamingSnake,
    /// `kebab-case`
    Kebab,
    /// `SCREAMING-KEBAB-CASE`
    ScreamingKebab,
}

impl RenameRule {
    /// Every rule with its serde spelling.
    pub const ALL: &'static [(&'static str, RenameRule)] = &[
        ("lowercase", RenameRule::Lower),
        ("UPPERCASE", RenameRule::Upper),
        ("PascalCase", RenameRule::Pascal),
        ("camelCase", RenameRule::Camel),
        ("snake_case", RenameRule::Snake),
        ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
        ("kebab-case", RenameRule::Kebab),
        ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
    ];

    /// The rule serde spells `name`.
    pub fn parse(name: &str) -> Option<RenameRule> {
        RenameRule::ALL.iter().find(|(spelling, _)| *spelling == name).map(|(_, rule)| *rule)
    }

    /// The serde spelling.
    pub fn name(self) -> &'static str {
        RenameRule::ALL.iter().find(|(_, rule)| *rule == self).map(|(name, _)| *name).expect("every rule is listed")
    }

    /// `variant` renamed (serde_derive's `RenameRule::apply_to_variant`).
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            // serde slices `[..1]`, which panics on a non-ASCII first letter; ASCII-lowercasing the
            // first char gives serde's result everywhere serde has one.
            RenameRule::Camel => {
                let mut chars = variant.chars();
                chars.next().map(|first| first.to_ascii_lowercase().to_string() + chars.as_str()).unwrap_or_default()
            }
            RenameRule::Snake => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            RenameRule::ScreamingSnake => RenameRule::Snake.apply_to_variant(variant).to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake.apply_to_variant(variant).replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake.apply_to_variant(variant).replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names() {
        assert!(check_op("shape").is_ok());
        assert!(check_op("v2").is_ok());
        assert!(check_op("make_shape").unwrap_err().contains("makeshape"));
        assert!(check_op("").is_err());
        assert!(check_op("Shape").unwrap_err().contains("`S`"));
    }

    #[test]
    fn meta_names_are_reversible() {
        assert_eq!(meta_tool_name(Some("gen"), "shape"), "trails_meta_gen_shape");
        assert_eq!(meta_tool_name(None, "ping"), "trails_meta_ping");
        assert_eq!(meta_capability_id(Some("kg.admin"), "wipe"), "trails.meta.kg.admin.wipe");
        assert_eq!(meta_tool_name(Some("kg.admin"), "wipe"), "trails_meta_kg_admin_wipe");
        assert_eq!(runtime_tool_name("requirements.search"), "requirements_search");
        assert_eq!(runtime_tool_name("trails.kg.read_field"), "trails_kg_read_field");
        assert!(check_capability_id(&"a".repeat(64)).is_ok());
        assert!(check_capability_id(&"a".repeat(65)).unwrap_err().contains("at most 64"));
        assert!(check_meta_id_len("trails.meta.gen.shape").is_ok());
        assert!(check_meta_id_len(&format!("trails.meta.{}.op", "n".repeat(50))).unwrap_err().contains("at most 64"));
    }

    #[test]
    fn ids() {
        assert!(check_capability_id("research.search").is_ok());
        assert!(check_capability_id("a b").unwrap_err().contains("whitespace"));
        assert!(check_capability_id(&"a".repeat(129)).is_err());
        assert!(check_capability_id("trails.meta.x").is_err());
    }

    #[test]
    fn namespaces_of_iris() {
        assert_eq!(iri_namespace("https://example.org/req#Requirement"), "https://example.org/req#");
        assert_eq!(iri_namespace("https://example.org/req/Requirement"), "https://example.org/req/");
        assert_eq!(iri_namespace("urn:x"), "urn:x#");
    }

    #[test]
    fn renames_match_serde() {
        assert_eq!(RenameRule::Snake.apply_to_variant("HighPriority"), "high_priority");
        assert_eq!(RenameRule::Kebab.apply_to_variant("HighPriority"), "high-priority");
        // ASCII case mapping, as serde: a non-ASCII capital keeps its case.
        assert_eq!(RenameRule::Lower.apply_to_variant("Über"), "Über");
        assert_eq!(RenameRule::parse("camelCase"), Some(RenameRule::Camel));
        assert_eq!(RenameRule::Camel.name(), "camelCase");
    }
}
