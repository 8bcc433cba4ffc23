//! The rmcp baseline with 1000 tools, for the start-up benchmark: `startup-rmcp ADDR`.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{InitializeResult, ServerCapabilities};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool_handler, ServerHandler};
use trails_bench::rmcp_app::{work, BenchInput, BenchOutput};

#[derive(Clone)]
struct Baseline1000 {
    tool_router: ToolRouter<Self>,
}

include!(concat!(env!("OUT_DIR"), "/rmcp_tools_1000.rs"));

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Baseline1000 {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() {
    let addr: std::net::SocketAddr = std::env::args().nth(1).expect("usage: startup-rmcp ADDR").parse().unwrap();
    let server = Baseline1000 { tool_router: Baseline1000::tool_router() };
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    axum::serve(listener, axum::Router::new().route_service("/mcp", service)).await.unwrap();
}
