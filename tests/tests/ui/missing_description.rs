use trails::{capability, Result};

#[capability(id = "requirements.search")]
async fn search() -> Result<()> {
    Ok(())
}

fn main() {}
