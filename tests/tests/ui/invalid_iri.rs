use trails::node_type;

#[node_type(label = "Requirement", iri = "requirement type")]
pub struct Requirement {
    #[predicate(iri = "req id")]
    pub req_id: String,
}

fn main() {}
