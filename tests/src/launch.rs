//! The one way the tests start an app binary (out of process): [`Launch`] says how, then
//! [`Launch::http`], [`Launch::stdio`] or [`Launch::cli`] start it. Each run gets a fresh working
//! directory holding its `trails.toml` and its embedded store, stdout is discarded (or piped for
//! stdio) and stderr is kept in `stderr.log` there, and the process is killed when dropped.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How to start an app binary: its configuration, log filter and extra environment.
#[derive(Clone, Debug)]
pub struct Launch {
    binary: String,
    toml: String,
    files: Vec<(String, String)>,
    log: Option<String>,
    env: Vec<(String, String)>,
}

impl Launch {
    /// `binary` (an `env!("CARGO_BIN_EXE_…")`) with an empty `trails.toml` and warnings logged.
    pub fn new(binary: &str) -> Launch {
        Launch {
            binary: binary.to_owned(),
            toml: String::new(),
            files: Vec::new(),
            log: Some("warn".to_owned()),
            env: Vec::new(),
        }
    }

    /// The text of `trails.toml`; `{addr}` in it stands for the address an HTTP server is
    /// started on (for `[http] public_url`).
    pub fn config(mut self, toml: impl Into<String>) -> Launch {
        self.toml = toml.into();
        self
    }

    /// One more file in the working directory (a policy file, say), `name` relative to it.
    pub fn file(mut self, name: &str, contents: impl Into<String>) -> Launch {
        self.files.push((name.to_owned(), contents.into()));
        self
    }

    /// `TRAILS_LOG`; `None` leaves it unset (the binary's default filter).
    pub fn log(mut self, filter: Option<&str>) -> Launch {
        self.log = filter.map(str::to_owned);
        self
    }

    /// One more environment variable.
    pub fn env(mut self, name: &str, value: impl Into<String>) -> Launch {
        self.env.push((name.to_owned(), value.into()));
        self
    }

    /// Write `trails.toml` and the other files into `dir`.
    fn prepare(&self, dir: &Path) {
        std::fs::write(dir.join("trails.toml"), &self.toml).expect("trails.toml is writable");
        for (name, contents) in &self.files {
            std::fs::write(dir.join(name), contents).expect("the working directory is writable");
        }
    }

    /// `binary <args>` in `dir`, its environment set: `TRAILS_CONFIG` is `dir/trails.toml` and
    /// `TRAILS_KG_PATH` is `dir/kg` (so a `[kg] path` in the configuration is overridden; set
    /// `TRAILS_KG_PATH` with [`Launch::env`] to move the store).
    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command.args(args).current_dir(dir).stdout(Stdio::null());
        // Nothing of the test's own environment configures the app: only what the launch says.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("TRAILS_") {
                command.env_remove(name);
            }
        }
        command.env("TRAILS_CONFIG", dir.join("trails.toml")).env("TRAILS_KG_PATH", dir.join("kg"));
        if let Some(log) = &self.log {
            command.env("TRAILS_LOG", log);
        }
        command.envs(self.env.iter().map(|(name, value)| (name, value)));
        command
    }

    /// [`Launch::command`] for a server: its stderr kept in `dir/stderr.log`.
    fn server(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = self.command(dir, args);
        // Appended to: a restarted server's log follows the first run's.
        let log = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("stderr.log"));
        command.stderr(log.expect("stderr.log is writable"));
        command
    }

    /// `binary serve --http <a free port>`, once it listens.
    pub fn http(self) -> Served {
        let dir = tempfile::tempdir().expect("a temporary directory");
        self.prepare(dir.path());
        let (child, addr) = self.spawn_http(dir.path());
        Served { child, addr, _log: ShownOnFailure(dir.path().to_owned()), dir, launch: self }
    }

    /// Serve on a free port. The port is bound and released first, so another process may take
    /// it before the server binds it: then the server exits, and it is started again on another.
    fn spawn_http(&self, dir: &Path) -> (KilledOnDrop, SocketAddr) {
        let mut exits = Vec::new();
        for _ in 0..3 {
            let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
            if self.toml.contains("{addr}") {
                let toml = self.toml.replace("{addr}", &addr.to_string());
                std::fs::write(dir.join("trails.toml"), toml).expect("trails.toml is writable");
            }
            let child = self.server(dir, &["serve", "--http", &addr.to_string()]).spawn().expect("the binary runs");
            let mut child = KilledOnDrop(child);
            match wait_until_listening(addr, &mut child.0, dir) {
                Ok(()) => return (child, addr),
                Err(exit) => exits.push(exit),
            }
        }
        panic!("the server did not start: {exits:?}; stderr:\n{}", read_log(dir))
    }

    /// `binary serve --stdio`, its stdin and stdout piped to the test.
    pub fn stdio(self) -> StdioApp {
        self.piped(&["serve", "--stdio"])
    }

    /// `binary <args>`, its stdin and stdout piped to the test.
    pub fn piped(self, args: &[&str]) -> StdioApp {
        let dir = tempfile::tempdir().expect("a temporary directory");
        self.prepare(dir.path());
        let mut command = self.server(dir.path(), args);
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("the binary runs");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        StdioApp { child: KilledOnDrop(child), stdin, stdout, _log: ShownOnFailure(dir.path().to_owned()), dir }
    }

    /// `binary serve --stdio` as a tokio command, for an rmcp client's child-process transport;
    /// its working directory is `dir` (which must outlive the client), its stderr inherited (the
    /// test's output shows it).
    pub fn stdio_command(&self, dir: &Path) -> tokio::process::Command {
        self.prepare(dir);
        let mut command = tokio::process::Command::from(self.command(dir, &["serve", "--stdio"]));
        command.stderr(Stdio::inherit());
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        command
    }

    /// `binary <args>` run to completion in `dir` (a command-line tool: `meta …`, `gen …`), its
    /// stdout and stderr captured.
    pub fn cli(&self, dir: &Path, args: &[&str]) -> Output {
        self.prepare(dir);
        let mut command = self.command(dir, args);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        command.output().expect("the binary runs")
    }
}

