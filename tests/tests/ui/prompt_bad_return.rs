use trails::{prompt, Result};

/// Review a requirement.
#[prompt]
async fn review(id: String) -> Result<u32> {
    Ok(id.len() as u32)
}

fn main() {}
