//! Cross-check: for plain structs our schema agrees with what `schemars` derives, modulo the
//! documented differences (`runtime/guide/02-declaring.md`):
//! - no `$schema` / `title` keys; no `format` for Rust number widths;
//! - `Option<T>` is `T`'s schema (schemars emits a `[T, "null"]` type union, which clients break on);
//! - we state the natural bounds of every integer type (`u8` to `u64`, `i8` to `i64`) as
//!   `minimum`/`maximum`; schemars states some of them. Bounds equal to a Rust type's own limits
//!   are dropped on both sides.

use serde_json::{Map, Value};
use trails_codegen::preview;
use trails_codegen::shape::Kind;

const NATURAL_BOUNDS: &[i128] = &[
    0,
    255,
    65_535,
    4_294_967_295,
    u64::MAX as i128,
    -128,
    127,
    -32_768,
    32_767,
    -2_147_483_648,
    2_147_483_647,
    i64::MIN as i128,
    i64::MAX as i128,
];

fn normalise(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, item) in map {
                match key.as_str() {
                    "$schema" | "title" | "format" => continue,
                    "minimum" | "maximum" if natural_bound(item) => continue,
                    "type" => {
                        // ["number", "null"] → "number"
                        let collapsed = match item {
                            Value::Array(types) => {
                                let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                                if non_null.len() == 1 {
                                    non_null[0].clone()
                                } else {
                                    item.clone()
                                }
                            }
                            other => other.clone(),
                        };
                        out.insert(key.clone(), collapsed);
                    }
                    _ => {
                        out.insert(key.clone(), normalise(item));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(normalise).collect()),
        other => other.clone(),
    }
}

fn natural_bound(item: &Value) -> bool {
    let n = item.as_i64().map(i128::from).or_else(|| item.as_u64().map(i128::from));
    n.is_some_and(|n| NATURAL_BOUNDS.contains(&n))
}

/// Compile the struct for schemars and keep its source for our preview.
macro_rules! oracle {
    ($name:ident, $($item:tt)*) => {
        mod $name {
            #[derive(schemars::JsonSchema, serde::Deserialize)]
            #[serde(deny_unknown_fields)]
            #[allow(dead_code)]
            $($item)*
            pub const SOURCE: &str = stringify!($($item)*);
        }
    };
}

oracle!(
    scalars,
    /// Every scalar kind.
    pub struct Scalars {
        /// A name.
        pub name: String,
        pub flag: bool,
        pub tiny: u8,
        pub small: i16,
        pub count: u32,
        pub signed: i32,
        pub big: i64,
        pub ratio: f64,
        pub single: f32,
    }
);

oracle!(
    optional_and_lists,
    pub struct OptionalAndLists {
        pub note: Option<String>,
        pub score: Option<f64>,
        pub tags: Vec<String>,
        pub counts: Vec<u32>,
        pub maybe_tags: Option<Vec<String>>,
    }
);

fn ours(source: &str) -> Value {
    preview::shape_schema(Kind::Shape, Default::default(), source).expect("plain struct is valid")
}

fn theirs(schema: schemars::Schema) -> Value {
    serde_json::to_value(schema).unwrap()
}

#[test]
fn scalar_fields_agree_with_schemars() {
    let expected = normalise(&theirs(schemars::schema_for!(scalars::Scalars)));
    assert_eq!(normalise(&ours(scalars::SOURCE)), expected);
}

#[test]
fn optional_and_list_fields_agree_with_schemars() {
    let expected = normalise(&theirs(schemars::schema_for!(optional_and_lists::OptionalAndLists)));
    assert_eq!(normalise(&ours(optional_and_lists::SOURCE)), expected);
}

#[test]
fn the_documented_differences_are_real() {
    // Without normalisation the two differ exactly where `runtime/guide/02-declaring.md` says they do.
    let raw = theirs(schemars::schema_for!(optional_and_lists::OptionalAndLists));
    assert_eq!(raw["properties"]["note"]["type"], serde_json::json!(["string", "null"]));
    assert_eq!(ours(optional_and_lists::SOURCE)["properties"]["note"]["type"], "string");
    assert!(ours(scalars::SOURCE).get("$schema").is_none());
}
