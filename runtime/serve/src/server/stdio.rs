//! [`Server`] over stdin/stdout.

use rmcp::ServiceExt;

use super::{ServeError, Server};
use crate::{mcp::TrailsServer, method::Transport};

impl Server {
    /// Serve one MCP client on stdin/stdout until it closes stdin (or stdout). Every line gets
    /// an answer: one that is not a well-formed message is answered with a JSON-RPC error, and
    /// a line is at most `[http] max_body_bytes` long.
    pub async fn serve_stdio(&self) -> Result<(), ServeError> {
        tracing::info!("serving MCP on stdio");
        let _parts = self.start_parts();
        let server = TrailsServer::new(self.shared.clone(), Transport::Stdio);
        let max_line = self.shared.http.max_body_bytes;
        let guarded = crate::mcp::stdio::guarded(tokio::io::stdin(), tokio::io::stdout(), max_line);
        let (stdout_closed, written) = (guarded.stdout_closed, guarded.written);
        let serving = async {
            match server.serve(guarded.rmcp).await {
                Ok(running) => {
                    let cancel = running.cancellation_token();
                    tokio::spawn(async move {
                        stdout_closed.cancelled().await;
                        cancel.cancel();
                    });
                    running.waiting().await.map(drop).map_err(|e| ServeError::Stdio(Box::new(e)))
                }
                Err(e) => Err(ServeError::Stdio(Box::new(e))),
            }
        };
        let served = tokio::select! {
            served = serving => served,
            never = crate::memory::give_back_when_quiet() => match never {},
        };
        // rmcp's side is dropped by now: let what it wrote last reach stdout.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), written).await;
        served
    }
}
