//! The workspace's integration tests, in one binary: each file is a module, so the runtime and the
//! fixture app are linked once rather than once per file.
//!
//! Three tests stay binaries of their own, because what they link changes the process-wide
//! tables every test here reads: `broken_pattern` links a pattern that stops `Registry::collect`,
//! and `extends` and `kg` declare their own shapes and node types (which would join the fixture
//! app's registry, its goldens and its listings, and which share labels with each other).

mod budget;
mod config_reference;
mod content;
mod contract;
mod coordination;
mod deprecation;
mod domain_errors;
mod gen;
mod goldens;
mod guards;
mod harness;
mod hot_path_differential;
mod http_connections;
mod idempotency;
mod input_required;
mod kg_crash;
mod kg_mcp;
mod kg_subscriptions;
mod kg_tools;
mod layers;
mod manifest;
mod mcp_e2e;
mod oauth;
mod openapi;
mod own_resources;
mod parts;
mod policy;
mod progress;
mod prompts;
mod registry;
mod replicas;
mod shacl;
mod skills;
mod stdio_lines;
mod tasks;
mod telemetry;
mod ui;
mod validation;
mod validator_agreement;

/// The fixture app's binary, started the one way the tests start a binary.
fn fixture() -> trails_tests::Launch {
    trails_tests::Launch::new(env!("CARGO_BIN_EXE_trails-fixture-server"))
}
