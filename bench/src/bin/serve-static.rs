//! The physical limit of this HTTP stack: `serve-static ADDR LIST_FILE CALL_FILE` answers a POST to
//! `/mcp` whose body names `tools/list` with the bytes in LIST_FILE and any other with CALL_FILE
//! (both captured from Trails by `mcp-bench`), on the same hyper, axum and tokio as the servers
//! it bounds. It reads every body, as a server must, and parses nothing.

use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::routing::post;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, addr, list, call] = args.as_slice() else {
        panic!("usage: serve-static ADDR LIST_FILE CALL_FILE");
    };
    let addr: std::net::SocketAddr = addr.parse().expect("ADDR");
    let list = Bytes::from(std::fs::read(list).expect("LIST_FILE"));
    let call = Bytes::from(std::fs::read(call).expect("CALL_FILE"));
    let answer = move |body: Bytes| {
        let (list, call) = (list.clone(), call.clone());
        async move {
            let is_list = body.windows(12).any(|w| w == b"\"tools/list\"");
            ([(CONTENT_TYPE, "application/json")], if is_list { list } else { call })
        }
    };
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    runtime.block_on(async move {
        let listener = trails_bench::listener(addr).await;
        axum::serve(listener, axum::Router::new().route("/mcp", post(answer))).await.expect("serve");
    });
}
