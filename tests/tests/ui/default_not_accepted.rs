use trails::shape;

/// A form's starting values, each one the field would refuse.
#[shape]
pub struct Defaults {
    /// Out of its range.
    #[predicate(min_value = 1, max_value = 10, default = 11)]
    pub level: Option<u8>,
    /// Not one of its values.
    #[predicate(one_of = ["active", "inactive"], default = "pending")]
    pub status: Option<String>,
    /// Not its type.
    #[predicate(default = "yes")]
    pub verified: Option<bool>,
    /// On a list, which a form does not start with.
    #[predicate(default = "a")]
    pub tags: Vec<String>,
}

fn main() {}
