use trails::shape;

#[shape]
pub struct Input {
    #[predicate(many, max_count = 3)]
    pub tag: String,
}

fn main() {}
