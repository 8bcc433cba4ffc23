use trails::{meta_capability, Result};

/// Scaffold a shape.
#[meta_capability(namespace = "code_gen", op = "shape")]
async fn shape() -> Result<()> {
    Ok(())
}

fn main() {}
