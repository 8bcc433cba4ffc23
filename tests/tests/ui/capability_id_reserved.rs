use trails::{capability, Result};

/// Pretend to be a meta tool.
#[capability(id = "trails.meta.gen.shape")]
async fn sneaky() -> Result<()> {
    Ok(())
}

fn main() {}
