use trails::node_type;

#[node_type(label = "types", iri = "https://example.org/t#Types", key = "name")]
pub struct Types {
    pub name: String,
}

fn main() {}
