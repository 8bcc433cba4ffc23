//! The benchmark's Trails app with 100 capabilities: `trails-100 serve --http ADDR --config FILE`.

mod trails_app {
    pub use trails_bench::trails_app::*;
}

mod caps {
    include!(concat!(env!("OUT_DIR"), "/trails_caps_100.rs"));
}

fn main() -> std::process::ExitCode {
    trails::App::new().named("trails-100", "0").run()
}
