use trails::shape;

#[shape]
pub struct Base {
    pub requester: String,
}

#[shape(extends = Base)]
pub struct Search {
    pub query: String,
}

fn main() {}
