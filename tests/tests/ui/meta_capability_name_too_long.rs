use trails::{meta_capability, Result};

/// Wipe the administrative shadow copy.
#[meta_capability(namespace = "kg.administration.shadow.copies.of.graphs", op = "wipeeverythingnow", scope = "dev")]
async fn wipe() -> Result<()> {
    Ok(())
}

fn main() {}
