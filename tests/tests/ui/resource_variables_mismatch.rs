use trails::{resource, Result};

/// A report.
#[resource(uri = "reports://{year}/{kind}")]
async fn report(year: String, month: String) -> Result<String> {
    Ok(format!("{year} {month}"))
}

fn main() {}
