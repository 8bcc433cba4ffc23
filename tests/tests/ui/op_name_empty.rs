use trails::{meta_capability, Result};

/// Does nothing.
#[meta_capability(namespace = "gen", op = "")]
async fn nothing() -> Result<()> {
    Ok(())
}

fn main() {}
