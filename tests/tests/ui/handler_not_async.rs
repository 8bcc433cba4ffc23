use trails::{capability, Result};

/// Search requirements.
#[capability(id = "requirements.search")]
fn search() -> Result<()> {
    Ok(())
}

fn main() {}
