//! Generates the benchmark apps: N Trails capabilities and N equivalent rmcp tools, for
//! N = 100 (throughput) and N = 1000 (start-up).

use std::fmt::Write as _;
use std::path::Path;

fn trails_caps(n: usize, prefix: &str) -> String {
    let mut out = String::new();
    for i in 0..n {
        let _ = writeln!(
            out,
            "/// Benchmark tool {i}: echo a query.\n\
             #[::trails::capability(id = \"{prefix}.tool{i}\", version = \"1.0.0\", side_effects(none), idempotent)]\n\
             pub async fn tool{i}(input: crate::trails_app::BenchInput) -> ::trails::Result<crate::trails_app::BenchOutput> {{ Ok(crate::trails_app::work(input)) }}\n"
        );
    }
    out
}

fn rmcp_tools(n: usize, prefix: &str, ty: &str) -> String {
    let mut out = format!("#[::rmcp::tool_router]\nimpl {ty} {{\n");
    for i in 0..n {
        let _ = writeln!(
            out,
            "    /// Benchmark tool {i}: echo a query.\n\
             #[::rmcp::tool(name = \"{prefix}.tool{i}\", annotations(read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false))]\n\
             async fn tool{i}(&self, ::rmcp::handler::server::wrapper::Parameters(input): ::rmcp::handler::server::wrapper::Parameters<BenchInput>) -> Result<::rmcp::Json<BenchOutput>, ::rmcp::ErrorData> {{ Ok(::rmcp::Json(work(input))) }}\n"
        );
    }
    out.push_str("}\n");
    out
}

fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    let out = Path::new(&out);
    std::fs::write(out.join("trails_caps_100.rs"), trails_caps(100, "bench")).unwrap();
    std::fs::write(out.join("rmcp_tools_100.rs"), rmcp_tools(100, "bench", "Baseline")).unwrap();
    std::fs::write(out.join("trails_caps_1000.rs"), trails_caps(1000, "startup")).unwrap();
    std::fs::write(out.join("rmcp_tools_1000.rs"), rmcp_tools(1000, "startup", "Baseline1000")).unwrap();
    println!("cargo:rerun-if-changed=build.rs");
}
