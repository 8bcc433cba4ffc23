//! The DNS-rebinding defence: which `Host` and `Origin` values a server
//! bound at a given address accepts.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::Response;

use crate::config::HttpSettings;

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Hosts accepted in `Host` (the DNS-rebinding defence): the loopback names
/// for a loopback bind, otherwise the configured hosts (or the bind address itself).
pub(crate) fn allowed_hosts(settings: &HttpSettings, bind: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = settings.allowed_hosts.clone();
    // Every interface includes loopback: a container's own health check asks for `localhost`.
    if bind.ip().is_loopback() || bind.ip().is_unspecified() {
        hosts.extend(LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()));
    } else if hosts.is_empty() {
        hosts.push(bind.ip().to_string());
    }
    hosts
}

/// `[http] allowed_hosts = ["*"]`: any `Host` (the DNS-rebinding defence off, on purpose).
pub(crate) const ANY_HOST: &str = "*";

/// Before serving on `bind`: the `Host` values it will accept, or why it cannot serve. An
/// unspecified address (`0.0.0.0`, `::` — every container's) is reached by names the server
/// cannot guess: without `[http] allowed_hosts` every request would get 403, so it does not start.
pub(crate) fn startup_hosts(settings: &HttpSettings, bind: SocketAddr) -> Result<Vec<String>, String> {
    let unreadable: Vec<&str> = settings
        .allowed_hosts
        .iter()
        .filter(|host| host.trim() != ANY_HOST && parse_host(host, Port::Any).is_none())
        .map(String::as_str)
        .collect();
    if !unreadable.is_empty() {
        return Err(format!("[http] allowed_hosts: {unreadable:?} is not a host name, `host:port` or `\"*\"`"));
    }
    if bind.ip().is_unspecified() && settings.allowed_hosts.is_empty() {
        return Err(format!(
            "listening on {bind} (every interface), this server is reached by names it cannot guess, and a request \
             whose Host it does not accept gets 403: set [http] allowed_hosts (or TRAILS_HTTP_ALLOWED_HOSTS) to the \
             names clients use, e.g. allowed_hosts = [\"mcp.example.com\", \"10.0.0.5:8080\"], or to [\"*\"] to \
             accept any Host (the DNS-rebinding defence is then off)"
        ));
    }
    Ok(allowed_hosts(settings, bind))
}

/// Origins accepted when a browser sends one; requests without `Origin` always pass.
pub(crate) fn allowed_origins(settings: &HttpSettings) -> Vec<String> {
    if settings.allowed_origins.is_empty() {
        vec!["http://localhost:*".into(), "http://127.0.0.1:*".into(), "http://[::1]:*".into()]
    } else {
        settings.allowed_origins.clone()
    }
}

/// One accepted `Host` (a port, or any port when none is given) or `Origin` (scheme, host and
/// a port, `*`, or the scheme's default).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    scheme: Option<String>,
    host: String,
    port: Port,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Port {
    Any,
    Default,
    Is(u16),
}

fn normal_host(host: &str) -> String {
    host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()
}

/// `host[:port]` (an unbracketed IPv6 address is a host without a port, as rmcp reads it);
/// `None` when it is empty or holds what no host does.
fn parse_host(text: &str, absent_port: Port) -> Option<Authority> {
    let text = text.trim();
    match text.parse::<axum::http::uri::Authority>() {
        Ok(authority) if !authority.as_str().contains('@') => {
            let port = authority.port_u16().map_or(absent_port, Port::Is);
            Some(Authority { scheme: None, host: normal_host(authority.host()), port })
        }
        _ if !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') => {
            Some(Authority { scheme: None, host: normal_host(text), port: absent_port })
        }
        _ => None,
    }
}

/// `scheme://host[:port|:*]`; `None` when it does not parse (`null` included).
fn parse_origin(text: &str) -> Option<Authority> {
    let (scheme, rest) = text.trim().split_once("://")?;
    let (rest, port) = match rest.strip_suffix(":*") {
        Some(rest) => (rest, Some(Port::Any)),
        None => (rest, None),
    };
    let mut origin = parse_host(rest, Port::Default)?;
    if let Some(port) = port {
        origin.port = port;
    }
    origin.scheme = Some(scheme.to_ascii_lowercase());
    Some(origin)
}

