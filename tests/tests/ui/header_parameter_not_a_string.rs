use trails::{capability, Result};

/// Page through orders.
#[capability(id = "orders.page", version = "1.0.0", side_effects(none))]
async fn page(
    /// Which page.
    #[predicate(header = "Page")]
    page: u32,
    /// Where from.
    #[predicate(header = "Region Name")]
    region: String,
) -> Result<String> {
    Ok(format!("{page} {region}"))
}

fn main() {}
