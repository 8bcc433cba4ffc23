use trails::shape;

#[shape]
pub struct Input {
    #[predicate(pattern = r"^(REQ-\d+$")]
    pub id: String,
}

fn main() {}
