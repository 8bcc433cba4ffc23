use trails::prelude::*;

/// A task.
#[node_type(label = "Task", iri = "https://example.org/tasks#Task", key = "code")]
pub struct Task {
    pub code: String,
    #[predicate(one_of = ["open", "doing", "done"])]
    pub status: String,
}

/// Reopen a task.
#[capability(
    id = "tasks.reopen",
    version = "1.0.0",
    side_effects(writes = [Task], overwrites),
    preconditions(
        field_equals(node_type = "Task", key = "code", field = "status", value = "closed"),
        field_in(node_type = "Task", key = "code", field = "status", values = ["done", "shut"])
    )
)]
async fn reopen(code: String) -> Result<String> {
    Ok(code)
}

fn main() {}
