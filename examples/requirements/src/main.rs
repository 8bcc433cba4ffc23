//! `cargo run -p requirements -- tools` lists the tool descriptors this app serves.
//! (The MCP/HTTP server arrives with the runtime milestone; see the README.)

use std::io::Write as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    requirements::link();
    let registry = match trails::Registry::collect() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    match std::env::args().nth(1).as_deref() {
        Some("tools") => {
            let tools: Vec<serde_json::Value> =
                registry.tools().map(|t| serde_json::from_str(t.descriptor).expect("macro-emitted JSON")).collect();
            // A closed pipe (`| head`) is not an error worth a panic.
            let text = serde_json::to_string_pretty(&tools).expect("JSON");
            let _ = writeln!(std::io::stdout().lock(), "{text}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: requirements tools");
            ExitCode::from(2)
        }
    }
}
