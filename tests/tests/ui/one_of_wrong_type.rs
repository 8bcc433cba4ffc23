use trails::shape;

#[shape]
pub struct Input {
    #[predicate(one_of = ["proposed", 2])]
    pub status: String,
}

fn main() {}
