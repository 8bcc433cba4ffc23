use trails::{prompt, Result};

/// Review the last few requirements.
#[prompt(name = "review")]
async fn review(how_many: u32, tags: Vec<String>) -> Result<String> {
    Ok(format!("{how_many} {tags:?}"))
}

fn main() {}
