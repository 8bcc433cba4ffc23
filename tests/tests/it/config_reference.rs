//! The configuration reference has one source: the `trails.toml` types. The annotated
//! `trails.toml` in `runtime/guide/04-serving.md` parses with them as it stands (so it names no
//! key they lack and shows no value they refuse), it shows every key of every section they
//! accept (a key may be commented out, as the remote store's are); every other `trails.toml`
//! excerpt of the guide parses too; and the guide names every `TRAILS_*` variable the runtime
//! reads.

use std::collections::BTreeSet;
use std::path::Path;

use serde::de::{self, Deserialize, Visitor};
use trails::config::{
    AuthConfig, BudgetConfig, CapabilityConfig, Config, CoordinationConfig, HttpConfig, IdempotencyConfig,
    IntrospectionConfig, KgConfig, ManifestConfig, McpConfig, OAuthConfig, PolicyConfig, ProjectConfig, TasksConfig,
    TelemetryConfig, TokenConfig,
};

/// The field names serde's derive gives `T`'s `deserialize_struct`: the keys its table accepts.
fn keys<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    struct Grab<'a>(&'a mut &'static [&'static str]);
    impl<'de> de::Deserializer<'de> for Grab<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("fields taken"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
            unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Grab(&mut fields));
    assert!(!fields.is_empty(), "{} is not a struct", std::any::type_name::<T>());
    fields
}

fn guide() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/guide/04-serving.md")).unwrap()
}

/// The guide's annotated `trails.toml`.
fn reference(guide: &str) -> String {
    let start = guide.find("```toml\n# trails.toml").expect("the guide shows an annotated trails.toml");
    let body = &guide[start + "```toml\n".len()..];
    body[..body.find("```").unwrap()].to_owned()
}

/// `(table, key)` for every `key = …` line of `toml`, commented out or not.
fn shown(toml: &str) -> BTreeSet<(String, String)> {
    let mut table = String::new();
    let mut found = BTreeSet::new();
    for line in toml.lines() {
        let line = line.trim_start_matches('#').trim();
        if let Some(name) = line.strip_prefix("[[").and_then(|l| l.split("]]").next()) {
            table = name.to_owned();
        } else if let Some(name) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
            table = name.to_owned();
        } else if let Some((key, _)) = line.split_once(" = ") {
            let key = key.trim();
            if key.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
                found.insert((table.clone(), key.to_owned()));
            }
        }
    }
    found
}

#[test]
fn the_guides_trails_toml_parses_and_shows_every_key() {
    let toml = reference(&guide());
    if let Err(error) = Config::parse(&toml) {
        panic!("the guide's trails.toml does not parse: {error}");
    }
    let shown = shown(&toml);
    // The sections the server reads itself are the ones its `Config` has (any other is a part's).
    assert_eq!(trails::config::SECTIONS, keys::<Config>());
    // Tables as sections (`[http]`) are keys of their parent too: those are covered by the
    // section's own keys.
    let sections: [(&str, &[&str]); 17] = [
        ("", keys::<Config>()),
        ("project", keys::<ProjectConfig>()),
        ("mcp", keys::<McpConfig>()),
        ("http", keys::<HttpConfig>()),
        ("http.tokens", keys::<TokenConfig>()),
        ("capability", keys::<CapabilityConfig>()),
        ("capability.manifest", keys::<ManifestConfig>()),
        ("kg", keys::<KgConfig>()),
        ("policy", keys::<PolicyConfig>()),
        ("budget", keys::<BudgetConfig>()),
        ("idempotency", keys::<IdempotencyConfig>()),
        ("auth", keys::<AuthConfig>()),
        ("auth.oauth", keys::<OAuthConfig>()),
        ("auth.oauth.introspection", keys::<IntrospectionConfig>()),
        ("telemetry", keys::<TelemetryConfig>()),
        ("coordination", keys::<CoordinationConfig>()),
        ("tasks", keys::<TasksConfig>()),
    ];
    let tables: BTreeSet<&str> = sections.iter().map(|(table, _)| *table).collect();
    let mut missing = Vec::new();
    for (table, keys) in sections {
        for key in keys {
            let path = if table.is_empty() { (*key).to_owned() } else { format!("{table}.{key}") };
            if !tables.contains(path.as_str()) && !shown.contains(&(table.to_owned(), (*key).to_owned())) {
                missing.push(path);
            }
        }
    }
    assert!(missing.is_empty(), "the guide's trails.toml does not show: {missing:?}");
}

