use trails::{meta_capability, Ctx, Result};

/// Scaffold a shape.
#[meta_capability(namespace = "gen", op = "make_shape", scope = "dev")]
async fn make_shape(_ctx: &Ctx) -> Result<()> {
    Ok(())
}

fn main() {}
