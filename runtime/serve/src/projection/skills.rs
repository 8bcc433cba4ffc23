//! Skills (the MCP Skills extension, SEP-2640) generated from the declarations: one per
//! capability namespace, a `SKILL.md` saying what each runtime tool of it does, what must hold
//! before it is called, what it changes and costs, whether it asks the user first, and a call to
//! start from — read off the descriptors the macros emitted, so an agent learns the app from
//! its contract. Served at `skill://<namespace>/SKILL.md` (`skills/list`, `skills/get`,
//! `resources/read`), when the app asks for them (`App::skills`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rmcp::model::{
    ReadResourceResult, Resource, ResourceContents, Skill, SkillFrontmatter, SkillResource, SkillResources,
};
use serde_json::{json, Value};

use trails_core::auth::Scope;
use trails_core::registry::{Registry, ToolEntry, ToolKind};

const MARKDOWN: &str = "text/markdown";

/// The generated skills, rendered once at start.
pub(crate) struct Skills {
    /// By `SKILL.md` URI, each with its text.
    skills: Vec<(Skill, String)>,
}

impl Skills {
    /// One skill per namespace of the runtime tools every caller sees (`runtime` scope, not meta
    /// capabilities); tools without a namespace (`id` without a `.`) go under the app's `name`.
    /// `own_canonical`: the canonical descriptors the server publishes in place of the macros'
    /// (`served::own_canonical`), so a skill says what the manifest says.
    pub(crate) fn generated(
        registry: &Registry,
        app: &str,
        own_canonical: &std::collections::HashMap<&'static str, String>,
    ) -> Skills {
        let mut namespaces: BTreeMap<String, Vec<&'static ToolEntry>> = BTreeMap::new();
        for tool in registry.tools().filter(|tool| tool.kind() == ToolKind::Runtime && tool.scope() == Scope::Runtime) {
            let namespace = tool.id().split_once('.').map_or(app, |(namespace, _)| namespace);
            namespaces.entry(skill_name(namespace)).or_default().push(tool);
        }
        let skills = namespaces
            .into_iter()
            .map(|(name, tools)| {
                let uri = format!("skill://{name}/SKILL.md");
                let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
                let description = cut(
                    &format!(
                        "How to use the `{name}` tools of {app} ({}): what each does, what must hold first, what it changes \
                         and costs, and a call to start from",
                        names.join(", ")
                    ),
                    1024,
                );
                let text = render(&name, &description, app, &tools, own_canonical);
                let resources = SkillResources::Files(vec![SkillResource::from_bytes(&uri, text.as_bytes())]);
                (Skill::new(uri, SkillFrontmatter::new(name, description), resources), text)
            })
            .collect();
        Skills { skills }
    }

    /// Every skill, in name order.
    pub(crate) fn list(&self) -> Vec<Skill> {
        self.skills.iter().map(|(skill, _)| skill.clone()).collect()
    }

    /// The skill whose `SKILL.md` is at `uri`.
    pub(crate) fn get(&self, uri: &str) -> Option<Skill> {
        self.skills.iter().find(|(skill, _)| skill.uri == uri).map(|(skill, _)| skill.clone())
    }

    /// The `SKILL.md` resources, as `resources/list` shows them.
    pub(crate) fn resources(&self) -> Vec<Resource> {
        let listed = self.skills.iter().map(|(skill, _)| {
            json!({
                "uri": skill.uri,
                "name": skill.frontmatter.name,
                "description": skill.frontmatter.description,
                "mimeType": MARKDOWN,
            })
        });
        listed.filter_map(|resource| serde_json::from_value(resource).ok()).collect()
    }

    /// `uri`'s contents, if it is one of the skills' files.
    pub(crate) fn read(&self, uri: &str) -> Option<ReadResourceResult> {
        let (skill, text) = self.skills.iter().find(|(skill, _)| skill.uri == uri)?;
        let contents = ResourceContents::text(text.clone(), skill.uri.clone()).with_mime_type(MARKDOWN);
        Some(ReadResourceResult::new(vec![contents]))
    }
}

