//! The requirements example: `cargo run -p requirements -- serve` (HTTP on 127.0.0.1:8080/mcp),
//! `… serve --stdio`, `… tools`. Data lives in `trails-data/` (see `[kg]` in `runtime/guide/03-knowledge-graph.md`).

fn main() -> std::process::ExitCode {
    // Keeps the library's linker-collected capabilities in this binary.
    requirements::link();
    trails::App::new().named("requirements", env!("CARGO_PKG_VERSION")).run()
}
