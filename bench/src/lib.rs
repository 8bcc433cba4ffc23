//! The benchmark apps' shared pieces: the Trails app's shapes and the equivalent rmcp server
//! (`#[tool_router]`, schemars constraints, router built once and cloned per request as rmcp
//! intends). Each server runs as a binary of its own (`trails-100`, `trails-1000`, `rmcp-100`,
//! `rmcp-1000`, `serve-static`); `mcp-bench` drives them with `wrk` from outside.

pub mod process {
    //! What the drivers (`mcp-bench`, `soak`) need to run servers as processes of their own.

    use std::net::SocketAddr;
    use std::process::Child;

    /// The value after `--name` on the command line.
    pub fn arg(name: &str) -> Option<String> {
        let args: Vec<String> = std::env::args().collect();
        args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
    }

    /// A loopback address no one listens on (yet).
    pub fn free_addr() -> SocketAddr {
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
    }

    /// Whether a server listens on `addr`. A connect to a loopback port no one listens on can,
    /// rarely, connect the socket to itself (the kernel picked that port as its source): that is
    /// not a server, and a start-up wait that took it for one sent its first request too early.
    pub fn listens(addr: SocketAddr) -> bool {
        std::net::TcpStream::connect(addr).is_ok_and(|stream| stream.local_addr().ok() != Some(addr))
    }

    /// A `KiB` field of `/proc/PID/status` (`VmRSS`, `VmHWM`, `RssAnon`), 0 when it cannot be read.
    fn status_kib(pid: u32, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    /// (RSS in KiB, open file descriptors) of `pid`.
    pub fn sample(pid: u32) -> (u64, usize) {
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0);
        (status_kib(pid, "VmRSS"), fds)
    }

    /// Peak resident memory of `pid` in KiB (`VmHWM`): what an operator provisions for.
    pub fn peak_rss(pid: u32) -> u64 {
        status_kib(pid, "VmHWM")
    }

    /// Anonymous resident memory of `pid` in KiB: RSS without the pages of files mapped (the
    /// binary's code among them), which the kernel can drop and read again.
    pub fn rss_anon(pid: u32) -> u64 {
        status_kib(pid, "RssAnon")
    }

    /// A child process, killed when dropped.
    pub struct Killed(pub Child);

    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

pub mod load {
    //! `wrk` as the load generator, in a process of its own, and what its runs say.

    use std::net::SocketAddr;
    use std::path::Path;
    use std::process::Command;

    /// One `wrk` run.
    pub struct Run {
        pub rps: f64,
        pub p50_us: f64,
        pub p99_us: f64,
    }

    pub fn wrk(addr: SocketAddr, script: &Path, secs: usize, connections: usize, threads: usize) -> Run {
        wrk_with(addr, script, secs, connections, threads, &[])
    }

    /// [`wrk`], passing `args` to the script (`init(args)`).
    pub fn wrk_with(
        addr: SocketAddr,
        script: &Path,
        secs: usize,
        connections: usize,
        threads: usize,
        args: &[&str],
    ) -> Run {
        let output = Command::new("wrk")
            .args([
                "-t",
                &threads.to_string(),
                "-c",
                &connections.to_string(),
                "-d",
                &format!("{secs}s"),
                "--latency",
                "-s",
            ])
            .arg(script)
            .arg(format!("http://{addr}/mcp"))
            .arg("--")
            .args(args)
            .output()
            .expect("run wrk (`cargo xtask bench` installs it; or apt-get install wrk)");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "wrk failed: {text}{}", String::from_utf8_lossy(&output.stderr));
        assert!(
            !text.contains("Non-2xx") && !text.contains("Socket errors"),
            "not every request got a 200 on a healthy connection:\n{text}"
        );
        let field = |prefix: &str| text.lines().find_map(|l| l.trim().strip_prefix(prefix).map(str::trim));
        let duration_us = |value: &str| {
            let split = value.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(value.len());
            let number: f64 = value[..split].parse().unwrap_or(f64::NAN);
            number
                * match &value[split..] {
                    "us" => 1.0,
                    "ms" => 1e3,
                    "s" => 1e6,
                    unit => panic!("wrk latency unit {unit:?}"),
                }
        };
        Run {
            rps: field("Requests/sec:").and_then(|v| v.parse().ok()).expect("wrk's Requests/sec"),
            p50_us: duration_us(field("50%").expect("wrk's 50% latency")),
            p99_us: duration_us(field("99%").expect("wrk's 99% latency")),
        }
    }

    /// (median, min, max).
    pub fn spread(values: impl IntoIterator<Item = f64>) -> (f64, f64, f64) {
        let mut values: Vec<f64> = values.into_iter().collect();
        values.sort_by(f64::total_cmp);
        (values[values.len() / 2], values[0], values[values.len() - 1])
    }
}

/// A listener whose connections send without Nagle's delay, as Trails' own listener does: a
/// 100 kB listing spans several segments, and the comparison must not hinge on that setting.
pub async fn listener(addr: std::net::SocketAddr) -> impl axum::serve::Listener<Addr = std::net::SocketAddr> {
    use axum::serve::ListenerExt;
    tokio::net::TcpListener::bind(addr).await.expect("bind").tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    })
}

pub mod trails_app {
    include!(concat!(env!("OUT_DIR"), "/trails_shapes.rs"));
}

pub mod rmcp_app {
    use std::net::SocketAddr;
    use std::sync::Arc;

    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::model::{InitializeResult, ServerCapabilities};
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    use rmcp::{tool_handler, ServerHandler};

    include!(concat!(env!("OUT_DIR"), "/rmcp_types.rs"));

    /// The rmcp baseline: 100 tools (`Baseline::tools_100()`) or 1000 (`Baseline::tools_1000()`).
    #[derive(Clone)]
    pub struct Baseline {
        tool_router: ToolRouter<Self>,
    }

    include!(concat!(env!("OUT_DIR"), "/rmcp_tools_100.rs"));
    include!(concat!(env!("OUT_DIR"), "/rmcp_tools_1000.rs"));

    #[tool_handler(router = self.tool_router)]
    impl ServerHandler for Baseline {
        fn get_info(&self) -> InitializeResult {
            InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
        }
    }

    /// Serve the tools `router` builds at `http://ADDR/mcp` (ADDR: the first argument) in rmcp's
    /// stateless JSON mode, the mode Trails' bench server runs in; with a second argument
    /// `sessions`, in its session mode (2025 sessions, answers as SSE), what most hosts use.
    pub fn serve(router: fn() -> ToolRouter<Baseline>) {
        let addr: SocketAddr = std::env::args()
            .nth(1)
            .and_then(|a| a.parse().ok())
            .expect("usage: rmcp-N ADDR [sessions] (e.g. 127.0.0.1:8080)");
        let sessions = std::env::args().nth(2).as_deref() == Some("sessions");
        let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
        runtime.block_on(async move {
            let server = Baseline { tool_router: router() };
            let config =
                StreamableHttpServerConfig::default().with_legacy_session_mode(sessions).with_json_response(!sessions);
            let service = StreamableHttpService::new(
                move || Ok(server.clone()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
            axum::serve(crate::listener(addr).await, axum::Router::new().route_service("/mcp", service))
                .await
                .expect("serve");
        });
    }
}
