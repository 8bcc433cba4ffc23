use trails::shape;

#[shape]
pub struct Input {
    #[predicate(min_lenght = 1)]
    pub query: String,
}

fn main() {}
