//! Test servers the suite starts itself: the Oxigraph server CLI that `cargo xtask test` installs
//! into the cached virtualenv (shared with the Python interop test).

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

/// An in-memory Oxigraph server on a free loopback port, stopped on drop.
pub struct OxigraphServer {
    child: Child,
    addr: SocketAddr,
}

impl OxigraphServer {
    /// Start one and wait until it listens (panics with the fix when it is not installed).
    pub fn start() -> OxigraphServer {
        let binary = oxigraph_binary();
        let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let child = Command::new(&binary)
            .args(["serve", "--bind", &addr.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {} ({e}); run `cargo xtask test`, which installs it", binary.display())
            });
        let server = OxigraphServer { child, addr };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "Oxigraph server did not start on {addr}");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
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
