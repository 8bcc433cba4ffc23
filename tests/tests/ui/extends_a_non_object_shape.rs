use trails::shape;

#[shape(rename_all = "lowercase")]
pub enum Mode {
    Fast,
    Thorough,
}

#[shape(extends = Mode)]
pub struct Search {
    pub mode: Mode,
    pub query: String,
}

fn main() {}
