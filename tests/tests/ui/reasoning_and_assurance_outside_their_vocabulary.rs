use trails::prelude::*;

/// Reads with OWL 2 RL entailment, which Trails does not do.
#[capability(id = "catalog.owl", version = "1.0.0", side_effects(none), reasoning = "owl-rl")]
async fn owl() -> Result<String> {
    Ok(String::new())
}

/// A misspelt level.
#[capability(id = "catalog.typo", version = "1.0.0", side_effects(none), reasoning = "rdf")]
async fn typo() -> Result<String> {
    Ok(String::new())
}

/// A signed execution record, which Trails does not produce.
#[capability(id = "catalog.signed", version = "1.0.0", side_effects(none), assurance = "L2")]
async fn signed() -> Result<String> {
    Ok(String::new())
}

/// Not one of ADR-0013's levels.
#[capability(id = "catalog.level", version = "1.0.0", side_effects(none), assurance = "l1")]
async fn level() -> Result<String> {
    Ok(String::new())
}

/// Free text.
#[capability(id = "catalog.free", version = "1.0.0", side_effects(none), assurance = "self-asserted")]
async fn free() -> Result<String> {
    Ok(String::new())
}

fn main() {}
