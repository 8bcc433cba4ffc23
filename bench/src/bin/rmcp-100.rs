//! The rmcp baseline with 100 tools: `rmcp-100 ADDR`.

fn main() {
    trails_bench::rmcp_app::serve(trails_bench::rmcp_app::Baseline::tools_100);
}
