//! Clients the tests talk to a served app with over HTTP: raw JSON-RPC (what a hand-written
//! client sends, so a test controls every header and byte) and rmcp's own client (what an SDK
//! does: the handshake, sessions, notifications). In process, without sockets, the tests use
//! the public `trails::testing::Client`.

use std::net::SocketAddr;

use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorData};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{Peer, RoleClient, ServiceExt};
use serde_json::{json, Value};

/// `body` POSTed to `/mcp` as a 2025-06-18 client without a session sends it (with `token` as its
/// bearer token); the JSON answer.
pub async fn post(addr: SocketAddr, token: Option<&str>, body: &Value) -> Value {
    post_with(addr, token, &[], body).await.answer
}

/// What the server answered a [`post_with`]: the status, `WWW-Authenticate` and the JSON body.
#[derive(Debug)]
pub struct Answered {
    pub status: u16,
    /// The `WWW-Authenticate` value; empty when there is none.
    pub challenge: String,
    pub answer: Value,
}

/// [`post`] with more request headers (`traceparent`, …), and what the HTTP layer said besides
/// the body.
pub async fn post_with(addr: SocketAddr, token: Option<&str>, headers: &[(&str, &str)], body: &Value) -> Answered {
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap_or_default().to_owned())
        .unwrap_or_default();
    let text = response.text().await.expect("a body");
    let answer = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    Answered { status, challenge, answer }
}

/// `tools/call` of `tool` with `arguments`, POSTed as [`post`] does; the whole JSON-RPC answer.
pub async fn call_tool(addr: SocketAddr, token: Option<&str>, tool: &str, arguments: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": { "name": tool, "arguments": arguments } });
    post(addr, token, &body).await
}

/// An rmcp client session over Streamable HTTP (with `token` as its bearer token).
pub async fn connect(addr: SocketAddr, token: Option<&str>) -> RunningService<RoleClient, ()> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("the client connects")
}

/// `tools/call` through an rmcp client (any handler: a `RunningService` derefs to its peer): the
/// result, or the JSON-RPC error (a transport failure panics).
pub async fn call(client: &Peer<RoleClient>, tool: &str, arguments: Value) -> Result<CallToolResult, ErrorData> {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = arguments.as_object().cloned();
    match client.call_tool(params).await {
        Ok(result) => Ok(result),
        Err(ServiceError::McpError(error)) => Err(error),
        Err(other) => panic!("transport failure calling {tool}: {other}"),
    }
}
