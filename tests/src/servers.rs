//! Test servers the suite starts itself: the Oxigraph server CLI that `cargo xtask test` installs
//! into the cached virtualenv (shared with the Python interop test), and Virtuoso 7 from Debian's
//! `virtuoso-opensource-7-bin`, which `cargo xtask test` installs with apt when it is missing.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use trails::kg::{Kg, RemoteStore, DEFAULT_BASE};

/// `TRAILS_PYENV`, or `~/.cache/trails-pyenv` (outside the clone, so it is reused).
pub fn venv() -> PathBuf {
    match std::env::var_os("TRAILS_PYENV") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/trails-pyenv"),
    }
}

/// `TRAILS_OXIGRAPH`, or the CLI in [`venv`].
pub fn oxigraph_binary() -> PathBuf {
    std::env::var_os("TRAILS_OXIGRAPH").map(PathBuf::from).unwrap_or_else(|| venv().join("bin/oxigraph"))
}

/// A free loopback address (bound and released: another process could take it in between, which
/// the servers below report as a failed start rather than a wrong answer).
fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

fn wait_for(addr: SocketAddr, what: &str, child: &mut Child, patience: Duration) {
    let deadline = Instant::now() + patience;
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited before listening on {addr}: {status}");
        }
        assert!(Instant::now() < deadline, "{what} did not start on {addr}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An in-memory Oxigraph server on a free loopback port, stopped on drop.
pub struct OxigraphServer {
    child: Child,
    addr: SocketAddr,
}

impl OxigraphServer {
    /// Start one and wait until it listens (panics with the fix when it is not installed).
    pub fn start() -> OxigraphServer {
        let binary = oxigraph_binary();
        let addr = free_addr();
        let mut child = Command::new(&binary)
            .args(["serve", "--bind", &addr.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {} ({e}); run `cargo xtask test`, which installs it", binary.display())
            });
        wait_for(addr, "Oxigraph server", &mut child, Duration::from_secs(20));
        OxigraphServer { child, addr }
    }

    /// The SPARQL query URL.
    pub fn query_url(&self) -> String {
        format!("http://{}/query", self.addr)
    }

    /// The SPARQL update URL.
    pub fn update_url(&self) -> String {
        format!("http://{}/update", self.addr)
    }

    /// A knowledge graph on this server, under the default base.
    pub fn kg(&self) -> Kg {
        Kg::new(Arc::new(RemoteStore::new(self.query_url(), self.update_url(), None)), DEFAULT_BASE)
    }
}

impl Drop for OxigraphServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `TRAILS_VIRTUOSO`, or `virtuoso-t` on the `PATH`.
pub fn virtuoso_binary() -> PathBuf {
    std::env::var_os("TRAILS_VIRTUOSO").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("virtuoso-t"))
}

/// The user the tests write as: Virtuoso's anonymous `/sparql` is read-only, updates go to
/// `/sparql-auth` (HTTP Digest) as a user granted `SPARQL_UPDATE`.
const VIRTUOSO_USER: (&str, &str) = ("trails", "trails-test-secret");

/// A Virtuoso 7 server on a fresh database in a temporary directory, with free loopback ports,
/// stopped (and its files removed) on drop.
pub struct VirtuosoServer {
    child: Child,
    http: SocketAddr,
    _dir: tempfile::TempDir,
}

impl VirtuosoServer {
    /// Start one, create the writing user, and wait until SPARQL answers (panics with the fix when
    /// Virtuoso is not installed).
    pub fn start() -> VirtuosoServer {
        let binary = virtuoso_binary();
        let dir = tempfile::tempdir().unwrap();
        let (sql, http) = (free_addr(), free_addr());
        let path = dir.path().display();
        // Absolute paths everywhere: Virtuoso resolves relative ones against its own notion of home.
        // Debian's default `ResultSetMaxRows` (10,000) is kept: the store must not depend on more.
        let ini = format!(
            "[Database]\nDatabaseFile = {path}/virtuoso.db\nErrorLogFile = {path}/virtuoso.log\n\
             LockFile = {path}/virtuoso.lck\nTransactionFile = {path}/virtuoso.trx\n\
             xa_persistent_file = {path}/virtuoso.pxa\nTempStorage = TempDatabase\n\
             [TempDatabase]\nDatabaseFile = {path}/virtuoso-temp.db\nTransactionFile = {path}/virtuoso-temp.trx\n\
             [Parameters]\nServerPort = {sql}\nDisableUnixSocket = 1\nDirsAllowed = {path}\n\
             NumberOfBuffers = 10000\nMaxDirtyBuffers = 6000\nDefaultIsolation = 4\n\
             [HTTPServer]\nServerPort = {http}\nServerRoot = {path}\nServerThreads = 8\nMaxClientConnections = 8\n\
             [SPARQL]\nResultSetMaxRows = 10000\nMaxQueryExecutionTime = 60\n"
        );
        let config = dir.path().join("virtuoso.ini");
        std::fs::write(&config, ini).unwrap();
        let mut child = Command::new(&binary)
            .arg("+foreground")
            .arg("+configfile")
            .arg(&config)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {} ({e}); run `cargo xtask test`, which installs Debian's virtuoso-opensource-7-bin",
                    binary.display()
                )
            });
        wait_for(http, "Virtuoso", &mut child, Duration::from_secs(60));
        let server = VirtuosoServer { child, http, _dir: dir };
        let (user, password) = VIRTUOSO_USER;
        let isql = binary.with_file_name("isql-vt");
        let grant = format!(
            "DB.DBA.USER_CREATE('{user}', '{password}'); GRANT SPARQL_SELECT TO \"{user}\"; GRANT SPARQL_UPDATE TO \"{user}\";"
        );
        let output = Command::new(&isql)
            .args([sql.to_string(), "dba".into(), "dba".into(), format!("exec={grant}")])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {} ({e})", isql.display()));
        let said = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success() && !said.contains("Error"), "creating the Virtuoso user failed: {said}");
        server
    }

    /// The anonymous, read-only SPARQL URL.
    pub fn query_url(&self) -> String {
        format!("http://{}/sparql", self.http)
    }

    /// The authenticated (Digest) SPARQL URL that accepts updates.
    pub fn update_url(&self) -> String {
        format!("http://{}/sparql-auth", self.http)
    }

    /// The writing user's name and password.
    pub fn credentials(&self) -> (String, String) {
        (VIRTUOSO_USER.0.to_owned(), VIRTUOSO_USER.1.to_owned())
    }

    /// A knowledge graph on this server, under the default base.
    pub fn kg(&self) -> Kg {
        let store = RemoteStore::new(self.query_url(), self.update_url(), Some(self.credentials()));
        Kg::new(Arc::new(store), DEFAULT_BASE)
    }
}

impl Drop for VirtuosoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
