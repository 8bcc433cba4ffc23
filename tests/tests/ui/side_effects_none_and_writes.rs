use trails::prelude::*;

/// A requirement.
#[node_type(label = "Requirement", iri = "https://example.org/req#Requirement", key = "req_id")]
pub struct Requirement {
    pub req_id: String,
}

/// Create a requirement.
#[capability(id = "requirements.create", side_effects(none, writes = [Requirement]))]
async fn create() -> Result<()> {
    Ok(())
}

/// Link a requirement.
#[capability(id = "requirements.link", side_effects(writes = ["https://example.org/graphs/req", Requirement, Requirement], provenance))]
async fn link() -> Result<()> {
    Ok(())
}

fn main() {}
