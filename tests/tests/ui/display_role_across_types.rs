use trails::{node_type, shape};

#[node_type(label = "Document")]
pub struct Document {
    #[predicate(role = "title")]
    pub name: String,
}

// The parent has a title already: a type has one field per role.
#[node_type(label = "Memo", extends = Document)]
pub struct Memo {
    pub document: Document,
    #[predicate(role = "title")]
    pub subject: String,
}

#[shape]
pub struct Progress {
    pub done: u8,
}

// A status is a name: a `String` or a `#[shape]` enum, not a shape with fields.
#[node_type(label = "Task")]
pub struct Task {
    #[predicate(role = "status")]
    pub progress: Progress,
}

fn main() {}
