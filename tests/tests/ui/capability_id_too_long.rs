use trails::{capability, Result};

/// Search requirements.
#[capability(id = "requirements.search.with.a.very.long.name.that.keeps.going.and.going.well.past.the.one.hundred.and.twenty.eight.character.limit.of.mcp")]
async fn search() -> Result<()> {
    Ok(())
}

fn main() {}
