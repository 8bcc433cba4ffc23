use trails::shape;

#[shape(irri = "https://example.org/shapes#Input")]
pub struct Input {
    #[predicate(min_length = 5, max_length = 2)]
    pub query: String,
    #[predicate(pattern = "[a-z")]
    pub slug: String,
    #[predicate(max_length = 10)]
    pub limit: u32,
}

fn main() {}
