use trails::prelude::*;

/// Not a node type.
#[shape(iri = "https://example.org/req#Note")]
pub struct Note {
    pub text: String,
}

/// Store a note.
#[capability(id = "notes.create", side_effects(writes = [Note]))]
async fn create(note: Note) -> Result<String> {
    Ok(note.text)
}

fn main() {}
