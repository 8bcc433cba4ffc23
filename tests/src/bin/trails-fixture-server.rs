//! The fixture and example apps in one server, for the end-to-end tests (stdio child process).

fn main() -> std::process::ExitCode {
    trails_tests::link();
    trails_tests::default_fixture_policies();
    trails::App::new().named("trails-fixture-server", env!("CARGO_PKG_VERSION")).run()
}
