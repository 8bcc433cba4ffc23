//! Test servers the suite starts itself: the Oxigraph server CLI that `cargo xtask test` installs
//! into the cached virtualenv (shared with the Python interop test), and Virtuoso 7 from Debian's
//! `virtuoso-opensource-7-bin`, which `cargo xtask test` installs with apt when it is missing.

use std::net::{SocketAddr, TcpListener};
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

/// The pinned Python tools, one per line of `tests/python-requirements.txt`.
pub const PYTHON_REQUIREMENTS: &str = include_str!("../python-requirements.txt");

/// [`venv`], created if missing, with [`PYTHON_REQUIREMENTS`] installed when they changed since
/// the last install (a copy of the file in the venv records what was installed). Once per process.
pub fn python() -> Result<PathBuf, String> {
    static READY: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    READY.get_or_init(provision).clone()
}

fn provision() -> Result<PathBuf, String> {
    let venv = venv();
    let run = |command: &mut Command| command.status().is_ok_and(|s| s.success());
    if !venv.join("bin/python").exists() && !run(Command::new("python3").args(["-m", "venv"]).arg(&venv)) {
        return Err(format!("`python3 -m venv {}` failed (Debian: apt-get install python3-venv)", venv.display()));
    }
    let stamp = venv.join("trails-requirements.txt");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(PYTHON_REQUIREMENTS) {
        return Ok(venv);
    }
    let requirements = std::env::temp_dir().join(format!("trails-requirements-{}.txt", std::process::id()));
    std::fs::write(&requirements, PYTHON_REQUIREMENTS).map_err(|e| e.to_string())?;
    let installed = run(Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
        .arg(&requirements));
    let _ = std::fs::remove_file(&requirements);
    if !installed {
        return Err(format!("pip install -r tests/python-requirements.txt into {} failed", venv.display()));
    }
    std::fs::write(&stamp, PYTHON_REQUIREMENTS).map_err(|e| e.to_string())?;
    Ok(venv)
}

/// The pinned npm packages of `tests/interop/ts/package.json` (the official TypeScript SDKs and
/// `oidc-provider`), which must be installed for the Node.js scripts that use them.
const NODE_PACKAGES: [(&str, &str); 3] =
    [("@modelcontextprotocol/sdk", "1.32.2"), ("@modelcontextprotocol/client", "2.4.0"), ("oidc-provider", "9.13.3")];

/// The one JSON report an interop script (`tests/interop/`) prints, run as `command` with the
/// server's log kept to warnings; the script's output when it fails.
pub fn interop_report(mut command: Command, what: &str) -> serde_json::Value {
    let output = command.env("TRAILS_LOG", "warn").output().unwrap_or_else(|error| panic!("{what}: {error}"));
    assert!(
        output.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{what} printed no JSON report: {error}"))
}

/// The directory holding `node_modules` (`TRAILS_NODE_DIR`, default `~/.cache/trails-node`,
/// outside the clone so it is reused), with the pinned packages installed by the machine's npm on
/// first use, and `scripts` (paths under `tests/interop/`) copied next to them: ES modules
/// resolve packages from the script's own directory. Once per process for the install.
pub fn node_packages(scripts: &[&str]) -> PathBuf {
    static READY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = READY.get_or_init(|| {
        let dir = std::env::var_os("TRAILS_NODE_DIR").map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/trails-node")
        });
        std::fs::create_dir_all(&dir).unwrap();
        let installed = |(name, version): &(&str, &str)| {
            let manifest = dir.join("node_modules").join(name).join("package.json");
            std::fs::read_to_string(manifest)
                .ok()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
                .is_some_and(|manifest| manifest["version"] == *version)
        };
        if !NODE_PACKAGES.iter().all(installed) {
            std::fs::copy(interop().join("ts/package.json"), dir.join("package.json")).unwrap();
            let status = Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&dir)
                .status()
                .expect("npm is installed (the machine's Node.js and npm)");
            assert!(status.success(), "npm install in {} failed", dir.display());
            assert!(
                NODE_PACKAGES.iter().all(installed),
                "the pinned packages are not in {} after npm install",
                dir.display()
            );
        }
        dir
    });
    for script in scripts {
        let from = interop().join(script);
        let name = from.file_name().expect("a script's path names a file");
        std::fs::copy(&from, dir.join(name)).unwrap_or_else(|e| panic!("copying {}: {e}", from.display()));
    }
    dir.clone()
}

fn interop() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("interop")
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

