use trails::shape;

pub struct Money {
    pub cents: i64,
}

#[shape]
pub struct Invoice {
    pub total: Money,
}

fn main() {}
