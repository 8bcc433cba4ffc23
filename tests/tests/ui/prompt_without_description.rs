use trails::{prompt, Result};

#[prompt]
async fn review(topic: String) -> Result<String> {
    Ok(topic)
}

fn main() {}