/// Wait until `child` answers SPARQL at `http://addr{path}`. Something listening is not enough:
/// between [`free_addr`] and the child's bind, another process may take the port (then the
/// child fails to bind and exits, and whatever took the port answers, or stops answering, in
/// its stead).
fn wait_for(addr: SocketAddr, path: &str, what: &str, child: &mut Child, patience: Duration) -> Result<(), String> {
    let deadline = Instant::now() + patience;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{what} exited before answering on {addr}: {status}"));
        }
        if crate::launch::listens(addr) && answers_sparql(addr, path) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!("{what} did not answer SPARQL on {addr} within {patience:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `GET http://addr{path}?query=ASK{}` answers 200.
fn answers_sparql(addr: SocketAddr, path: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!(
        "GET {path}?query=ASK%20%7B%7D HTTP/1.1\r\nHost: {addr}\r\n\
         Accept: application/sparql-results+json\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.") && &head[8..12] == b" 200"
}

/// Start a server with `start` (on fresh ports each time) up to three times: a port taken by
/// another process in between is a retry, not a failed test.
fn with_retries<T>(what: &str, mut start: impl FnMut() -> Result<T, String>) -> T {
    let mut failures = Vec::new();
    for _ in 0..3 {
        match start() {
            Ok(server) => return server,
            Err(failure) => failures.push(failure),
        }
    }
    panic!("{what} did not start: {failures:?}")
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
        with_retries("Oxigraph server", || {
            let addr = free_addr();
            let child = Command::new(&binary)
                .args(["serve", "--bind", &addr.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| {
                    panic!("cannot start {} ({e}); run `cargo xtask test`, which installs it", binary.display())
                });
            let mut server = OxigraphServer { child, addr };
            wait_for(addr, "/query", "Oxigraph server", &mut server.child, Duration::from_secs(20))?;
            Ok(server)
        })
    }

    /// The SPARQL query URL.
    pub fn query_url(&self) -> String {
        format!("http://{}/query", self.addr)
    }

    /// The SPARQL update URL.
    pub fn update_url(&self) -> String {
        format!("http://{}/update", self.addr)
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A knowledge graph on this server, under the default base.
    pub fn kg(&self) -> Kg {
        let store = RemoteStore::builder(self.query_url()).update_url(self.update_url()).build().unwrap();
        Kg::new(Arc::new(store), DEFAULT_BASE)
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

/// One Virtuoso at a time per test process. With several Virtuoso 7.2.5 processes busy at once on
/// this 2-core machine, one of them now and then failed an insert with an internal error ("Error
/// making blob in vectored insert") or lost an empty-string value; one at a time, never (44 runs
/// of the suite). Concurrency *inside* one server — what a deployment sees — is tested as usual.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A Virtuoso 7 server on a fresh database in a temporary directory, with free loopback ports,
/// stopped (and its files removed) on drop.
pub struct VirtuosoServer {
    child: Child,
    http: SocketAddr,
    _dir: tempfile::TempDir,
    // Last: released after the process is gone.
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl VirtuosoServer {
    /// Start one, create the writing user, and wait until SPARQL answers (panics with the fix when
    /// Virtuoso is not installed).
    pub fn start() -> VirtuosoServer {
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poison| poison.into_inner());
        let mut turn = Some(turn);
        with_retries("Virtuoso", || VirtuosoServer::try_start(&mut turn))
    }

    fn try_start(turn: &mut Option<std::sync::MutexGuard<'static, ()>>) -> Result<VirtuosoServer, String> {
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
        if let Err(failure) = wait_for(http, "/sparql", "Virtuoso", &mut child, Duration::from_secs(60)) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(failure);
        }
        let turn = turn.take().expect("a started server takes the turn once");
        let server = VirtuosoServer { child, http, _dir: dir, _turn: turn };
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
        Ok(server)
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
        let (user, password) = self.credentials();
        Kg::new(Arc::new(self.store(Some((&user, &password)))), DEFAULT_BASE)
    }

    /// A store on this server, writing as `credentials` (or anonymously).
    pub fn store(&self, credentials: Option<(&str, &str)>) -> RemoteStore {
        let mut store = RemoteStore::builder(self.query_url()).update_url(self.update_url());
        if let Some((user, password)) = credentials {
            store = store.credentials(user, password);
        }
        store.build().unwrap()
    }
}

impl Drop for VirtuosoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTPS front for a plain-HTTP server (TLS terminated here, bytes relayed both ways), with a
/// certificate for `localhost` issued by a throw-away CA: what a remote store behind TLS looks like.
pub struct TlsProxy {
    addr: SocketAddr,
    ca_pem: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl TlsProxy {
    /// Relay `https://localhost:<port>` to `target`.
    pub fn start(target: SocketAddr) -> TlsProxy {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
        use tokio_rustls::rustls::{self, pki_types::PrivatePkcs8KeyDer};

        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_key = KeyPair::generate().unwrap();
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let leaf_key = KeyPair::generate().unwrap();
        let issuer = Issuer::from_params(&ca_params, &ca_key);
        let leaf = CertificateParams::new(vec!["localhost".to_owned()]).unwrap().signed_by(&leaf_key, &issuer).unwrap();
        let config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(vec![leaf.der().clone()], PrivatePkcs8KeyDer::from(leaf_key.serialize_der()).into())
                .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let relay = async {
                    loop {
                        let Ok((client, _)) = listener.accept().await else { continue };
                        let acceptor = acceptor.clone();
                        tokio::spawn(async move {
                            // A client that refuses the certificate ends its handshake: nothing to relay.
                            let Ok(mut client) = acceptor.accept(client).await else { return };
                            let Ok(mut server) = tokio::net::TcpStream::connect(target).await else { return };
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        });
                    }
                };
                tokio::select! { _ = relay => {}, _ = stopped => {} }
            });
        });
        TlsProxy { addr, ca_pem: ca.pem(), stop: Some(stop) }
    }

    /// `https://localhost:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.addr.port())
    }

    /// The CA that issued the proxy's certificate, as PEM.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// `TRAILS_REDIS`, or Debian's `redis-server` (which `cargo xtask test` installs with apt).
