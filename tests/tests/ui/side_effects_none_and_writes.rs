use trails::{capability, Result};

/// Create a requirement.
#[capability(id = "requirements.create", side_effects(none, writes = ["https://example.org/graphs/req"]))]
async fn create() -> Result<()> {
    Ok(())
}

fn main() {}
