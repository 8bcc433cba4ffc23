use trails::shape;

#[shape]
pub struct Page<T> {
    pub items: Vec<T>,
}

fn main() {}
