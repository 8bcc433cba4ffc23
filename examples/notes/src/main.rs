//! `cargo run -p notes -- serve --stdio` (or `serve`: HTTP on 127.0.0.1:8080/mcp).

fn main() -> std::process::ExitCode {
    trails::App::new().include(notes::link).named("notes", env!("CARGO_PKG_VERSION")).run()
}
