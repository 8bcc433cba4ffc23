use std::collections::HashMap;

use trails::shape;

#[shape]
pub struct Input {
    pub labels: HashMap<String, String>,
    pub initial: char,
}

fn main() {}
