use trails::{meta_capability, Result};

/// Scaffold a shape.
#[meta_capability(namespace = "gen", op = "Shape")]
async fn shape() -> Result<()> {
    Ok(())
}

fn main() {}