pub fn redis_binary() -> PathBuf {
    std::env::var_os("TRAILS_REDIS").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/bin/redis-server"))
}

/// A Redis server on a free loopback port, keeping nothing on disk (a restart starts it empty),
/// stopped on drop.
pub struct RedisServer {
    child: Option<Child>,
    addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl RedisServer {
    /// Start one and wait until it answers `PING`.
    pub fn start() -> RedisServer {
        let dir = tempfile::tempdir().unwrap();
        let mut server = RedisServer { child: None, addr: free_addr(), dir };
        with_retries("Redis", || {
            server.addr = free_addr();
            server.spawn()
        });
        server
    }

    fn spawn(&mut self) -> Result<(), String> {
        let binary = redis_binary();
        let port = self.addr.port().to_string();
        let mut command = Command::new(&binary);
        command.args(["--port", &port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
        let what = format!("{} on {}", binary.display(), self.addr);
        let addr = self.addr;
        self.child = Some(spawn_until(command.arg("--dir").arg(self.dir.path()), &what, || redis_answers(addr))?);
        Ok(())
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// Kill it (as a crash would: nothing is saved).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start it again on the same port, empty.
    pub fn restart(&mut self) {
        self.stop();
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Err(failure) = self.spawn() {
            assert!(Instant::now() < deadline, "Redis did not restart on {}: {failure}", self.addr);
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Spawn `command` (a test server), its output discarded, and wait up to 10 s until `ready`: the
/// child, or why not (it exited, or was never ready: then it is killed).
fn spawn_until(command: &mut Command, what: &str, ready: impl Fn() -> bool) -> Result<Child, String> {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what} ({e}); run `cargo xtask test`, which installs it"));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{what} exited before it was ready: {status}"));
        }
        if ready() {
            return Ok(child);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{what} was not ready within 10 s"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether Redis at `addr` answers `PING` with `+PONG`.
fn redis_answers(addr: SocketAddr) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut answer = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok() && stream.read_exact(&mut answer).is_ok() && &answer == b"+PONG\r\n"
}

/// `TRAILS_HAPROXY`, or Debian's `haproxy` (which `cargo xtask test` installs with apt).
pub fn haproxy_binary() -> PathBuf {
    std::env::var_os("TRAILS_HAPROXY").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/sbin/haproxy"))
}

/// HAProxy on a free loopback port, balancing HTTP round robin over `backends` (sticky on
/// `Mcp-Session-Id` for 2025-* sessions, as the guide's set-up is), stopped on drop.
pub struct Balancer {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Balancer {
    pub fn start(backends: &[SocketAddr]) -> Balancer {
        let binary = haproxy_binary();
        with_retries("HAProxy", || {
            let (addr, dir) = (free_addr(), tempfile::tempdir().unwrap());
            let servers: String =
                backends.iter().enumerate().map(|(n, backend)| format!("  server replica{n} {backend}\n")).collect();
            let config = format!(
                "global\n  maxconn 1024\n\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  \
                 timeout server 60s\n  retries 3\n  option redispatch\n\nfrontend mcp\n  bind {addr}\n  default_backend replicas\n\n\
                 backend replicas\n  balance roundrobin\n  stick-table type string len 64 size 100k expire 30m\n  \
                 stick on req.hdr(Mcp-Session-Id)\n  stick store-response res.hdr(Mcp-Session-Id)\n{servers}"
            );
            let file = dir.path().join("haproxy.cfg");
            std::fs::write(&file, config).unwrap();
            let what = format!("{} on {addr}", binary.display());
            let child = spawn_until(Command::new(&binary).arg("-db").arg("-f").arg(&file), &what, || {
                crate::launch::listens(addr)
            })?;
            Ok(Balancer { child, addr, _dir: dir })
        })
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
