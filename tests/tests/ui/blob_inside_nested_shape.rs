use trails::{node_type, shape, Blob};

/// A shape holding a blob: fine as a tool's input or output.
#[shape]
pub struct Scan {
    pub image: Blob,
    pub dpi: u32,
}

/// A node type that nests it: its bytes would land in the graph's JSON literal.
#[node_type(label = "Invoice", iri = "https://example.org/ns#Invoice")]
pub struct Invoice {
    pub number: String,
    pub scan: Scan,
}

fn main() {}
