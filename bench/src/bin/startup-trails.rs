//! A Trails app with 1000 capabilities, for the start-up benchmark: `startup-trails serve --http ADDR`.

mod trails_app {
    pub use trails_bench::trails_app::*;
}

mod caps {
    include!(concat!(env!("OUT_DIR"), "/trails_caps_1000.rs"));
}

fn main() -> std::process::ExitCode {
    trails::App::new().named("startup-trails", "0").run()
}