/// A skill name (1–64 of lowercase letters, digits and single hyphens) for `namespace`.
fn skill_name(namespace: &str) -> String {
    let mut name = String::new();
    for c in namespace.chars().flat_map(char::to_lowercase) {
        match c {
            'a'..='z' | '0'..='9' => name.push(c),
            _ if !name.ends_with('-') && !name.is_empty() => name.push('-'),
            _ => {}
        }
    }
    let name = cut(name.trim_end_matches('-'), 64).trim_end_matches('-').to_owned();
    if name.is_empty() {
        "tools".to_owned()
    } else {
        name
    }
}

fn cut(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

/// The `SKILL.md` of the namespace `name`: its frontmatter, then a section per tool.
fn render(
    name: &str,
    description: &str,
    app: &str,
    tools: &[&'static ToolEntry],
    own_canonical: &std::collections::HashMap<&'static str, String>,
) -> String {
    // The frontmatter's values as JSON strings: valid YAML, whatever they hold.
    let mut text = format!("---\nname: {name}\ndescription: {}\n---\n\n", json!(description));
    let _ = writeln!(
        text,
        "# {name}\n\nThe `{name}` tools of {app}, as they are declared. Each call's arguments are checked against \
         the tool's input schema before it runs, and every field error comes back at once (`-32602`, \
         `data.fields`); a domain error (`not_found`, `conflict`, `precondition_failed`, `unavailable`) is a \
         result to read, saying whether a retry can help."
    );
    for tool in tools {
        let descriptor: Value = serde_json::from_str(tool.descriptor()).unwrap_or_default();
        let canonical = own_canonical.get(tool.name()).map_or(tool.canonical(), String::as_str);
        let canonical: Value = serde_json::from_str(canonical).unwrap_or_default();
        section(&mut text, tool, &descriptor, &canonical);
    }
    text
}

fn section(text: &mut String, tool: &ToolEntry, descriptor: &Value, canonical: &Value) {
    let _ = writeln!(text, "\n## `{}`\n", tool.name());
    let _ = writeln!(text, "{}\n", descriptor["description"].as_str().unwrap_or_default().trim());
    let schema = &descriptor["inputSchema"];
    let required: Vec<&str> = schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let arguments: Vec<String> = schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(field, property)| {
            let kind = property["type"].as_str().unwrap_or("value");
            let need = if required.contains(&field.as_str()) { "required" } else { "optional" };
            let mut rules = Vec::new();
            if let Some(values) = property["enum"].as_array() {
                rules.push(format!("one of {}", values.iter().map(Value::to_string).collect::<Vec<_>>().join(", ")));
            }
            if let Some(pattern) = property["pattern"].as_str() {
                rules.push(format!("matching `{pattern}`"));
            }
            for (key, says) in [("minLength", "at least {} characters"), ("maxLength", "at most {} characters")] {
                if let Some(n) = property[key].as_u64() {
                    rules.push(says.replace("{}", &n.to_string()));
                }
            }
            let rules = if rules.is_empty() { String::new() } else { format!("; {}", rules.join(", ")) };
            let about = property["description"].as_str().map(|about| format!(": {about}")).unwrap_or_default();
            format!("`{field}` ({kind}, {need}{rules}){about}")
        })
        .collect();
    match arguments.is_empty() {
        true => text.push_str("- **Arguments**: none.\n"),
        false => {
            let _ = writeln!(text, "- **Arguments**: {}.", arguments.join("; "));
        }
    }
    let preconditions: Vec<String> = canonical["preconditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|precondition| {
            let parameters = precondition["parameters"].as_object().into_iter().flatten();
            let parameters: Vec<String> = parameters.map(|(key, value)| format!("{key} = {value}")).collect();
            format!("`{}({})`", precondition["kind"].as_str().unwrap_or("?"), parameters.join(", "))
        })
        .collect();
    if !preconditions.is_empty() {
        let _ = writeln!(text, "- **Must hold first**: {}.", preconditions.join(", "));
    }
    let _ = writeln!(text, "- **Changes**: {}.", effects(&canonical["side_effects"]));
    if let Some(cost) = cost(&canonical["cost"]) {
        let _ = writeln!(text, "- **Costs**: {cost}.");
    }
    if let Some(question) = canonical["confirm"].as_str() {
        let _ = writeln!(text, "- **Asks the user first**: \"{question}\" (it runs only on a yes).");
    }
    if tool.idempotent() {
        text.push_str(
            "- **Idempotent**: calling it twice is calling it once; an idempotency key makes a retry replay.\n",
        );
    }
    let example = json!({ "name": tool.name(), "arguments": example(schema) });
    let _ = writeln!(text, "\nA call to start from (replace what is in angle brackets):\n\n```json\n{example}\n```");
}

