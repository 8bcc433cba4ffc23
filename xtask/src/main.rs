//! Developer chores.
//!
//! - `cargo xtask snapshot`: rewrite `schemas/` from the fixture and example apps' declarations.
//!   Uses the same `trails_tests::golden::sync` the golden test checks with, so a snapshot followed
//!   by the test always passes, and a second snapshot changes nothing.
//! - `cargo xtask test`: the README's test command. Provisions what the tests need that cargo does
//!   not (Oxigraph server from PyPI, into the cached virtualenv the interop test also uses;
//!   Virtuoso 7, Redis and HAProxy from Debian's packages, with apt, when missing), then runs every
//!   test, including those plain `cargo test` reports as ignored for lack of them.
//! - `cargo xtask bench [ARGS]`: installs `wrk` (Debian's package) when missing, builds the
//!   benchmark servers in release mode, and runs `mcp-bench ARGS` (see `bench/src/bin/mcp-bench.rs`).
//! - `cargo xtask soak [ARGS]`: builds the example app and the soak in release mode and runs
//!   `soak ARGS` (see `bench/src/bin/soak.rs`); CI runs a short one.
//! - `cargo xtask replicas [ARGS]`: installs `wrk`, Redis and HAProxy when missing, builds the
//!   example app in release mode, and runs `replicas-bench ARGS` (see `bench/replicas/src/main.rs`).
//! - `cargo xtask features`: lints every documented feature combination of the runtime's crates
//!   (the workspace build only ever sees the defaults), and runs `trails`' unit tests without
//!   its optional parts.
//! - `cargo xtask lockfiles`: an app that turns a feature on after it locked its dependencies
//!   without it builds: for each feature of `trails`, a project locked fresh from the registry
//!   without it, then the feature added, is checked with that lockfile. (Fresh locks take the
//!   newest versions our requirements allow, not the workspace's `Cargo.lock`.)
//! - `cargo xtask conformance`: the official MCP conformance suite (pinned, installed outside the
//!   clone) against `examples/conformance` at each requirement set (`conformance.rs`).

mod conformance;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use trails::registry::Registry;
use trails_tests::golden::{self, Change, Mode};

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    match task.as_deref() {
        Some("snapshot") => snapshot(),
        Some("test") => test(),
        Some("bench") => bench(),
        Some("soak") => soak(),
        Some("replicas") => replicas(),
        Some("features") => features(),
        Some("lockfiles") => lockfiles(),
        Some("conformance") => conformance::conformance(),
        _ => {
            eprintln!("usage: cargo xtask snapshot       rewrite schemas/ (tool goldens and the manifest)");
            eprintln!("       cargo xtask test           provision test servers, then run every test");
            eprintln!("       cargo xtask bench [ARGS]   install wrk if missing, run the MCP benchmark");
            eprintln!("       cargo xtask lockfiles      each feature, turned on in an app locked without it, builds");
            eprintln!(
                "       cargo xtask conformance    the official MCP conformance suite against examples/conformance"
            );
            eprintln!(
                "       cargo xtask soak [ARGS]    run the example app under sustained load (memory, throughput)"
            );
            eprintln!("       cargo xtask replicas [ARGS] the example app as replicas sharing Redis, behind HAProxy");
            eprintln!("       cargo xtask features       lint each documented feature combination");
            ExitCode::from(2)
        }
    }
}

/// Debian's Virtuoso 7 server package (`virtuoso-t`, `isql-vt`).
const VIRTUOSO_PACKAGE: &str = "virtuoso-opensource-7-bin";

/// `TRAILS_{env}`, or `binary` installed from Debian's `package` by apt when missing.
fn provided(env: &str, package: &str, binary: &str) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(format!("TRAILS_{env}")) {
        return Ok(PathBuf::from(path));
    }
    apt_install(package, binary).map_err(|e| format!("{e}; or point TRAILS_{env} at {binary}"))
}

/// `binary`, installed from Debian's `package` with apt (as root, or through `sudo -n`) when missing.
fn apt_install(package: &str, binary: &str) -> Result<PathBuf, String> {
    let installed = PathBuf::from(binary);
    if installed.exists() {
        return Ok(installed);
    }
    println!("xtask: installing {package} with apt-get");
    let apt = |args: &[&str]| {
        let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
        let mut command = if root { Command::new("apt-get") } else { Command::new("sudo") };
        if !root {
            command.args(["-n", "apt-get"]);
        }
        run(command.env("DEBIAN_FRONTEND", "noninteractive").args(args))
    };
    let install = ["install", "-y", "-q", "--no-install-recommends", package];
    // The package lists may be stale or absent on a fresh machine: refresh once and retry.
    if !(apt(&install) || (apt(&["update", "-q"]) && apt(&install))) || !installed.exists() {
        return Err(format!("could not install {package} (needs root or passwordless sudo); install it"));
    }
    Ok(installed)
}

