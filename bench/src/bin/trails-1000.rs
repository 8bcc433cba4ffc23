//! The benchmark's Trails app with 1000 capabilities, for start-up:
//! `trails-1000 serve --http ADDR --config FILE`.

mod trails_app {
    pub use trails_bench::trails_app::*;
}

mod caps {
    include!(concat!(env!("OUT_DIR"), "/trails_caps_1000.rs"));
}

fn main() -> std::process::ExitCode {
    trails::App::new().named("trails-1000", "0").run()
}
