use trails::{capability, Result};

/// Delete everything.
#[capability(id = "store.purge", version = "1.0.0", side_effects(deletes), confirmation = "Sure?")]
async fn purge() -> Result<String> {
    Ok("gone".to_owned())
}

fn main() {}
