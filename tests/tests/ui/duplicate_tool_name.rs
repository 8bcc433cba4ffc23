use trails::{capability, Result};

/// Search requirements.
#[capability(id = "requirements.search")]
async fn search() -> Result<()> {
    Ok(())
}

/// Search requirements, again.
#[capability(id = "requirements.search")]
async fn search_again() -> Result<()> {
    Ok(())
}

fn main() {}
