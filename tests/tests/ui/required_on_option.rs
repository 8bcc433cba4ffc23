use trails::shape;

#[shape]
pub struct Input {
    #[predicate(required)]
    pub owner: Option<String>,
}

fn main() {}
