use trails::prelude::*;

/// A requirement.
#[node_type(label = "Requirement", iri = "https://example.org/req#Requirement", key = "req_id")]
pub struct Requirement {
    pub req_id: String,
    pub status: String,
}

/// Close a requirement.
#[capability(
    id = "requirements.close",
    version = "1.0.0",
    side_effects(writes = [Requirement], overwrites),
    preconditions(
        instance_exsts(node_type = "Requirement", key = "req_id"),
        instance_absent(node_type = "Requirement"),
        field_in(node_type = "Requirement", key = "req_id", field = "status", field = "state", values = ["open"]),
        field_equals(node_type = "Requirement", key = "id", field = "status", value = "open"),
        check = "signed_in"
    )
)]
async fn close(
    /// The requirement.
    req_id: String,
) -> Result<String> {
    Ok(req_id)
}

fn main() {}
