use trails::{capability, Result};

/// Search requirements.
#[capability(id = "requirements.search", version = "1.2")]
async fn search() -> Result<()> {
    Ok(())
}

fn main() {}
