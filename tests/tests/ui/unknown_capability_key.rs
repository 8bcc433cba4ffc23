use trails::{capability, Result};

/// Search requirements.
#[capability(id = "requirements.search", idempotant)]
async fn search() -> Result<()> {
    Ok(())
}

fn main() {}
