//! `rename_all` must give exactly what serde gives on the wire, or the schema's `enum` lists
//! names the server then rejects. serde itself is the oracle here.

use serde::Serialize;
use trails_codegen::names::RenameRule;

macro_rules! oracle {
    ($rule:literal, $($variant:ident),+) => {{
        #[derive(Serialize)]
        #[serde(rename_all = $rule)]
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        enum E { $($variant),+ }
        let rule = RenameRule::parse($rule).expect("serde's rule is accepted");
        $(
            let wire = serde_json::to_value(E::$variant).unwrap();
            assert_eq!(
                rule.apply_to_variant(stringify!($variant)),
                wire.as_str().unwrap(),
                "{} under {}", stringify!($variant), $rule
            );
        )+
    }};
}

#[test]
fn every_rule_renames_like_serde() {
    oracle!("lowercase", HighPriority, A, HTTPServer, V2Beta, Über, Ärger);
    oracle!("UPPERCASE", HighPriority, A, HTTPServer, V2Beta, Über, überAll);
    oracle!("PascalCase", HighPriority, A, HTTPServer, V2Beta, Über);
    // serde slices the first byte for camelCase, so a non-ASCII first letter is not compared.
    oracle!("camelCase", HighPriority, A, HTTPServer, V2Beta, NaïveÜber);
    oracle!("snake_case", HighPriority, A, HTTPServer, V2Beta, Über, StraßeÖl);
    oracle!("SCREAMING_SNAKE_CASE", HighPriority, A, HTTPServer, V2Beta, Über, StraßeÖl);
    oracle!("kebab-case", HighPriority, A, HTTPServer, V2Beta, Über, StraßeÖl);
    oracle!("SCREAMING-KEBAB-CASE", HighPriority, A, HTTPServer, V2Beta, Über, StraßeÖl);
    assert_eq!(RenameRule::ALL.len(), 8, "every serde rule is covered above");
}
