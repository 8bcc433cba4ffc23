use trails::{capability, Result};

/// Search requirements.
#[capability(id = "requirements.search.by.owner.status.and.text.well.past.what.hosts.take")]
async fn search() -> Result<()> {
    Ok(())
}

fn main() {}
