use trails::shape;

#[shape]
pub struct Input {
    #[predicate(min_length = 1)]
    pub priority: i64,
}

fn main() {}
