use trails::prelude::*;

/// A requirement.
#[node_type(label = "Requirement", iri = "https://example.org/req#Requirement", key = "req_id")]
pub struct Requirement {
    pub req_id: String,
    pub status: String,
}

/// What closing takes.
#[shape(iri = "https://example.org/req#Close")]
pub struct Close {
    pub req_id: String,
}

/// Not a node type.
#[shape(iri = "https://example.org/req#Note")]
pub struct Note {
    pub text: String,
}

/// Close a requirement.
#[capability(
    id = "requirements.close",
    version = "1.0.0",
    side_effects(writes = [Requirement], overwrites),
    preconditions(
        field_in(node_type = "Requirement", key = "requirement", field = "state", values = ["open"]),
        instance_exists(node_type = "Note", key = "req_id")
    )
)]
async fn close(close: Close) -> Result<String> {
    Ok(close.req_id)
}

fn main() {}
