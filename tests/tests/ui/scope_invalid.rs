use trails::{meta_capability, Result};

/// Wipe everything.
#[meta_capability(namespace = "kg", op = "wipe", scope = "admin")]
async fn wipe() -> Result<()> {
    Ok(())
}

fn main() {}
