use trails::capability;

/// Search requirements.
#[capability(id = "requirements.search")]
async fn search() -> Vec<u8> {
    Vec::new()
}

fn main() {}
