use trails::{capability, shape, Result};

// One real error (a misspelt key). Everything that uses `Address` still type-checks, so the
// user sees that one error, not "`Address` has no Trails schema" at every use.
#[shape]
pub struct Address {
    #[predicate(min_lenght = 2)]
    pub city: String,
}

#[shape]
pub struct Order {
    pub ship_to: Address,
}

/// Ship an order.
#[capability(id = "orders.ship", side_effects(none))]
async fn ship(input: Order) -> Result<Address> {
    Ok(input.ship_to)
}

fn main() {}
