use trails::{node_type, shape};

#[shape]
pub struct Base {
    pub query: String,
}

// `query` is inherited already: the JSON would carry one `query` for two fields.
#[shape(extends = Base)]
pub struct Search {
    pub base: Base,
    pub query: String,
}

#[node_type(label = "Agent")]
pub struct Agent {
    pub name: String,
}

// `unique` may name inherited fields, but `nickname` is nowhere.
#[node_type(label = "Member", extends = Agent, unique = ["nickname"])]
pub struct Member {
    pub agent: Agent,
}

fn main() {}
