//! The requirements example: `cargo run -p requirements -- serve` (HTTP on 127.0.0.1:8080/mcp),
//! `… serve --stdio`, `… tools`. See the README.

fn main() -> std::process::ExitCode {
    trails::App::new().named("requirements", env!("CARGO_PKG_VERSION")).state(requirements::Store::default()).run()
}