/// Every chapter of the guide, as one text.
fn chapters() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/guide");
    std::fs::read_dir(dir).unwrap().map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap()).collect()
}

#[test]
fn every_trails_toml_excerpt_in_the_guide_parses() {
    let guide = chapters();
    let mut excerpts = 0;
    for block in guide.split("```toml\n").skip(1) {
        let block = &block[..block.find("```").unwrap()];
        // An app's Cargo.toml, not a trails.toml.
        if block.contains("[dependencies]") || block.contains("[dev-dependencies]") {
            continue;
        }
        if let Err(error) = Config::parse(block) {
            panic!("a trails.toml excerpt of the guide does not parse: {error}\n{block}");
        }
        excerpts += 1;
    }
    assert!(excerpts >= 3, "{excerpts} excerpts");
}

#[test]
fn the_guide_names_every_environment_variable_the_runtime_reads() {
    let guide = chapters();
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/serve/src");
    let mut read = BTreeSet::new();
    let variable = regex::Regex::new(r#""(TRAILS_[A-Z_]+)""#).unwrap();
    // Each section is resolved where it is used (the server's in `config/`, a part's in the
    // part), so every file of the serving crate.
    let mut dirs = vec![runtime];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                read.extend(variable.captures_iter(&text).map(|c| c[1].to_owned()));
            }
        }
    }
    assert!(read.len() >= 10, "found only {read:?}");
    let unnamed: Vec<_> = read.iter().filter(|name| !guide.contains(name.as_str())).collect();
    assert!(unnamed.is_empty(), "no chapter of runtime/guide names {unnamed:?}");
}

/// A newcomer's `trails.toml` beside the binary is read without `--config`, and the log says
/// which file was; with none there, the log says so too.
#[test]
fn the_trails_toml_in_the_working_directory_is_read_and_named_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let tools = |dir: &Path| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_trails-fixture-server"));
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("TRAILS_") {
                command.env_remove(name);
            }
        }
        command.arg("tools").current_dir(dir).env("TRAILS_KG_PATH", dir.join("kg")).output().unwrap()
    };
    let without = tools(dir.path());
    assert!(without.status.success());
    assert!(String::from_utf8_lossy(&without.stderr).contains("no trails.toml here"));
    assert!(!String::from_utf8_lossy(&without.stdout).contains("trails_meta_gen_shape"), "dev tools need the scope");

    std::fs::write(dir.path().join("trails.toml"), "[mcp]\nscopes = [\"runtime\", \"builder\", \"dev\"]\n").unwrap();
    let with = tools(dir.path());
    assert!(with.status.success());
    let log = String::from_utf8_lossy(&with.stderr);
    assert!(log.contains("configuration read from this file") && log.contains("trails.toml"), "{log}");
    assert!(String::from_utf8_lossy(&with.stdout).contains("trails_meta_gen_shape"), "the file's scopes apply");
}

/// `tools` reads no store, yet refuses what `serve` would: a part's section that does not
/// resolve, and a section no part reads (exit code 2, the key named).
#[test]
fn tools_refuses_a_trails_toml_that_serve_would() {
    let dir = tempfile::tempdir().unwrap();
    let tools = |toml: &str| {
        std::fs::write(dir.path().join("trails.toml"), toml).unwrap();
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_trails-fixture-server"));
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("TRAILS_") {
                command.env_remove(name);
            }
        }
        command.arg("tools").current_dir(dir.path()).env("TRAILS_KG_PATH", dir.path().join("kg")).output().unwrap()
    };
    for (toml, said) in [
        ("[kg]\nbase = \"not an iri\"\n", "[kg] base"),
        ("[budget]\nusd = -1.0\n", "[budget] usd"),
        ("[kgg]\npath = \"x\"\n", "did you mean [kg]?"),
    ] {
        let out = tools(toml);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{toml}: {stderr}");
        assert!(stderr.contains(said), "{toml}: {stderr}");
        assert!(!dir.path().join("kg").exists(), "{toml}: the store was opened");
    }
    assert!(tools("[kg]\nbase = \"https://example.org/kg\"\n").status.success());
}
