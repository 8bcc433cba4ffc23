use trails::prelude::*;

/// Where a parcel goes.
#[shape]
pub struct Address {
    /// The street.
    pub street: String,
}

/// Who receives it.
#[shape]
pub struct Recipient {
    /// Their name.
    pub name: String,
    /// Their address: a shape of its own, which no MCP form can show.
    pub address: Address,
}

/// Ship a parcel once the user says to whom.
#[capability(id = "parcels.ship", version = "1.0.0", side_effects(none))]
async fn ship(ctx: &Ctx) -> Result<String> {
    let recipient = ctx.elicit::<Recipient>("recipient", "Who receives the parcel?").await?;
    Ok(format!("{}", recipient.accepted().is_some()))
}

fn main() {}
