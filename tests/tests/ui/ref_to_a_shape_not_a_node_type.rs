use trails::{shape, Ref};

#[shape]
pub struct Person {
    pub name: String,
}

#[shape]
pub struct Task {
    pub owner: Ref<Person>,
}

fn main() {}
