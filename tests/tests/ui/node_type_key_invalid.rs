use trails::node_type;

#[node_type(label = "Ticket", key = "number")]
pub struct Ticket {
    pub title: String,
}

#[node_type(label = "Note", key = "slug")]
pub struct Note {
    pub slug: Option<String>,
}

fn main() {}