/// An app binary serving HTTP: where it listens and its working directory.
pub struct Served {
    child: KilledOnDrop,
    launch: Launch,
    /// Where it listens.
    pub addr: SocketAddr,
    _log: ShownOnFailure,
    /// Its working directory (`trails.toml`, `kg/`, `stderr.log`).
    pub dir: tempfile::TempDir,
}

impl Served {
    /// `http://<addr><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// What the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr.log")).expect("the server's stderr.log")
    }

    /// Send signal `name` (`TERM`, `INT`, …) to the process.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill").args([format!("-{name}"), self.child.0.id().to_string()]).status().unwrap();
        assert!(status.success(), "kill -{name} failed");
    }

    /// The exit code once the process exits within `limit` (-1 for a signal), or `None`.
    pub fn exits_within(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = self.child.0.try_wait().unwrap() {
                return Some(status.code().unwrap_or(-1));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// `kill -9` the process (no shutdown code runs) and reap it.
    pub fn kill(&mut self) {
        self.child.0.kill().expect("the server is running");
        self.child.0.wait().expect("the server is reaped");
    }

    /// Start the process again on the same directory (and store, and files as they are now),
    /// after [`Served::kill`].
    pub fn restart(&mut self) {
        (self.child, self.addr) = self.launch.spawn_http(self.dir.path());
    }

    /// [`Served::kill`], then [`Served::restart`].
    pub fn kill_and_restart(&mut self) {
        self.kill();
        self.restart();
    }

    /// Where its embedded store lives.
    pub fn store_path(&self) -> std::path::PathBuf {
        self.dir.path().join("kg")
    }
}

/// Shows a server's `stderr.log` when the test fails (the directory that holds it is about to
/// go); dropped after the process is killed, before the directory is removed.
struct ShownOnFailure(std::path::PathBuf);

impl Drop for ShownOnFailure {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Ok(log) = std::fs::read_to_string(self.0.join("stderr.log")) {
                eprintln!("--- the server's stderr ---\n{log}--- end of the server's stderr ---");
            }
        }
    }
}

/// An app binary serving stdio, its pipes held by the test.
pub struct StdioApp {
    /// The process.
    pub child: KilledOnDrop,
    /// The process's stdin: one JSON-RPC message per line.
    pub stdin: ChildStdin,
    /// The process's stdout.
    pub stdout: BufReader<ChildStdout>,
    _log: ShownOnFailure,
    /// Its working directory.
    pub dir: tempfile::TempDir,
}

impl StdioApp {
    /// The next line the process writes, as JSON (panics on anything else, or at end of output).
    pub fn answer(&mut self) -> serde_json::Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {line:?}; stderr: {}",
                std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default()
            )
        })
    }

    /// Block until the process (one that serves HTTP too) listens on `addr`.
    pub fn wait_until_listening(&mut self, addr: SocketAddr) {
        if let Err(exit) = wait_until_listening(addr, &mut self.child.0, self.dir.path()) {
            panic!("{exit}; stderr:\n{}", read_log(self.dir.path()));
        }
    }
}

/// Whether a server listens on `addr`. A connect to a loopback port no one listens on yet can,
/// rarely, connect the socket to itself (the kernel picked that very port as its source): that is
/// not the server, and a wait that took it for one sent the first request too early (seen in CI:
/// "connection refused" right after the wait).
pub fn listens(addr: SocketAddr) -> bool {
    TcpStream::connect(addr).is_ok_and(|stream| stream.local_addr().ok() != Some(addr))
}

/// Block until `child` listens on `addr`; fail with its stderr if it exits first or after 20 s.
/// Block until `child` itself listens on `addr` (not another process that took the port);
/// `Err` when it exits first. Fails the test after 20 s.
fn wait_until_listening(addr: SocketAddr, child: &mut Child, dir: &Path) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(listens(addr) && listens_itself(child.id(), addr)) {
        if let Some(status) = child.try_wait().unwrap() {
            return Err(format!("the server exited ({status}) before listening on {addr}"));
        }
        assert!(Instant::now() < deadline, "the server did not start listening on {addr}; stderr:\n{}", read_log(dir));
        std::thread::sleep(Duration::from_millis(25));
    }
    Ok(())
}

fn read_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default()
}

/// Whether the socket listening on `addr`'s port is process `pid`'s: its inode in
/// `/proc/net/tcp` is one of the process's file descriptors. (Elsewhere than Linux: assumed.)
pub fn listens_itself(pid: u32, addr: SocketAddr) -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    let port = format!(":{:04X}", addr.port());
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else { return true };
    // Columns: sl, local_address, rem_address, st (0A: listening), …, inode (the tenth).
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.len() > 9 && fields[1].ends_with(&port) && fields[3] == "0A").then(|| fields[9].to_owned())
        })
        .collect();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|link| inodes.iter().any(|inode| link.to_string_lossy() == format!("socket:[{inode}]")))
    })
}

/// A child process killed (and reaped) when dropped, so a failing test leaves no server behind.
pub struct KilledOnDrop(pub Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
