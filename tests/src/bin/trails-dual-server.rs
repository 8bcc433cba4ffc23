//! The fixture and example apps served over stdio *and* Streamable HTTP by one process (for the
//! tests where one transport's client misbehaves while the other's writes): `trails-dual-server
//! ADDR`, settings from `TRAILS_CONFIG` and the `TRAILS_*` environment like any Trails binary.

fn main() {
    trails_tests::link();
    trails_tests::default_fixture_policies();
    let addr: std::net::SocketAddr = std::env::args().nth(1).expect("usage: trails-dual-server ADDR").parse().unwrap();
    let config = std::env::var_os("TRAILS_CONFIG").map(std::path::PathBuf::from);
    let settings = trails::config::Settings::load(config.as_deref()).unwrap();
    let server = trails::App::new().named("trails-dual-server", env!("CARGO_PKG_VERSION")).build(settings).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let (stdio, http) = tokio::join!(server.serve_stdio(), server.serve_http(listener));
        stdio.and(http).unwrap();
    });
}
