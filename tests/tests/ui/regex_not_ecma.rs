use trails::shape;

#[shape]
pub struct Input {
    #[predicate(pattern = r"\AREQ-\d+\z")]
    pub id: String,
    #[predicate(pattern = r"(?i)^yes$")]
    pub answer: String,
}

fn main() {}
