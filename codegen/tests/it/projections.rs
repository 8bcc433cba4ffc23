//! IR → projections, snapshotted with `insta`. Review changes with `cargo insta review` (or
//! `INSTA_UPDATE=always cargo test -p trails-codegen` and read the diff).

use quote::quote;
use serde_json::Value;
use trails_codegen::capability::Kind as CapKind;
use trails_codegen::preview;
use trails_codegen::shape::Kind;

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap()
}

#[test]
fn shape_with_the_full_constraint_matrix() {
    let schema = preview::shape_schema(
        Kind::Shape,
        quote!(iri = "https://example.org/s#Matrix"),
        r#"
        /// Every mapped keyword.
        pub struct Matrix {
            /// A bounded string.
            #[predicate(min_length = 1, max_length = 200)]
            pub query: String,
            #[predicate(pattern = r"^REQ-\d+$")]
            pub code: String,
            #[predicate(one_of = ["asc", "desc"])]
            pub order: Option<String>,
            #[predicate(min_value = 1, max_value = 100)]
            pub limit: Option<u32>,
            #[predicate(min_value = -1.5, max_value = 1.5, one_of = [0, 1.5])]
            pub weight: f64,
            #[predicate(many, min_count = 1, max_count = 10, max_length = 8)]
            pub tags: Vec<String>,
            pub owner: Option<Ref<Person>>,
            pub when: trails::DateTime,
            pub nested: Address,
            pub tiny: u8,
            pub big: i64,
        }"#,
    )
    .unwrap();
    insta::assert_snapshot!(pretty(&schema));
}

#[test]
fn node_type_as_a_shacl_node_shape() {
    let turtle = preview::shape_shacl(
        Kind::NodeType,
        quote!(label = "Requirement", iri = "https://example.org/req#Requirement", unique = ["code"]),
        r#"
        /// A requirement.
        pub struct Requirement {
            /// "Quoted" and \ escaped.
            #[predicate(pattern = r"^REQ-\d+$", max_length = 16)]
            pub code: String,
            #[predicate(iri = "https://example.org/terms#state", one_of = ["open", "done"])]
            pub status: String,
            #[predicate(one_of = [1, 2])]
            pub tier: Option<u8>,
            #[predicate(min_value = 0.0, max_value = 1.0)]
            pub weight: f64,
            #[predicate(many, min_count = 1, max_count = 3)]
            pub tags: Vec<String>,
            pub notes: Vec<String>,
            pub done: Option<bool>,
            pub due: Option<trails::DateTime>,
            pub owner: Option<Ref<Person>>,
            pub address: Address,
        }"#,
    )
    .unwrap();
    insta::assert_snapshot!(turtle);
}

#[test]
fn unit_enum_shape_is_a_string_enum_renamed_like_serde() {
    let schema = preview::shape_schema(
        Kind::Shape,
        quote!(rename_all = "snake_case"),
        "/// Priority.\nenum Priority { Low, HighPriority }",
    )
    .unwrap();
    assert_eq!(
        schema,
        serde_json::json!({"description": "Priority.", "type": "string", "enum": ["low", "high_priority"]})
    );
}

#[test]
fn node_type_states_compound_uniqueness_in_its_description() {
    let schema = preview::shape_schema(
        Kind::NodeType,
        quote!(label = "Requirement", iri = "https://example.org/req#Requirement", unique = ["project", "number"]),
        "/// A requirement.\npub struct Requirement { pub project: String, pub number: u32 }",
    )
    .unwrap();
    assert_eq!(schema["description"], "A requirement.\n\nUnique together: project, number.");
}

#[test]
fn runtime_capability_descriptor_and_canonical_form() {
    let (descriptor, canonical) = preview::capability(
        CapKind::Runtime,
        quote!(
            id = "requirements.search",
            version = "1.2.0",
            side_effects(none),
            idempotent,
            cost(tokens = 40, latency_p50_ms = 3)
        ),
        r#"
        /// Search requirements.
        async fn search(ctx: &Ctx, input: SearchInput) -> trails::Result<Vec<Requirement>> { todo!() }
        "#,
    )
    .unwrap();
    insta::assert_snapshot!("runtime_descriptor", pretty(&descriptor));
    insta::assert_snapshot!("runtime_canonical", pretty(&canonical));
}

#[test]
fn meta_capability_with_named_parameters() {
    let (descriptor, _) = preview::capability(
        CapKind::Meta,
        quote!(namespace = "gen", op = "shape", scope = "dev", version = "0.1.0", side_effects(writes = [SourceFile])),
        r#"
        /// Scaffold a #[shape] skeleton; returns a FileDiff.
        async fn gen_shape(
            ctx: &Ctx,
            /// Rust name of the new shape.
            #[predicate(pattern = "^[A-Z][A-Za-z0-9]*$")] name: String,
            #[predicate(max_count = 50)] fields: Option<Vec<String>>,
        ) -> trails::Result<FileDiff> { todo!() }
        "#,
    )
    .unwrap();
    insta::assert_snapshot!(pretty(&descriptor));
}

