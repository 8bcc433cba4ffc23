//! The validator agrees with the published schema: every tool's input
//! schema, as `tools/list` publishes it, and a corpus generated from it — a valid instance, then
//! each property (nested ones and list items too) replaced by edge values of its type and its
//! constraints, removed, or joined by an unknown one — is decided by the Trails validator, by Ajv
//! (npm, draft-07, `ajv-formats`) and by Python's `jsonschema` (draft-07, `FormatChecker`, ECMA-262
//! patterns through `regress`). Every accept/reject decision must match, except the differences
//! listed below, each with its reason. Values go to each validator as JSON *text*, so `1.0`, `-0`
//! and `2^64` arrive as written.
//!
//! Blob objects are not varied inside: a blob's content (`base64` must decode; echoed `size`,
//! `sha256`, `uri` must match the bytes) is not expressible in JSON Schema (`contentEncoding` is
//! an annotation) and Trails checks it beyond the schema; their schema is compared through the
//! valid base and the type errors of the property holding them.
//!
//! An accepted instance must also deserialise into the handler's types: every accepted case is
//! passed to the real handler (on a temporary store), and none may fail to deserialise — the
//! validator accepting what serde refuses would be an internal error, not a validation error.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Map, Value};
use trails::kg::KgCtx;
use trails::registry::Registry;
use trails::{Ctx, Error};

/// Where the decisions may differ, and why. Anything else that differs fails the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// `null` for an optional property: the schema states `T` (`runtime/guide/02-declaring.md`: no `null` unions, which
    /// clients break on) and a strict validator refuses `null`; Trails reads it as absent, as
    /// serde does, because models send `null` for "not given". Lenient server side only: nothing
    /// a client following the schema sends is refused.
    NullAsAbsent,
    /// An integer beyond 2^53 next to a bound near 2^64: JavaScript numbers are doubles, so Ajv
    /// reads 2^64 and `u64::MAX` as the same number. Trails and Python compare exactly.
    JsDoublePrecision,
    /// `i64::MIN` written as a float (`-9223372036854775808.0`): JSON numbers past `i64` are
    /// parsed as doubles, and `-9223372036854775809` reads as that same double. Trails refuses
    /// both rather than take the second for `i64::MIN` (a silently changed number); Ajv and
    /// Python accept the first. Only the float spelling of that one value is refused.
    FloatAtI64Min,
    /// `format: date-time`: RFC 3339 as read by `chrono` (Trails), `ajv-formats` (full mode) and
    /// `rfc3339-validator` (Python). Formats aside, listed value by value in [`date_time_verdicts`].
    DateTimeFormat,
    /// `format: iri` (a `Ref`): Trails requires an absolute IRI (`scheme:rest`, no spaces); Ajv
    /// (`ajv-formats` has no `iri`) and Python (without `rfc3987`) do not check it. A client
    /// sending a non-IRI gets a `type` FieldError; whether it names a stored instance is checked
    /// by the store anyway.
    IriFormat,
}

/// The edge strings every string property is tried with (besides lengths at its bounds).
const STRINGS: &[&str] = &[
    "",
    "a",
    "abc",
    "é",
    "😀",
    "REQ-12",
    "REQ-١٢",
    "REQ-１２",
    "REQ-12\n",
    "\nREQ-12",
    "REQ-",
    "req-12",
    "FR",
    "fr",
    "ÉÉ",
    "F\u{0301}",
    "ada@example.org",
    "ada@example",
    "ad a@example.org",
    "ada@exa\u{3000}mple.org",
    "ada@exa\u{85}mple.org",
    "ada@exa\u{feff}mple.org",
    "n-1",
    "N-1",
    "a\u{2028}b",
    "a\rb",
    "proposed",
    "PROPOSED",
    "asc",
    "urn:x:1",
    "not an iri",
    "2026-01-31T12:00:00Z",
    "2026-01-31T12:00:00+01:00",
    "2026-01-31T12:00:00.123456789Z",
    "2026-01-31t12:00:00z",
    "2026-01-31 12:00:00Z",
    "2026-01-31T12:00:00",
    "2026-02-30T12:00:00Z",
    "2026-01-31T24:00:00Z",
    "2026-12-31T23:59:60Z",
    "2026-01-31",
];

/// Integer-ish JSON texts, as written on the wire.
const INTEGERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "1.0",
    "-0",
    "-0.0",
    "1e0",
    "1e2",
    "1.5",
    "0.1",
    "255.0",
    "256",
    "65536",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "1e300",
    "-1e300",
    "\"1\"",
    "true",
    "[]",
];

