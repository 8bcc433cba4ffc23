//! The requirements example: `cargo run -p requirements -- serve` (HTTP on 127.0.0.1:8080/mcp),
//! `… serve --stdio`, `… tools`. Data lives in `trails-data/` (see `[kg]` in `runtime/guide/03-knowledge-graph.md`).

fn main() -> std::process::ExitCode {
    // The capabilities are declared in the library crate: name it, or the linker leaves them out.
    trails::App::new()
        .include(requirements::link)
        .named("requirements", env!("CARGO_PKG_VERSION"))
        .instructions(
            "Requirements and the people who own them. Search before you create (ids are unique);              register a person with `people_create` before you make them an owner. The `triage`              prompt walks through the open ones.",
        )
        .run()
}
