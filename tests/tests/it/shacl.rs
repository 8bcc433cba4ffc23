//! The SHACL projection: every shape and node type as an `sh:NodeShape` the macros
//! emitted. Checked with pyshacl, an independent SHACL engine: the shapes are valid SHACL (the
//! SHACL-SHACL meta-shapes), what the store writes conforms to them (and stops conforming when
//! a required value goes), and over the fixture constraint matrix SHACL reports a violation on
//! exactly the fields the Trails validator rejects. Served over HTTP at `/shapes.ttl` and
//! `/shapes/{name}`, in the syntax the client asks for.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use trails::kg::Kg;
use trails::registry::Registry;
use trails::{Blob, Error, Ref};
use trails_tests::{Attachment, CrashEntry, Note};

fn python() -> PathBuf {
    trails_tests::servers::python().unwrap_or_else(|error| panic!("{error}")).join("bin/python")
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/shacl_check.py")
}

/// Run the checker in `mode` with `files`; its JSON answer.
fn check(mode: &str, files: &[&Path]) -> Value {
    let output = Command::new(python()).arg(script()).arg(mode).args(files).stderr(Stdio::inherit()).output().unwrap();
    assert!(output.status.success(), "shacl_check.py {mode} failed: {}", String::from_utf8_lossy(&output.stdout));
    serde_json::from_slice(&output.stdout).expect("one JSON answer")
}

fn registry() -> Registry {
    trails_tests::link();
    Registry::collect().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_shape_is_valid_shacl() {
    let registry = registry();
    let dir = tempfile::tempdir().unwrap();
    let shapes = write(dir.path(), "shapes.ttl", &registry.shacl());
    let answer = check("meta", &[&shapes]);
    assert_eq!(answer["conforms"], true, "{}", answer["report"].as_str().unwrap_or_default());
    // Every declared shape is in the graph, as a NodeShape of its own IRI.
    for shape in registry.shapes() {
        assert!(shape.shacl().contains(&format!("<{}> a sh:NodeShape", shape.iri())), "{}", shape.name());
    }
    // The check can fail: a property shape with two `sh:path`s is not valid SHACL.
    let broken = registry.shacl().replacen("sh:path <", "sh:path <urn:x:twice>, <", 1);
    let answer = check("meta", &[&write(dir.path(), "broken.ttl", &broken)]);
    assert_eq!(answer["conforms"], false, "the meta-shapes catch a broken shape");
}

/// Every triple the store holds in the graphs of its node types, as N-Triples.
async fn dump(kg: &Kg) -> String {
    let rows = kg
        .sparql(
            "SELECT ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } FILTER(STRSTARTS(STR(?g), CONCAT(?base, \"/graph/\"))) }",
            &[("base", oxigraph_literal(kg.base()))],
        )
        .await
        .unwrap();
    let term = |row: &trails::kg::Row, name: &str| {
        row.iter().find(|(variable, _)| variable == name).map(|(_, term)| term.to_string()).unwrap()
    };
    rows.iter().map(|row| format!("{} {} {} .\n", term(row, "s"), term(row, "p"), term(row, "o"))).collect()
}

fn oxigraph_literal(text: &str) -> trails::kg::Term {
    trails::kg::Term::Literal(trails::kg::Literal::new_simple_literal(text))
}

#[test]
fn what_the_store_writes_conforms_to_the_shapes() {
    let registry = registry();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let kg = Kg::temporary().unwrap();
    let data = runtime.block_on(async {
        let ada = requirements::model::Person { name: "Ada".into(), email: "ada@example.org".into() };
        let owner = Ref::new(kg.create(ada).await.unwrap().iri);
        kg.create(requirements::model::Requirement {
            req_id: "REQ-1".into(),
            title: "Sign in".into(),
            status: "proposed".into(),
            priority: 2,
            tags: vec!["auth".into(), "web".into()],
            owner: Some(owner),
            due: Some("2026-12-01T09:00:00Z".parse().unwrap()),
            attachments: Some(vec![Blob::new("text/plain", b"spec".to_vec()).unwrap()]),
        })
        .await
        .unwrap();
        kg.create(trails_tests::Person { name: "Grace".into(), email: "grace@example.org".into() }).await.unwrap();
        kg.create(Note { slug: "n-1".into(), body: "a note".into() }).await.unwrap();
        let png = Blob::new("image/png", vec![0x89, b'P', b'N', b'G']).unwrap();
        kg.create(Attachment { name: "a-1".into(), file: png.clone(), previews: vec![png] }).await.unwrap();
        kg.create(CrashEntry::new(7)).await.unwrap();
        dump(&kg).await
    });
    assert!(data.contains("REQ-1") && data.contains("Grace") && data.contains("a-1"), "{data}");
    let dir = tempfile::tempdir().unwrap();
    let shapes = write(dir.path(), "shapes.ttl", &registry.shacl());
    let answer = check("conform", &[&shapes, &write(dir.path(), "data.nt", &data)]);
    assert_eq!(answer["conforms"], true, "{}", answer["results"]);

    // Without its required title, the requirement no longer conforms, and SHACL says where.
    let without_title: String = data.lines().filter(|l| !l.contains("req#title")).map(|l| format!("{l}\n")).collect();
    let answer = check("conform", &[&shapes, &write(dir.path(), "broken.nt", &without_title)]);
    assert_eq!(answer["conforms"], false);
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["path"], "https://example.org/req#title");
    assert_eq!(results[0]["component"], "http://www.w3.org/ns/shacl#MinCountConstraintComponent");
}