/// The port an origin means: its scheme's default when it names none (`https://a` is `:443`).
fn effective(origin: &Authority) -> Port {
    match (origin.port, origin.scheme.as_deref()) {
        (Port::Default, Some("http")) => Port::Is(80),
        (Port::Default, Some("https")) => Port::Is(443),
        (port, _) => port,
    }
}

fn matches(allowed: &Authority, sent: &Authority) -> bool {
    allowed.scheme == sent.scheme
        && allowed.host == sent.host
        && match allowed.port {
            Port::Any => true,
            _ => effective(allowed) == effective(sent),
        }
}

/// The DNS-rebinding defence applied to *every* route (rmcp applies it to `/mcp` only).
#[derive(Debug, Clone)]
pub(crate) struct HostPolicy {
    any_host: bool,
    hosts: Vec<Authority>,
    /// The accepted any-port names the parser reads as themselves (letters, digits, dots and
    /// hyphens; not `[]` or `[%]`, which it refuses sent): matched without parsing.
    plain_names: Vec<String>,
    origins: Vec<Authority>,
}

impl HostPolicy {
    pub(crate) fn new(settings: &HttpSettings, bind: SocketAddr) -> HostPolicy {
        HostPolicy::of(&allowed_hosts(settings, bind), &allowed_origins(settings))
    }

    fn of(hosts: &[impl AsRef<str>], origins: &[impl AsRef<str>]) -> HostPolicy {
        let hosts: Vec<&str> = hosts.iter().map(AsRef::as_ref).collect();
        let parsed: Vec<Authority> = hosts.iter().filter_map(|h| parse_host(h, Port::Any)).collect();
        let plain =
            |host: &str| !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
        HostPolicy {
            any_host: hosts.iter().any(|host| host.trim() == ANY_HOST),
            plain_names: parsed
                .iter()
                .filter(|a| a.port == Port::Any && plain(&a.host))
                .map(|a| a.host.clone())
                .collect(),
            hosts: parsed,
            origins: origins.iter().filter_map(|o| parse_origin(o.as_ref())).collect(),
        }
    }

    /// Why a request with these headers is refused, if it is.
    fn refusal(&self, host: Option<&str>, origin: Option<&[u8]>) -> Option<&'static str> {
        if origin.is_none() && host.is_some_and(|host| self.plainly_accepted(host)) {
            return None;
        }
        let sent = host.and_then(|h| parse_host(h, Port::Default));
        let Some(sent) = sent else { return Some("the Host header is missing or malformed") };
        if !self.any_host && !self.hosts.iter().any(|allowed| matches(allowed, &sent)) {
            return Some("the Host header is not one this server answers to ([http] allowed_hosts)");
        }
        // No `Origin`: not a browser; the Host check is the defence.
        let origin = origin?;
        let origin = std::str::from_utf8(origin).ok().and_then(parse_origin);
        match origin {
            Some(origin) if self.origins.iter().any(|allowed| matches(allowed, &origin)) => None,
            _ => Some("the Origin header is not allowed ([http] allowed_origins)"),
        }
    }

    /// The common case, without parsing or allocating: `Host` is an accepted name that takes
    /// any port, spelt as configured (any case), with a port or none.
    fn plainly_accepted(&self, host: &str) -> bool {
        let name = match host.rsplit_once(':') {
            Some((name, port)) if !name.contains(':') && !port.is_empty() && port.len() <= 5 => {
                if !port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u16>().is_err() {
                    return false;
                }
                name
            }
            Some(_) => return false,
            None => host,
        };
        self.plain_names.iter().any(|plain| plain.eq_ignore_ascii_case(name))
    }

    /// The 403 for a request from a `Host` or `Origin` the server does not accept, before
    /// authentication or anything else runs.
    pub(crate) fn check(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Box<Response>> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        let host = host.or_else(|| uri.authority().map(|a| a.as_str()));
        let origin = headers.get(header::ORIGIN).map(|o| o.as_bytes());
        match self.refusal(host, origin) {
            None => Ok(()),
            Some(reason) => {
                tracing::debug!(reason, "refused a request by Host/Origin");
                Err(Box::new(super::body::refusal(StatusCode::FORBIDDEN, -32600, &format!("Forbidden: {reason}"))))
            }
        }
    }
}

