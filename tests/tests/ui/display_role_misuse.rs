use trails::{capability, node_type, shape, DateTime, Result};

#[node_type(label = "Note")]
pub struct Note {
    #[predicate(role = "titel")]
    pub name: String,
    #[predicate(role = "timestamp")]
    pub created: String,
    #[predicate(role = "summary")]
    pub tags: Vec<String>,
    #[predicate(role = "title")]
    pub heading: String,
    #[predicate(role = "title")]
    pub subject: String,
    #[predicate(role = "body")]
    pub at: DateTime,
}

#[shape]
pub struct Draft {
    #[predicate(role = "title")]
    pub name: String,
}

/// Rename a note.
#[capability(id = "notes.rename", version = "1.0.0", side_effects(none))]
async fn rename(#[predicate(role = "title")] name: String) -> Result<String> {
    Ok(name)
}

fn main() {}
