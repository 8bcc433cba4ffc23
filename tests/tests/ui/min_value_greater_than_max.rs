use trails::shape;

#[shape]
pub struct Input {
    #[predicate(min_value = 10, max_value = 5)]
    pub priority: i64,
}

fn main() {}
