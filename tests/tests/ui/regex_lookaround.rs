use trails::shape;

#[shape]
pub struct Signup {
    #[predicate(pattern = r"^(?=.*\d).{8,}$")]
    pub password: String,
}

fn main() {}