#[test]
fn canonical_descriptor_has_the_fourteen_fields_in_canonical_order() {
    let (_, canonical) = preview::capability(
        CapKind::Runtime,
        quote!(id = "a.b", version = "1.0.0"),
        "/// Doc.\nasync fn f() -> trails::Result<()> { Ok(()) }",
    )
    .unwrap();
    let keys: Vec<&str> = canonical.as_object().unwrap().keys().map(String::as_str).collect();
    let fields = trails_pattern::CanonicalField::ALL.map(trails_pattern::CanonicalField::name);
    assert_eq!(keys[..2], ["@id", "@type"]);
    assert_eq!(keys[2..], fields);
}

#[test]
fn undeclared_side_effects_get_conservative_explicit_annotations() {
    let (descriptor, _) = preview::capability(
        CapKind::Runtime,
        quote!(id = "a.b"),
        "/// Doc.\nasync fn f() -> trails::Result<()> { Ok(()) }",
    )
    .unwrap();
    assert_eq!(
        descriptor["annotations"],
        serde_json::json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true})
    );
}

#[test]
fn every_fault_in_one_item_is_reported() {
    let errors = preview::errors(
        "shape",
        quote!(irri = "x"),
        r#"struct S {
            #[predicate(min_length = 5, max_length = 2)] a: String,
            #[predicate(pattern = "(?=x)")] b: String,
            #[predicate(min_length = 1)] c: i64,
            #[predicate(one_of = [1])] d: String,
        }"#,
    );
    assert_eq!(errors.len(), 5, "{errors:#?}");
    assert!(errors[0].contains("did you mean `iri`"));
}

#[test]
fn meta_op_with_underscore_names_a_valid_alternative() {
    let errors = preview::errors(
        "meta_capability",
        quote!(namespace = "gen", op = "make_shape"),
        "/// D.\nasync fn f() -> R { }",
    );
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("lowercase letters and digits only"), "{}", errors[0]);
}

#[test]
fn extends_merges_the_parents_properties_and_required_names_first() {
    let schema = preview::shape_schema(
        Kind::Shape,
        quote!(extends = Base),
        r#"struct Child {
            pub base: Base,
            #[predicate(min_length = 1)]
            pub query: String,
            pub limit: Option<u32>,
        }"#,
    )
    .unwrap();
    // The preview renders the parent's (compile-time) members as placeholders.
    assert_eq!(
        schema,
        serde_json::json!({
            "type": "object",
            "properties": {
                "$extends": "Base",
                "query": {"type": "string", "minLength": 1},
                "limit": {"type": "integer", "minimum": 0, "maximum": 4294967295u64}
            },
            "required": ["$required_of:Base", "query"],
            "additionalProperties": false
        })
    );
}

#[test]
fn extends_names_a_type_and_needs_a_field_to_hold_it() {
    let errors = preview::errors("shape", quote!(extends = Base), "struct Child { query: String }");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].contains("needs a field of type `Base`"), "{}", errors[0]);
    let errors = preview::errors("shape", quote!(extends = "https://example.org/Base"), "struct C { q: String }");
    assert!(errors[0].contains("names the parent shape's Rust type"), "{}", errors[0]);
}

#[test]
fn one_key_in_two_spellings_is_a_repeat() {
    let errors =
        preview::errors("shape", quote!(), "struct S { #[predicate(min = 1, min_count = 2)] tags: Vec<String> }");
    assert_eq!(errors, ["`min_count` is given more than once (as `min`); keep one"]);
}

#[test]
fn rename_all_is_for_enums() {
    let errors = preview::errors("shape", quote!(rename_all = "camelCase"), "struct S { a: String }");
    assert_eq!(errors, ["`rename_all` applies to enums; struct field names are the Rust names"]);
    let errors = preview::errors("shape", quote!(rename_all = "Title"), "enum E { A }");
    assert!(errors[0].contains("SCREAMING-KEBAB-CASE"), "{}", errors[0]);
}

#[test]
fn flags_that_would_be_ignored_are_refused() {
    let errors = preview::errors(
        "shape",
        quote!(),
        r#"struct S {
            #[predicate(required = false)] a: String,
            #[predicate(many = false)] b: Vec<String>,
            #[predicate(min_count = 0)] c: i64,
        }"#,
    );
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(errors[0].contains("`required = false` cannot make `a` optional"), "{}", errors[0]);
    assert!(errors[1].contains("`many = false` contradicts the `Vec` type of `b`"), "{}", errors[1]);
    assert!(errors[2].contains("`min_count = 0` would make `c` optional"), "{}", errors[2]);
    let errors =
        preview::errors("shape", quote!(rename_all = "lowercase"), "#[derive(Serialize, Deserialize)] enum E { A }");
    assert!(errors[0].contains("remove your `Serialize`/`Deserialize` derives"), "{}", errors[0]);
}

#[test]
fn node_type_labels_the_store_uses_are_reserved_and_unique_needs_scalars() {
    let errors = preview::errors("node_type", quote!(label = "prov"), "struct P { name: String }");
    assert!(errors[0].contains("label `prov` is reserved"), "{}", errors[0]);
    let errors = preview::errors("node_type", quote!(unique = ["tags"]), "struct P { tags: Vec<String> }");
    assert!(errors[0].contains("`tags` is a list"), "{}", errors[0]);
}
