use trails::shape;

#[shape]
pub struct Input {
    #[predicate(min_value = -1, max_value = 300)]
    pub level: u8,
}

fn main() {}
