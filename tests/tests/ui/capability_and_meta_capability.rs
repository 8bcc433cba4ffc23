use trails::{capability, Result};

/// Count what the store holds.
#[capability(id = "requirements.count")]
#[trails::meta_capability(namespace = "requirements", op = "count", scope = "builder")]
async fn count() -> Result<()> {
    Ok(())
}

fn main() {}
