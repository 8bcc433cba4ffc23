//! Why `tools/list` costs more for Trails than for rmcp: clone + serialise the listing the way
//! rmcp's handler must, per request. `cargo run --release -p trails-bench --example list_micro`.

use rmcp::model::{ListToolsResult, Tool};
use std::time::Instant;
fn main() {
    trails_bench::trails_app::link();
    let registry = trails::Registry::collect().unwrap();
    let tools: Vec<Tool> = registry
        .tools()
        .map(|e| {
            let mut t: Tool = serde_json::from_str(e.descriptor()).unwrap();
            t.name = e.name().into();
            t.description = Some(e.description().into());
            t
        })
        .collect();
    let baseline = trails_bench::rmcp_app::Baseline::new();
    let rtools = baseline.router().list_all();
    let without_meta: Vec<Tool> = tools
        .iter()
        .cloned()
        .map(|mut t| {
            t.meta = None;
            t
        })
        .collect();
    for (label, list) in [("trails", tools.clone()), ("trails without _meta", without_meta), ("rmcp", rtools.clone())] {
        let n = 2000;
        let t = Instant::now();
        let mut bytes = 0;
        for _ in 0..n {
            let r = ListToolsResult::with_all_items(list.clone());
            bytes += serde_json::to_vec(&r).unwrap().len();
        }
        let total = t.elapsed();
        let t2 = Instant::now();
        for _ in 0..n {
            std::hint::black_box(list.clone());
        }
        println!(
            "{label}: {} tools, {:.1} µs per clone+serialize, {:.1} µs clone only, {} bytes",
            list.len(),
            total.as_secs_f64() * 1e6 / n as f64,
            t2.elapsed().as_secs_f64() * 1e6 / n as f64,
            bytes / n
        );
    }
}
