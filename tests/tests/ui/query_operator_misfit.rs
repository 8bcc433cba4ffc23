use trails::{node_type, Ctx};

#[node_type(label = "Task", key = "title")]
pub struct Task {
    pub title: String,
    pub estimate: i64,
    pub done: bool,
    pub tags: Vec<String>,
}

fn main() {
    let ctx = Ctx::local();
    let f = Task::FIELDS;
    // Text operators on a number, an order on a bool.
    let _ = Task::objects(&ctx).filter(f.estimate.contains(3));
    let _ = Task::objects(&ctx).filter(f.done.gt(false));
    let _ = Task::objects(&ctx).filter(f.estimate.starts_with("1"));
    // A required field is never absent; a list has no single value to order by.
    let _ = Task::objects(&ctx).filter(f.title.is_none());
    let _ = Task::objects(&ctx).order_by(f.tags);
    // Adding up text.
    let _ = Task::objects(&ctx).sum(f.title);
}