/// The top-level fields the Trails validator rejects in `case`.
fn rejected_by_trails(registry: &Registry, case: &Value) -> Vec<String> {
    match registry.check("fixtures_constraints", case) {
        Ok(()) => Vec::new(),
        Err(Error::Validation { errors, .. }) => {
            let mut fields: Vec<String> =
                errors.iter().map(|e| e.field.split('/').next().unwrap_or_default().to_owned()).collect();
            fields.sort();
            fields.dedup();
            fields
        }
        Err(other) => panic!("{other:?}"),
    }
}

#[test]
fn shacl_reports_violations_exactly_where_the_validator_rejects() {
    let registry = registry();
    let base = json!({ "handle": "abc", "code": "REQ-12", "status": "proposed", "priority": 1, "tags": ["a"] });
    let with = |changes: Value| {
        let mut case = base.clone();
        for (key, value) in changes.as_object().unwrap() {
            match value {
                Value::String(s) if s == "__absent__" => {
                    case.as_object_mut().unwrap().remove(key);
                }
                _ => case[key] = value.clone(),
            }
        }
        case
    };
    // The fixture constraint matrix: each declared constraint at, inside and past its bounds,
    // wrong types, absence, and several faults at once.
    let agreeing = vec![
        with(json!({})),
        with(json!({ "handle": "ab" })),
        with(json!({ "handle": "abcdefghijklmnopq" })),
        with(json!({ "handle": "abcdefghijklmnop" })),
        with(json!({ "handle": "😀😀😀" })),
        with(json!({ "handle": "__absent__" })),
        with(json!({ "handle": 7 })),
        with(json!({ "code": "REQ-x" })),
        with(json!({ "code": "REQ-١٢" })),
        with(json!({ "code": "REQ-１２" })),
        with(json!({ "code": "req-12" })),
        with(json!({ "code": "__absent__" })),
        with(json!({ "status": "PROPOSED" })),
        with(json!({ "status": "rejected" })),
        with(json!({ "tier": 4 })),
        with(json!({ "tier": 2 })),
        with(json!({ "tier": "2" })),
        with(json!({ "tier": null })),
        with(json!({ "priority": 0 })),
        with(json!({ "priority": 5 })),
        with(json!({ "priority": 6 })),
        with(json!({ "priority": "1" })),
        with(json!({ "priority": 1.5 })),
        with(json!({ "priority": 2.0 })),
        with(json!({ "confidence": 1.5 })),
        with(json!({ "confidence": -0.1 })),
        with(json!({ "confidence": 0.5 })),
        with(json!({ "confidence": 1 })),
        with(json!({ "tags": [] })),
        with(json!({ "tags": ["a", "b", "c"] })),
        with(json!({ "tags": ["a", "b", "c", "d"] })),
        with(json!({ "tags": ["abcdefghijklmnopqrstu"] })),
        with(json!({ "tags": ["abcdefghijklmnopqrst"] })),
        with(json!({ "retries": 255 })),
        with(json!({ "retries": 256 })),
        with(json!({ "retries": -1 })),
        with(json!({ "urgent": true })),
        with(json!({ "urgent": "yes" })),
        with(json!({ "due": "2026-01-31T12:00:00Z" })),
        with(json!({ "due": "2026-01-31T12:00:00+01:00" })),
        with(json!({ "due": "not a date" })),
        with(json!({ "due": "2026-02-30T12:00:00Z" })),
        with(json!({ "handle": "a", "priority": 9, "status": "x", "tags": [] })),
    ];
    // Where they cannot agree, and why: each must still differ exactly this way.
    let differing: Vec<(Value, &str, &str)> = vec![
        (
            with(json!({ "address": { "city": "X", "country": "fr" } })),
            "address",
            "a nested shape is one rdf:JSON literal in the graph: SHACL Core cannot look inside it",
        ),
        (
            with(json!({ "code": "REQ-12\n" })),
            "code",
            "pyshacl runs sh:pattern with Python's `re.search`, whose `$` also matches before a final \
             newline (XPath's and ECMA-262's do not)",
        ),
        (
            with(json!({ "zz_unknown": 1 })),
            "zz_unknown",
            "SHACL shapes are open (no sh:closed: a node type's instances also carry a subtype's \
             predicates); the store never writes a field the type does not declare",
        ),
    ];
    let all: Vec<Value> = agreeing.iter().chain(differing.iter().map(|(case, _, _)| case)).cloned().collect();
    let dir = tempfile::tempdir().unwrap();
    let shapes = write(dir.path(), "shapes.ttl", &registry.shacl());
    let spec = json!({ "shape": "https://example.org/fixtures#Constraints", "cases": all });
    let cases = write(dir.path(), "cases.json", &spec.to_string());
    let shacl: Vec<Vec<String>> = serde_json::from_value(check("cases", &[&shapes, &cases])).unwrap();
    assert_eq!(shacl.len(), all.len());
    let mut disagreements = Vec::new();
    let mut rejected_somewhere = 0;
    for (case, reported) in agreeing.iter().zip(&shacl) {
        let trails = rejected_by_trails(&registry, case);
        rejected_somewhere += usize::from(!trails.is_empty());
        if &trails != reported {
            disagreements.push(format!("{case}: trails {trails:?}, shacl {reported:?}"));
        }
    }
    assert!(disagreements.is_empty(), "SHACL and the validator disagree:\n{}", disagreements.join("\n"));
    assert!(rejected_somewhere >= 25, "the matrix exercises the constraints ({rejected_somewhere} rejections)");
    for ((case, field, why), reported) in differing.iter().zip(&shacl[agreeing.len()..]) {
        let trails = rejected_by_trails(&registry, case);
        assert!(
            trails == vec![field.to_string()] && reported.is_empty(),
            "{case}: expected trails [{field}] and SHACL nothing ({why}); got trails {trails:?}, shacl {reported:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shapes_are_served_in_the_syntax_the_client_asks_for() {
    let registry = registry();
    let server = crate::fixture().http();
    let get = |path: &str, accept: Option<&str>| {
        let mut request = reqwest::Client::new().get(format!("http://{}{path}", server.addr));
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        request.send()
    };
    let response = get("/shapes.ttl", None).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/turtle");
    let graph = response.text().await.unwrap();
    // Every shape a runtime tool is made of, or no tool is (those of builder and dev tools are
    // theirs: the next test).
    let tools: Vec<_> = registry.tools().collect();
    let public = |iri: &str| {
        let users: Vec<_> = tools.iter().filter(|tool| tool.shapes().any(|used| used == iri)).collect();
        users.is_empty() || users.iter().any(|tool| tool.scope() == trails::auth::Scope::Runtime)
    };
    for shape in registry.shapes().filter(|shape| public(shape.iri())) {
        assert!(graph.contains(&format!("<{}> a sh:NodeShape", shape.iri())), "{}", shape.name());
    }
    // A capability's parameters are part of its contract: an anonymous caller sees those of the
    // runtime capabilities, not those of `trails.meta.tools.enable` (builder).
    assert!(graph.contains("<urn:trails:capability:trails.kg.get#input> a sh:NodeShape"));
    let hidden = "urn:trails:capability:trails.meta.tools.enable#input";
    assert!(registry.shacl().contains(hidden) && !graph.contains(hidden), "{graph}");
    let encoded: String = hidden.bytes().map(|b| format!("%{b:02X}")).collect();
    assert_eq!(get(&format!("/shapes/{encoded}"), None).await.unwrap().status(), 404);

    // By Rust name (two `Person`s: the fixture's reviewer and the example's), and by IRI.
    let people = get("/shapes/Person", None).await.unwrap().text().await.unwrap();
    assert!(people.contains("<https://example.org/people#Reviewer> a sh:NodeShape"), "{people}");
    assert!(people.contains("<https://example.org/req#Person> a sh:NodeShape"), "{people}");
    let iri = "https%3A%2F%2Fexample.org%2Freq%23Requirement";
    let requirement = get(&format!("/shapes/{iri}"), None).await.unwrap().text().await.unwrap();
    assert!(requirement.contains("sh:targetClass <https://example.org/req#Requirement>"), "{requirement}");
    assert!(!requirement.contains("#Person> a sh:NodeShape"), "only the one shape");

    for (accept, media_type) in [
        ("application/n-triples", "application/n-triples"),
        ("application/ld+json", "application/ld+json"),
        ("application/rdf+xml;q=0.9, text/html", "application/rdf+xml"),
        ("text/*", "text/turtle"),
    ] {
        let response = get("/shapes/Requirement", Some(accept)).await.unwrap();
        assert_eq!(response.status(), 200, "{accept}");
        assert_eq!(response.headers()["content-type"], media_type, "{accept}");
        let body = response.text().await.unwrap();
        assert!(body.contains("https://example.org/req#Requirement") && body.contains("shacl"), "{accept}: {body}");
    }
    let response = get("/shapes/Requirement", Some("application/json")).await.unwrap();
    assert_eq!(response.status(), 406);
    let body: Value = response.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("text/turtle"), "{body}");
    let response = get("/shapes/NoSuchShape", None).await.unwrap();
    assert_eq!(response.status(), 404);
}

/// A shape is part of the contracts of the tools made of it: a caller who sees none of them is not
/// shown it — on `/shapes.ttl`, `/shapes/{name}` and `trails://schema` — as `tools/list` does not
/// show the tools. The scaffolders' (`trails_meta_gen_*`, dev scope) are made of `ShapeSpec`,
/// which nests `FieldSpec`; a node type no tool returns is everyone's.
#[tokio::test(flavor = "multi_thread")]
async fn the_shapes_of_tools_a_caller_cannot_see_are_not_shown_to_it() {
    const DEV: &str = "shapes-dev-token";
    let config = format!(
        "[mcp]\nscopes = [\"dev\"]\n\n[http]\nsessions = false\n\n[[http.tokens]]\nname = \"dev\"\nsha256 = \"{}\"\nscopes = [\"dev\"]\n",
        trails::auth::sha256_hex(DEV)
    );
    let server = crate::fixture().config(config).http();
    let get = |path: &str, token: Option<&str>| {
        let mut request = reqwest::Client::new().get(format!("http://{}{path}", server.addr));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    let scaffolded = ["https://w3id.org/trails/meta#ShapeSpec", "https://w3id.org/trails/meta#FieldSpec"];
    let (_, anonymous) = get("/shapes.ttl", None).await;
    let (_, dev) = get("/shapes.ttl", Some(DEV)).await;
    for iri in scaffolded {
        let declared = format!("<{iri}> a sh:NodeShape");
        assert!(!anonymous.contains(&declared) && dev.contains(&declared), "{iri}");
    }
    assert!(anonymous.contains("<https://example.org/req#Requirement> a sh:NodeShape"));
    assert_eq!(get("/shapes/ShapeSpec", None).await.0, 404);
    assert_eq!(get("/shapes/FieldSpec", None).await.0, 404, "nested in a hidden tool's input");
    assert_eq!(get("/shapes/https%3A%2F%2Fw3id.org%2Ftrails%2Fmeta%23ShapeSpec", None).await.0, 404);
    assert_eq!(get("/shapes/ShapeSpec", Some(DEV)).await.0, 200);

    let schema = |token: Option<&'static str>| {
        let body =
            json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": { "uri": "trails://schema" } });
        let addr = server.addr;
        async move {
            let read = trails_tests::client::post(addr, token, &body).await;
            let text = read["result"]["contents"][0]["text"].as_str().unwrap().to_owned();
            let schema: Value = serde_json::from_str(&text).unwrap();
            schema["shapes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let (anonymous, dev) = (schema(None).await, schema(Some(DEV)).await);
    assert!(anonymous.contains(&"Requirement".to_owned()), "{anonymous:?}");
    for name in ["ShapeSpec", "FieldSpec"] {
        assert!(!anonymous.contains(&name.to_owned()) && dev.contains(&name.to_owned()), "{name}: {anonymous:?}");
    }
}
