use trails::shape;

#[shape]
pub struct Input {
    #[predicate(minimum = 1)]
    pub limit: u32,
    #[predicate(maxLength = 80)]
    pub query: String,
}

fn main() {}
