//! The capability manifest (`GET /.well-known/capabilities`): expanded by a real
//! JSON-LD processor (PyLD), it keeps every term of every descriptor; each descriptor has the 14
//! canonical fields in canonical order; and every shape IRI it names that this app declares
//! resolves to its SHACL at `/shapes/{iri}`.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use trails::registry::Registry;

/// The fields every descriptor has, in their order: the names the macros write them under.
fn canonical() -> [&'static str; 15] {
    trails_pattern::CanonicalField::ALL.map(trails_pattern::CanonicalField::name)
}

fn expand_and_report_dropped_terms(document: &str) -> Value {
    let python = trails_tests::servers::python().unwrap_or_else(|error| panic!("{error}")).join("bin/python");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("manifest.jsonld");
    std::fs::write(&file, document).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/jsonld_check.py");
    let output = Command::new(python).arg(script).arg(&file).stderr(Stdio::inherit()).output().unwrap();
    assert!(output.status.success(), "jsonld_check.py failed");
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn json_ld_expansion_drops_no_term_and_the_fields_keep_their_order() {
    trails_tests::link();
    let registry = Registry::collect().unwrap();
    let manifest = registry.manifest();
    let report = expand_and_report_dropped_terms(&manifest);
    assert_eq!(report["nodes"], registry.tools().count(), "every capability is a node: {report}");
    assert_eq!(report["dropped"], serde_json::json!([]), "terms expansion dropped: {report}");

    let document: Value = serde_json::from_str(&manifest).unwrap();
    let (mut with_roles, mut confirmed, mut tasks) = (0, 0, 0);
    for descriptor in document["@graph"].as_array().unwrap() {
        let mut keys: Vec<&str> = descriptor.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys[..2], ["@id", "@type"]);
        // A capability returning a node type with display roles says so right after its output.
        if let Some(at) = keys.iter().position(|key| *key == "display_roles") {
            assert_eq!(keys[at - 1], "output_shape", "{}", descriptor["id"]);
            assert!(descriptor["display_roles"].as_object().is_some_and(|roles| !roles.is_empty()));
            keys.remove(at);
            with_roles += 1;
        }
        // A capability declared `task` says so last; one declared with `confirm` before that.
        if keys.last() == Some(&trails_pattern::CanonicalField::Task.name()) {
            assert!(["optional", "required"].contains(&descriptor["task"].as_str().unwrap()), "{descriptor}");
            keys.pop();
            tasks += 1;
        }
        if keys.last() == Some(&trails_pattern::CanonicalField::Confirm.name()) {
            assert!(descriptor["confirm"].as_str().is_some_and(|question| !question.is_empty()));
            keys.pop();
            confirmed += 1;
        }
        assert_eq!(keys[2..], canonical(), "{}", descriptor["id"]);
    }
    assert!(with_roles > 0, "the example's requirements have roles");
    assert!(confirmed > 0, "the example's `requirements.delete` asks first");
    assert!(tasks > 0, "the example's `requirements.revalidate` may run as a task");

    // The check can fail: under a context that defines one term, expansion drops the others.
    let mut narrow = document.clone();
    narrow["@context"] = serde_json::json!({ "id": "https://w3id.org/trails/capability#id" });
    let report = expand_and_report_dropped_terms(&narrow.to_string());
    let dropped = report["dropped"].as_array().unwrap();
    assert!(dropped.iter().any(|d| d.as_str().unwrap().ends_with(": side_effects")), "{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shape_iris_of_the_manifest_resolve_to_their_shacl() {
    trails_tests::link();
    let registry = Registry::collect().unwrap();
    let declared: Vec<&str> = registry.shapes().map(|s| s.iri()).collect();
    // A dev caller sees every capability, so every parameter shape.
    let token = "manifest-dev-token";
    let server = crate::fixture()
        .config(format!(
            "[mcp]\nscopes = [\"dev\"]\n\n[[http.tokens]]\nname = \"dev\"\nsha256 = \"{}\"\nscopes = [\"dev\"]\n",
            trails::auth::sha256_hex(token)
        ))
        .http();
    let addr = server.addr;
    let client = reqwest::Client::new();
    let manifest: Value = client
        .get(format!("http://{addr}/.well-known/capabilities"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut resolved = 0;
    for descriptor in manifest["@graph"].as_array().unwrap() {
        for key in ["input_shape", "output_shape"] {
            let Some(iri) = descriptor[key].as_str() else { continue };
            // A shape this app declares, or the capability's own parameters (`…#input`).
            if !declared.contains(&iri) && !iri.starts_with("urn:trails:capability:") {
                continue;
            }
            let encoded: String = iri.bytes().map(|b| format!("%{b:02X}")).collect();
            let response =
                client.get(format!("http://{addr}/shapes/{encoded}")).bearer_auth(token).send().await.unwrap();
            assert_eq!(response.status(), 200, "{} {key} {iri}", descriptor["id"]);
            let turtle = response.text().await.unwrap();
            assert!(turtle.contains(&format!("<{iri}> a sh:NodeShape")), "{iri}: {turtle}");
            resolved += 1;
        }
    }
    assert!(resolved >= 20, "{resolved} shape IRIs resolved");
}
