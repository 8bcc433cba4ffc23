//! The one way the tests serve the fixture app in their own process: settings from the
//! `trails.toml` text an operator would write, then [`serve`] builds the app and serves HTTP on a
//! free port. (What a test needs from the inside — its own store handle, a guard — goes on the
//! [`trails::App`] it passes.)

use std::net::SocketAddr;

use trails::config::{Config, Settings};

/// Settings from `toml` (and `env` for `TRAILS_*` variables), with the fixture app's policies.
pub fn settings_with_env(toml: &str, env: &[(&str, &str)]) -> Settings {
    crate::link();
    let env: Vec<(String, String)> = env.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect();
    let lookup = move |name: &str| env.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone());
    let config = crate::with_fixture_policies(Config::parse(toml).unwrap_or_else(|e| panic!("{e}\n{toml}")));
    Settings::resolve(config, lookup).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

/// Settings from `toml`, with the fixture app's policies.
pub fn settings(toml: &str) -> Settings {
    settings_with_env(toml, &[])
}

/// `app` built with `settings` and serving HTTP on a free port (until the runtime ends).
pub async fn serve(app: trails::App, settings: Settings) -> InProcess {
    let server = app.build(settings).expect("the app builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = server.clone();
    tokio::spawn(async move { served.serve_http(listener).await });
    InProcess { addr, server }
}

/// An app served in the test's process.
pub struct InProcess {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The server, for the in-process test client.
    pub server: trails::serve::Server,
}
