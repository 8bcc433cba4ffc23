//! `cargo run -p conformance -- serve --http 127.0.0.1:3001` (no configuration file needed), or
//! `serve --stdio`; `cargo xtask conformance` runs the official suite against it.

fn main() -> std::process::ExitCode {
    trails::App::new()
        .include(conformance::link)
        .named("conformance", env!("CARGO_PKG_VERSION"))
        // A skill per namespace of its tools, for the Skills extension's scenarios.
        .generated_skills()
        .run()
}