/// Number JSON texts.
const NUMBERS: &[&str] =
    &["0", "0.5", "1", "1.0", "-0.0", "1.0000000001", "-1e-300", "1e300", "-1e300", "2", "\"0.5\"", "false"];

/// A value of every other JSON type, for type errors.
const OTHERS: &[&str] = &["null", "true", "1", "\"x\"", "[]", "{}"];

/// A valid sample for each `pattern` the apps declare (a new pattern must be added here).
fn pattern_sample(pattern: &str) -> &'static str {
    match pattern {
        r"^REQ-\d+$" => "REQ-1",
        "^trails://" => "trails://schema",
        "^[0-9a-f]{32}$" => "8f434346648f6b96df89dda901c5176b",
        r"^[A-Z]{2}$" => "FR",
        r"^[a-z0-9-]{1,64}$" => "n-1",
        r"^[^@\s]+@[^@\s]+$" | r"^[^@\s]+@[^@\s]+\.[^@\s]+$" => "ada@example.org",
        r"^[0-9a-f]{64}$" => "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4",
        r"^[a-z][a-z0-9_]{0,63}$" => "due_date",
        r"^[A-Z][A-Za-z0-9]{0,63}$" => "SearchInput",
        r"^[A-Za-z0-9_.-]{1,128}$" => "reports.export",
        r"^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})$" => "1.2.0",
        r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\x22{}|\\^`]{1,2000}$" => "https://example.org/app#X",
        other => panic!("no sample for pattern {other}: add one to pattern_sample"),
    }
}

fn is_blob(schema: &Value) -> bool {
    schema["properties"].get("base64").is_some()
}

/// A valid instance of `schema`, with every optional property present (so each gets varied).
fn sample(schema: &Value) -> Value {
    if is_blob(schema) {
        return json!({ "media_type": "text/plain", "base64": "aGk=" });
    }
    if let Some(first) = schema["enum"].get(0) {
        return first.clone();
    }
    let int = |key: &str| schema[key].as_i64();
    match schema["type"].as_str().expect("a typed schema") {
        "object" => {
            let properties = schema["properties"].as_object().unwrap();
            Value::Object(properties.iter().map(|(name, p)| (name.clone(), sample(p))).collect())
        }
        "array" => {
            let count = schema["minItems"].as_u64().unwrap_or(1).max(1) as usize;
            Value::Array(vec![sample(&schema["items"]); count])
        }
        "string" => match (schema["pattern"].as_str(), schema["format"].as_str()) {
            (Some(pattern), _) => json!(pattern_sample(pattern)),
            (None, Some("date-time")) => json!("2026-01-31T12:00:00Z"),
            (None, Some("iri" | "uri")) => json!("urn:x:1"),
            _ => json!("a".repeat(schema["minLength"].as_u64().unwrap_or(1).max(1) as usize)),
        },
        "integer" => json!(1.clamp(int("minimum").unwrap_or(i64::MIN), int("maximum").unwrap_or(i64::MAX))),
        "number" => json!(0.5f64
            .clamp(schema["minimum"].as_f64().unwrap_or(f64::MIN), schema["maximum"].as_f64().unwrap_or(f64::MAX))),
        "boolean" => json!(true),
        other => panic!("unexpected type {other}"),
    }
}

/// The JSON texts to try at a position whose schema is `schema`.
fn candidates(schema: &Value) -> Vec<String> {
    let text = |v: &Value| v.to_string();
    let mut out: Vec<String> = OTHERS.iter().map(|s| (*s).to_owned()).collect();
    match schema["type"].as_str().unwrap_or_default() {
        "string" => {
            out.extend(STRINGS.iter().map(|s| text(&json!(s))));
            for key in ["minLength", "maxLength"] {
                let Some(n) = schema[key].as_u64().filter(|n| *n <= 10_000) else { continue };
                for length in [n.saturating_sub(1), n, n + 1] {
                    out.push(text(&json!("a".repeat(length as usize))));
                    // Code points, not UTF-16 units or bytes: an emoji is one character.
                    out.push(text(&json!("😀".repeat(length as usize))));
                }
            }
            if let Some(values) = schema["enum"].as_array() {
                out.extend(values.iter().map(text));
            }
        }
        "integer" => {
            out.extend(INTEGERS.iter().map(|s| (*s).to_owned()));
            for key in ["minimum", "maximum"] {
                let bound = schema[key].as_i64().map(i128::from).or_else(|| schema[key].as_u64().map(i128::from));
                if let Some(n) = bound {
                    out.extend([n - 1, n, n + 1].map(|v| v.to_string()));
                    out.push(format!("{n}.0"));
                }
            }
            if let Some(values) = schema["enum"].as_array() {
                out.extend(values.iter().map(|v| format!("{v}.0")));
            }
        }
        "number" => {
            out.extend(NUMBERS.iter().map(|s| (*s).to_owned()));
            for key in ["minimum", "maximum"] {
                if let Some(n) = schema[key].as_f64() {
                    out.extend([n - 0.001, n, n + 0.001].map(|v| text(&json!(v))));
                }
            }
        }
        "boolean" => out.extend(["false", "0", "\"true\""].map(str::to_owned)),
        "array" => {
            let item = sample(&schema["items"]);
            let max = schema["maxItems"].as_u64().unwrap_or(3) as usize;
            for count in [0, 1, max, max + 1] {
                out.push(text(&Value::Array(vec![item.clone(); count])));
            }
        }
        _ => {}
    }
    out
}

/// A property somewhere in an input: its JSON pointer segments, schema, and whether its object
/// requires it.
struct Position<'a> {
    path: Vec<String>,
    schema: &'a Value,
    required: bool,
}

/// Every property of `schema` (an object), nested objects and list items of objects included;
/// blobs are not entered (see [`Known::BlobContent`]). `objects` gets every object's path.
fn positions<'a>(schema: &'a Value, path: &[String], out: &mut Vec<Position<'a>>, objects: &mut Vec<Vec<String>>) {
    objects.push(path.to_vec());
    let required: Vec<&str> =
        schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    for (name, property) in schema["properties"].as_object().unwrap() {
        let here: Vec<String> = path.iter().cloned().chain([name.clone()]).collect();
        out.push(Position { path: here.clone(), schema: property, required: required.contains(&name.as_str()) });
        let (inner, inner_path) = match property["type"].as_str() {
            Some("object") => (property, here),
            Some("array") if property["items"]["type"] == "object" => {
                (&property["items"], here.into_iter().chain(["0".to_owned()]).collect())
            }
            Some("array") => {
                // A list of scalars: its first item is varied like any property.
                let item = here.into_iter().chain(["0".to_owned()]).collect();
                out.push(Position { path: item, schema: &property["items"], required: true });
                continue;
            }
            _ => continue,
        };
        if !is_blob(inner) {
            positions(inner, &inner_path, out, objects);
        }
    }
}

fn pointer(path: &[String]) -> String {
    path.iter().map(|segment| format!("/{segment}")).collect()
}

/// One case: the tool, the instance as JSON text, what was varied, and whether a difference
/// there is a listed one.
struct Case {
    tool: String,
    text: String,
    varied: String,
    known: Option<Known>,
}

/// The corpus for one tool: its valid base, then every variation.
fn corpus(tool: &str, schema: &Value) -> Vec<Case> {
    const HOLE: &str = "__trails_candidate_hole__";
    let base = sample(schema);
    let mut cases =
        vec![Case { tool: tool.to_owned(), text: base.to_string(), varied: "(the valid base)".into(), known: None }];
    let (mut all, mut objects) = (Vec::new(), Vec::new());
    positions(schema, &[], &mut all, &mut objects);
    for position in &all {
        let at = pointer(&position.path);
        for candidate in candidates(position.schema) {
            let mut instance = base.clone();
            *instance.pointer_mut(&at).expect("the base holds every property") = json!(HOLE);
            let text = instance.to_string().replace(&format!("\"{HOLE}\""), &candidate);
            assert!(!text.contains(HOLE), "the candidate replaced the hole");
            let known = if candidate == "null" && !position.required {
                Some(Known::NullAsAbsent)
            } else if position.schema["format"] == "date-time" {
                Some(Known::DateTimeFormat)
            } else if position.schema["format"] == "iri" {
                Some(Known::IriFormat)
            } else if position.schema["type"] == "integer"
                && candidate.contains(['.', 'e', 'E'])
                && candidate.parse::<f64>() == Ok(-9_223_372_036_854_775_808.0)
            {
                Some(Known::FloatAtI64Min)
            } else if position.schema["type"] == "integer"
                && candidate.parse::<f64>().is_ok_and(|n| n.abs() >= 9_007_199_254_740_992.0)
            {
                Some(Known::JsDoublePrecision)
            } else {
                None
            };
            cases.push(Case { tool: tool.to_owned(), text, varied: format!("{at} = {candidate}"), known });
        }
        let (parent, name) = position.path.split_at(position.path.len() - 1);
        let mut absent = base.clone();
        // A list item cannot be absent (the list's own lengths are among its candidates).
        let Some(object) = absent.pointer_mut(&pointer(parent)).and_then(Value::as_object_mut) else { continue };
        object.remove(&name[0]);
        cases.push(Case {
            tool: tool.to_owned(),
            text: absent.to_string(),
            varied: format!("{at} absent"),
            known: None,
        });
    }
    for object in &objects {
        let mut unknown = base.clone();
        unknown.pointer_mut(&pointer(object)).unwrap()["zz_unknown"] = json!(1);
        cases.push(Case {
            tool: tool.to_owned(),
            text: unknown.to_string(),
            varied: format!("{}/zz_unknown = 1", pointer(object)),
            known: None,
        });
    }
    cases
}

/// The verdicts (Trails, Ajv, Python) on the `date-time` values where they are known to differ.
/// Every other date-time value must get one verdict from all three.
fn date_time_verdicts(value: &str) -> Option<(bool, bool, bool)> {
    match value {
        // RFC 3339 §5.6 lets applications separate date and time by a space; `rfc3339-validator`
        // does not.
        "2026-01-31 12:00:00Z" => Some((true, true, false)),
        // A leap second: RFC 3339 allows `:60`; `rfc3339-validator` refuses it.
        "2026-12-31T23:59:60Z" => Some((true, true, false)),
        _ => None,
    }
}

/// The venv's python, with the pinned `jsonschema`, `regress` and `rfc3339-validator`.
fn venv_python() -> PathBuf {
    trails_tests::servers::python().unwrap_or_else(|error| panic!("{error}")).join("bin/python")
}

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/validators")
}

/// `~/.cache/trails-node/validators` (under `TRAILS_NODE_DIR` when set) with Ajv installed.
fn ajv_dir() -> PathBuf {
    let node = std::env::var_os("TRAILS_NODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(&std::env::var_os("HOME").expect("HOME is set")).join(".cache/trails-node"));
    let dir = node.join("validators");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(scripts().join("package.json")).unwrap()).unwrap();
    let installed = manifest["dependencies"].as_object().unwrap().iter().all(|(name, version)| {
        std::fs::read_to_string(dir.join("node_modules").join(name).join("package.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|m| m["version"] == *version)
    });
    if !installed {
        std::fs::copy(scripts().join("package.json"), dir.join("package.json")).unwrap();
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .status()
            .expect("npm is installed");
        assert!(status.success(), "npm install in {} failed", dir.display());
    }
    std::fs::copy(scripts().join("ajv_check.mjs"), dir.join("ajv_check.mjs")).unwrap();
    dir
}

fn verdicts(command: &mut Command) -> Vec<bool> {
    let output = command.stderr(Stdio::inherit()).output().expect("the checker runs");
    assert!(output.status.success(), "{command:?} failed");
    serde_json::from_slice(&output.stdout).expect("a JSON array of booleans")
}

#[test]
fn the_validator_decides_every_case_as_ajv_and_python_jsonschema_do() {
    trails_tests::link();
    let registry = Registry::collect().unwrap();
    let mut schemas = Map::new();
    let mut cases = Vec::new();
    for tool in registry.tools() {
        let descriptor: Value = serde_json::from_str(tool.descriptor()).unwrap();
        let schema = descriptor["inputSchema"].clone();
        cases.extend(corpus(tool.name(), &schema));
        schemas.insert(tool.name().to_owned(), schema);
    }
    assert!(cases.len() > 2000, "{} cases", cases.len());
    let input = json!({
        "schemas": schemas,
        "cases": cases.iter().map(|c| json!([c.tool, c.text])).collect::<Vec<_>>(),
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.json");
    std::fs::write(&file, input.to_string()).unwrap();

    let ajv = verdicts(Command::new("node").arg(ajv_dir().join("ajv_check.mjs")).arg(&file));
    let python = verdicts(Command::new(venv_python()).arg(scripts().join("jsonschema_check.py")).arg(&file));
    assert_eq!((ajv.len(), python.len()), (cases.len(), cases.len()));

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let ctx = Ctx::local().with_kg(trails::kg::Kg::temporary().unwrap());
    let mut unexplained = Vec::new();
    let mut known = std::collections::BTreeMap::<String, usize>::new();
    for (i, case) in cases.iter().enumerate() {
        let value: Value = serde_json::from_str(&case.text).unwrap();
        let trails = match registry.check(&case.tool, &value) {
            Ok(()) => true,
            Err(Error::Validation { .. }) => false,
            Err(other) => panic!("{} {}: {other:?}", case.tool, case.varied),
        };
        // What the validator accepts, the handler's types read (an integer sent as `1.0` too):
        // every tool but the one that fails on purpose is called with every accepted case.
        if trails && case.tool != "fixtures_fail" {
            let answer = runtime.block_on(registry.call(&case.tool, ctx.clone(), value.clone()));
            if let Err(Error::Internal(detail)) = &answer {
                assert!(!detail.contains("did not deserialise"), "{} {}: {detail}", case.tool, case.varied);
            }
            if case.tool == "fixtures_constraints" {
                assert!(answer.is_ok(), "accepted but refused: {} ({answer:?})", case.varied);
            }
        }
        if i == 0 || case.varied == "(the valid base)" {
            assert!(trails && ajv[i] && python[i], "{}: the base must be valid everywhere: {}", case.tool, case.text);
        }
        let verdicts = (trails, ajv[i], python[i]);
        if verdicts.0 == verdicts.1 && verdicts.1 == verdicts.2 {
            continue;
        }
        let explained = match case.known {
            Some(Known::NullAsAbsent) => verdicts == (true, false, false),
            Some(Known::JsDoublePrecision) => verdicts.0 == verdicts.2,
            Some(Known::FloatAtI64Min) => verdicts == (false, true, true),
            Some(Known::DateTimeFormat) => {
                let value = value.pointer(case.varied.split(" = ").next().unwrap()).and_then(Value::as_str);
                value.and_then(date_time_verdicts) == Some(verdicts)
            }
            Some(Known::IriFormat) => verdicts == (false, true, true),
            None => false,
        };
        if explained {
            *known.entry(format!("{:?}", case.known.unwrap())).or_default() += 1;
        } else {
            unexplained.push(format!(
                "{} {} → trails {}, ajv {}, python {}",
                case.tool, case.varied, verdicts.0, verdicts.1, verdicts.2
            ));
        }
    }
    println!("{} cases; listed differences: {known:?}", cases.len());
    assert!(unexplained.is_empty(), "{} unexplained disagreements:\n{}", unexplained.len(), unexplained.join("\n"));
}

/// The three findings of the probe, by name: `REQ-١٢` broke its own schema, `1.0` was "not an
/// integer", `2^64` was a `type` error.
#[test]
fn the_probes_findings_get_the_answers_the_schema_gives() {
    trails_tests::link();
    let registry = Registry::collect().unwrap();
    let base = json!({"handle": "abc", "code": "REQ-12", "status": "proposed", "priority": 1, "tags": ["a"]});
    let with = |key: &str, value: Value| {
        let mut arguments = base.clone();
        arguments[key] = value;
        arguments
    };
    let code_of = |arguments: Value| match registry.check("fixtures_constraints", &arguments) {
        Ok(()) => None,
        Err(Error::Validation { errors, .. }) => Some(errors[0].code),
        Err(other) => panic!("{other:?}"),
    };
    assert_eq!(code_of(with("code", json!("REQ-١٢"))), Some(trails::error::FieldCode::Pattern));
    assert_eq!(code_of(with("code", json!("REQ-１２"))), Some(trails::error::FieldCode::Pattern));
    let two_to_the_64: Value = serde_json::from_str("18446744073709551616").unwrap();
    assert_eq!(code_of(with("retries", two_to_the_64)), Some(trails::error::FieldCode::MaxValue));
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    for (key, text, expected) in
        [("priority", "1.0", 1), ("priority", "2e0", 2), ("retries", "-0", 0), ("retries", "-0.0", 0)]
    {
        let arguments = with(key, serde_json::from_str(text).unwrap());
        let output = runtime.block_on(registry.call("fixtures_constraints", Ctx::local(), arguments)).unwrap();
        assert_eq!(
            output.structured.unwrap()[key],
            json!(expected),
            "{key} = {text} reaches the handler as an integer"
        );
    }
}
