use trails::{capability, Result};

/// Search requirements.
#[capability(id = "requirements.search")]
async fn search() -> Result<()> {
    Ok(())
}

/// Search requirements, spelt as the tool name the id above projects to.
#[capability(id = "requirements_search")]
async fn search_again() -> Result<()> {
    Ok(())
}

fn main() {}
