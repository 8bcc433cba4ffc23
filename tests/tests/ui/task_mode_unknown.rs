use trails::{capability, Result};

/// Import every record.
#[capability(id = "records.import", version = "1.0.0", side_effects(none), task = "always")]
async fn import() -> Result<String> {
    Ok("imported".to_owned())
}

/// Export every record.
#[capability(id = "records.export", version = "1.0.0", side_effects(none), task = true)]
async fn export() -> Result<String> {
    Ok("exported".to_owned())
}

/// Archive every record.
#[capability(id = "records.archive", version = "1.0.0", side_effects(none), task = "requried")]
async fn archive() -> Result<String> {
    Ok("archived".to_owned())
}

fn main() {}
