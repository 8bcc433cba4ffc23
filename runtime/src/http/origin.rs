//! The DNS-rebinding defence of omnigraph RFC-003 §3: which `Host` and `Origin` values a server
//! bound at a given address accepts.

use std::net::SocketAddr;

use crate::config::Settings;

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Hosts accepted in `Host` (DNS-rebinding defence, omnigraph RFC-003 §3): the loopback names
/// for a loopback bind, otherwise the configured hosts (or the bind address itself).
pub(crate) fn allowed_hosts(settings: &Settings, bind: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = settings.allowed_hosts.clone();
    if bind.ip().is_loopback() {
        hosts.extend(LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()));
    } else if hosts.is_empty() {
        hosts.push(bind.ip().to_string());
    }
    hosts
}

/// Origins accepted when a browser sends one; requests without `Origin` always pass.
pub(crate) fn allowed_origins(settings: &Settings) -> Vec<String> {
    if settings.allowed_origins.is_empty() {
        vec!["http://localhost:*".into(), "http://127.0.0.1:*".into(), "http://[::1]:*".into()]
    } else {
        settings.allowed_origins.clone()
    }
}