/// [`HostPolicy::check`] as a middleware, for the routes beside `/mcp`.
pub(crate) async fn check(State(policy): State<Arc<HostPolicy>>, request: Request, next: Next) -> Response {
    match policy.check(request.headers(), request.uri()) {
        Ok(()) => next.run(request).await,
        Err(refused) => *refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(hosts: &[&str], origins: &[&str]) -> HostPolicy {
        HostPolicy::of(hosts, origins)
    }

    #[test]
    fn every_interface_needs_the_names_clients_use_and_star_accepts_any() {
        let bind: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let with = |hosts: &[&str]| HttpSettings {
            allowed_hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
            ..crate::config::Settings::default().http
        };
        let refused = startup_hosts(&with(&[]), bind).unwrap_err();
        assert!(refused.contains("[http] allowed_hosts") && refused.contains("[\"*\"]"), "{refused}");
        assert_eq!(
            startup_hosts(&with(&["mcp.example.com"]), bind).unwrap(),
            ["mcp.example.com", "localhost", "127.0.0.1", "::1"],
            "and the loopback names, for the container's own health check"
        );
        assert!(startup_hosts(&with(&["a b"]), bind).unwrap_err().contains("\"a b\""));
        // A specific address is reached by that address at least.
        assert_eq!(startup_hosts(&with(&[]), "10.0.0.5:8080".parse().unwrap()).unwrap(), ["10.0.0.5"]);
        let any = policy(&["*"], &[]);
        assert_eq!(any.refusal(Some("anything.example:9"), None), None);
        assert!(any.refusal(None, None).is_some(), "a Host is still required");
        assert!(any.refusal(Some("x.example"), Some(b"https://evil.example")).is_some(), "origins still apply");
    }

    #[test]
    fn hosts_and_origins_match_like_rmcps_policy() {
        let p = policy(
            &["localhost", "127.0.0.1", "::1", "api.example.com:443"],
            &["http://localhost:*", "https://app.example.com"],
        );
        for host in ["localhost", "LOCALHOST:8080", "127.0.0.1:1", "[::1]:80", "api.example.com:443"] {
            assert_eq!(p.refusal(Some(host), None), None, "{host}");
        }
        for host in ["evil.example", "api.example.com", "api.example.com:8443", "127.0.0.2"] {
            assert!(p.refusal(Some(host), None).unwrap().contains("Host"), "{host}");
        }
        assert!(p.refusal(None, None).unwrap().contains("missing"));
        // The shortcut accepts only what the parsing path accepts.
        for host in [
            "localhost",
            "LocalHost:8080",
            "127.0.0.1:65535",
            "localhost:+80",
            "localhost:99999",
            "localhost:",
            " localhost",
            "localhost@evil.example",
            "evil.example:80",
            "::1",
            "[::1]:80",
            "api.example.com:443",
        ] {
            if p.plainly_accepted(host) {
                let sent = parse_host(host, Port::Default).unwrap();
                assert!(p.hosts.iter().any(|allowed| matches(allowed, &sent)), "{host}");
            }
        }
        assert!(p.plainly_accepted("LocalHost:8080") && !p.plainly_accepted("localhost:+80"));
        assert!(!p.plainly_accepted("api.example.com:443"), "a name with a fixed port is parsed");
        // Configured names the parser reads differently from how they are sent.
        let odd = policy(&["[]", "[%]"], &[]);
        for host in ["", ":8080", "%", "%:80"] {
            assert!(!odd.plainly_accepted(host), "{host:?}");
        }
        assert_eq!(p.refusal(Some("localhost"), Some(b"http://localhost:5173")), None);
        assert_eq!(p.refusal(Some("localhost"), Some(b"https://app.example.com")), None);
        assert_eq!(p.refusal(Some("localhost"), Some(b"https://app.example.com:443")), None, "the default port, spelt");
        for origin in
            [&b"null"[..], b"https://app.example.com:8443", b"http://evil.example", b"https://localhost:1", b"\xff"]
        {
            assert!(p.refusal(Some("localhost"), Some(origin)).unwrap().contains("Origin"), "{origin:?}");
        }
    }
}
