//! What the interop tests share: the example app serving Streamable HTTP as a child process.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server process and its data directory (removed after the process is killed).
pub struct Server(Child, #[allow(dead_code)] tempfile::TempDir);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn serve_http() -> (Server, SocketAddr) {
    let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let data = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_requirements"))
        .args(["serve", "--http", &addr.to_string()])
        .env("TRAILS_LOG", "warn")
        .env("TRAILS_KG_PATH", data.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server(child, data);
    let deadline = Instant::now() + Duration::from_secs(20);
    // A connect to a port nothing listens on yet can pick that port as its own source and reach
    // itself: such a socket is not the server.
    while !TcpStream::connect(addr).is_ok_and(|stream| stream.local_addr().ok() != Some(addr)) {
        assert!(Instant::now() < deadline, "server did not start listening on {addr}");
        std::thread::sleep(Duration::from_millis(25));
    }
    (server, addr)
}