fn run(command: &mut Command) -> bool {
    command.status().map(|status| status.success()).unwrap_or(false)
}

fn test() -> ExitCode {
    let venv = match trails_tests::servers::python() {
        Ok(venv) => venv,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let oxigraph = venv.join("bin/oxigraph");
    let virtuoso = match provided("VIRTUOSO", VIRTUOSO_PACKAGE, "/usr/bin/virtuoso-t") {
        Ok(path) => path,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    // The replicas' topology: Redis between them, HAProxy in front.
    let (redis, haproxy) = match (
        provided("REDIS", "redis-server", "/usr/bin/redis-server"),
        provided("HAPROXY", "haproxy", "/usr/sbin/haproxy"),
    ) {
        (Ok(redis), Ok(haproxy)) => (redis, haproxy),
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["test", "--workspace", "--locked", "--", "--include-ignored"])
        .env("TRAILS_PYENV", &venv)
        .env("TRAILS_OXIGRAPH", &oxigraph)
        .env("TRAILS_VIRTUOSO", &virtuoso)
        .env("TRAILS_REDIS", &redis)
        .env("TRAILS_HAPROXY", &haproxy)
        .status();
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: cannot run cargo test: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The feature combinations the crates document (besides their defaults, which the workspace
/// build covers): (package, features), each built with `--no-default-features`.
const FEATURE_SETS: &[(&str, &str)] = &[
    ("trails-codegen", ""),
    ("trails-governance", ""),
    ("trails-governance", "ledger"),
    ("trails-governance", "cedar"),
    ("trails-governance", "redis"),
    ("trails-coord", ""),
    ("trails-kg", ""),
    ("trails-kg", "embedded"),
    ("trails-kg", "remote"),
    ("trails-serve", ""),
    ("trails-serve", "http"),
    ("trails-serve", "stdio"),
    ("trails-serve", "embedded-store"),
    ("trails-serve", "remote-store"),
    ("trails-serve", "cedar"),
    ("trails-serve", "ledger"),
    ("trails-serve", "dev"),
    ("trails-serve", "rdf-formats"),
    ("trails-serve", "testing"),
    ("trails-serve", "oauth"),
    ("trails-serve", "otel"),
    ("trails-serve", "redis"),
    // The facade forwards: it builds with none, with one transport, and for tests.
    ("trails-mcp", ""),
    ("trails-mcp", "stdio"),
    ("trails-mcp", "testing"),
];

/// Crates only an optional part brings: stores, Cedar, the ledger, TLS and HTTP clients, OAuth,
/// OpenTelemetry, the scaffolders.
const OPTIONAL_CRATES: &[&str] = &[
    "oxigraph",
    "rusqlite",
    "cedar-policy",
    "reqwest",
    "rustls",
    "jsonwebtoken",
    "opentelemetry",
    "opentelemetry_sdk",
    "opentelemetry-otlp",
    "tracing-opentelemetry",
    "redis",
    "trails-coord",
    "prettyplease",
    "similar",
];

fn features() -> ExitCode {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let run = |args: &[&str]| {
        println!("xtask: cargo {}", args.join(" "));
        Command::new(&cargo).args(args).status().is_ok_and(|s| s.success())
    };
    for (package, features) in FEATURE_SETS {
        let lint =
            ["clippy", "--locked", "-p", package, "--all-targets", "--no-default-features", "--features", features];
        if !run(&[&lint[..], &["--", "-D", "warnings"]].concat()) {
            return ExitCode::FAILURE;
        }
    }
    // A part left out costs nothing: a tools-only build compiles none of the optional parts'
    // crates.
    for features in ["http", "stdio"] {
        let tree = Command::new(&cargo)
            .args(["tree", "--locked", "-p", "trails-mcp", "--no-default-features", "--features", features])
            .args(["-e", "normal", "--prefix", "none"])
            .output();
        let Ok(tree) = tree.map(|out| String::from_utf8_lossy(&out.stdout).into_owned()) else {
            return ExitCode::FAILURE;
        };
        let names: std::collections::BTreeSet<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
        let leaked: Vec<&&str> = OPTIONAL_CRATES.iter().filter(|name| names.contains(**name)).collect();
        println!("xtask: trails-mcp with `{features}` alone: {} crates", names.len());
        if names.is_empty() || !leaked.is_empty() {
            eprintln!("error: trails-mcp with only `{features}` compiles optional parts' crates: {leaked:?}");
            return ExitCode::FAILURE;
        }
    }
    // What a configuration asks of a part left out is refused by name (unit tests say how).
    for features in ["", "stdio"] {
        if !run(&["test", "--locked", "-p", "trails-serve", "--lib", "--no-default-features", "--features", features]) {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// The features of `trails` an app turns on (`runtime/Cargo.toml`; `testing` is for tests).
const FACADE_FEATURES: &[&str] = &[
    "http",
    "stdio",
    "embedded-store",
    "remote-store",
    "cedar",
    "ledger",
    "oauth",
    "otel",
    "redis",
    "dev",
    "rdf-formats",
];

fn lockfiles() -> ExitCode {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_owned();
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let app = target.join("lockfiles/app");
    if std::fs::create_dir_all(app.join("src")).is_err()
        || std::fs::write(app.join("src/main.rs"), "fn main() {\n    let _ = trails::App::new();\n}\n").is_err()
    {
        eprintln!("error: cannot write {}", app.display());
        return ExitCode::FAILURE;
    }
    let manifest = |features: &[&str]| {
        let list: Vec<String> = features.iter().map(|f| format!("{f:?}")).collect();
        format!(
            "[package]\nname = \"locked-app\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ntrails = {{ package = \"trails-mcp\", path = {:?}, default-features = false, features = [{}] }}\n\n\
             [workspace]\n",
            root.join("runtime"),
            list.join(", ")
        )
    };
    let cargo_in = |args: &[&str]| {
        println!("xtask: (locked-app) cargo {}", args.join(" "));
        let mut command = Command::new(&cargo);
        command.args(args).current_dir(&app).env("CARGO_TARGET_DIR", target.join("lockfiles/target"));
        run(&mut command)
    };
    for feature in FACADE_FEATURES {
        let _ = std::fs::remove_file(app.join("Cargo.lock"));
        // Locked without it, then asked for it: cargo keeps every version locked and picks the
        // new crates' versions around them.
        let written = std::fs::write(app.join("Cargo.toml"), manifest(&[])).is_ok()
            && cargo_in(&["generate-lockfile"])
            && std::fs::write(app.join("Cargo.toml"), manifest(&[feature])).is_ok();
        if !written || !cargo_in(&["check", "--quiet"]) {
            eprintln!("error: an app locked without `{feature}` does not build once it turns `{feature}` on");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

fn soak() -> ExitCode {
    release_run(
        &["-p", "requirements", "-p", "trails-bench", "--bin", "requirements", "--bin", "soak"],
        "trails-bench",
        "soak",
    )
}

fn bench() -> ExitCode {
    if let Err(error) = wrk() {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    release_run(&["-p", "trails-bench", "--bins"], "trails-bench", "mcp-bench")
}

/// `wrk` on the `PATH`, or installed from Debian's package.
fn wrk() -> Result<(), String> {
    let on_path =
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("wrk").is_file()));
    if on_path {
        return Ok(());
    }
    apt_install("wrk", "/usr/bin/wrk").map(drop)
}

fn replicas() -> ExitCode {
    let provided = wrk()
        .and_then(|()| provided("REDIS", "redis-server", "/usr/bin/redis-server"))
        .and_then(|_| provided("HAPROXY", "haproxy", "/usr/sbin/haproxy"));
    if let Err(error) = provided {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    release_run(&["-p", "requirements", "--bin", "requirements"], "trails-replicas-bench", "replicas-bench")
}

/// `cargo build --release` of `build` (what the driver starts as processes of their own), then
/// `package`'s `driver` with this command's remaining arguments.
fn release_run(build: &[&str], package: &str, driver: &str) -> ExitCode {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(&cargo).args(["build", "--release", "--locked"]).args(build).status();
    if !built.is_ok_and(|s| s.success()) {
        eprintln!("error: cargo build --release {} failed", build.join(" "));
        return ExitCode::FAILURE;
    }
    let status = Command::new(cargo)
        .args(["run", "--quiet", "--release", "--locked", "-p", package, "--bin", driver, "--"])
        .args(std::env::args().skip(2))
        .status();
    if status.is_ok_and(|s| s.success()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn snapshot() -> ExitCode {
    // Keep the apps' linker-collected tables in this binary.
    trails_tests::link();
    let registry = match Registry::collect() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    match golden::sync(&registry, &schemas, Mode::Update) {
        Ok(drifts) if drifts.is_empty() => {
            println!("schemas/ is up to date ({} tools)", registry.tools().count());
            ExitCode::SUCCESS
        }
        Ok(drifts) if drifts.iter().any(|drift| drift.change == Change::Refused) => {
            for drift in drifts.iter().filter(|drift| drift.change == Change::Refused) {
                eprint!("error: {}", drift.diff);
            }
            eprintln!("nothing was written");
            ExitCode::FAILURE
        }
        Ok(drifts) => {
            for drift in &drifts {
                println!("updated schemas/{}", drift.path.display());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: cannot write {}: {error}", schemas.display());
            ExitCode::FAILURE
        }
    }
}
