use trails::shape;

// A serde type, but not a Trails shape: the schema cannot be derived from it.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Money {
    pub cents: i64,
}

#[shape]
pub struct Invoice {
    pub total: Money,
}

fn main() {}
