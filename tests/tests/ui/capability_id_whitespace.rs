use trails::{capability, Result};

/// Search requirements.
#[capability(id = "requirements search", version = "1.0.0")]
async fn search() -> Result<()> {
    Ok(())
}

fn main() {}
