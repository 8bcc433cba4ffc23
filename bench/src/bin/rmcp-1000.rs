//! The rmcp baseline with 1000 tools, for start-up: `rmcp-1000 ADDR`.

fn main() {
    trails_bench::rmcp_app::serve(trails_bench::rmcp_app::Baseline::tools_1000);
}
