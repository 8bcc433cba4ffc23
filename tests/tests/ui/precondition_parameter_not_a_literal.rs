use trails::{capability, Result};

const LABEL: &str = "Requirement";

/// Close a requirement.
#[capability(
    id = "requirements.close",
    version = "1.0.0",
    side_effects(none),
    preconditions(requirement_exists(node_type = LABEL), owner_active(role = "owner", role = "lead"), signed_in = true)
)]
async fn close() -> Result<()> {
    Ok(())
}

fn main() {}