fn effects(effects: &Value) -> String {
    if effects.is_null() {
        return "undeclared: assume it may write anything".to_owned();
    }
    let mut said = Vec::new();
    let list = |key: &str| effects[key].as_array().into_iter().flatten().filter_map(Value::as_str).collect::<Vec<_>>();
    let writes = list("writes");
    if !writes.is_empty() {
        said.push(format!("writes {}", writes.join(", ")));
    }
    if effects["deletes"] == true {
        said.push("deletes".to_owned());
    }
    if effects["overwrites"] == true {
        said.push("overwrites".to_owned());
    }
    let external = list("external_calls");
    if !external.is_empty() {
        said.push(format!("calls out to {}", external.join(", ")));
    }
    if said.is_empty() {
        said.push("none: it only reads".to_owned());
    }
    if effects["provenance"] == true {
        said.push("records provenance".to_owned());
    }
    said.join("; ")
}

fn cost(cost: &Value) -> Option<String> {
    let mut said = Vec::new();
    if let Some(tokens) = cost["tokens"].as_u64() {
        said.push(format!("about {tokens} tokens"));
    }
    if let Some(usd) = cost["usd"].as_f64() {
        said.push(format!("${usd}"));
    }
    if let (Some(p50), Some(p95)) = (cost["latency_p50_ms"].as_u64(), cost["latency_p95_ms"].as_u64()) {
        said.push(format!("{p50} ms typically, {p95} ms at the 95th percentile"));
    }
    (!said.is_empty()).then(|| said.join(", "))
}

/// Arguments that show the call's shape: each required property, with its first allowed value or
/// a placeholder naming what it takes.
fn example(schema: &Value) -> Value {
    let required = schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str);
    let arguments = required.map(|field| {
        let property = &schema["properties"][field];
        let value = match (property["enum"].as_array().and_then(|values| values.first()), property["type"].as_str()) {
            (Some(first), _) => first.clone(),
            (None, Some("integer" | "number")) => {
                property["minimum"].as_f64().map_or(json!(1), |min| json!(min.max(1.0) as i64))
            }
            (None, Some("boolean")) => json!(true),
            (None, Some("array")) => json!([]),
            (None, Some("object")) => json!({}),
            (None, _) => match property["pattern"].as_str() {
                Some(pattern) => json!(format!("<{field}: {pattern}>")),
                None => json!(format!("<{field}>")),
            },
        };
        (field.to_owned(), value)
    });
    Value::Object(arguments.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_becomes_a_skill_name() {
        assert_eq!(skill_name("requirements"), "requirements");
        assert_eq!(skill_name("My_App v2"), "my-app-v2");
        assert_eq!(skill_name("__"), "tools");
        assert_eq!(skill_name(&"x".repeat(100)).len(), 64);
    }

    #[test]
    fn an_example_takes_the_first_allowed_value_or_names_what_it_needs() {
        let schema = json!({
            "properties": {
                "status": { "type": "string", "enum": ["open", "closed"] },
                "id": { "type": "string", "pattern": "^REQ-\\d+$" },
                "limit": { "type": "integer", "minimum": 0 },
                "note": { "type": "string" },
            },
            "required": ["status", "id", "limit"],
        });
        assert_eq!(example(&schema), json!({ "status": "open", "id": "<id: ^REQ-\\d+$>", "limit": 1 }));
    }
}
