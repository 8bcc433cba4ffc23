//! The fixture and example apps in one server, for the end-to-end tests (stdio child process).

fn main() -> std::process::ExitCode {
    trails_tests::default_fixture_policies();
    trails::App::new().include(trails_tests::link).named("trails-fixture-server", env!("CARGO_PKG_VERSION")).run()
}
