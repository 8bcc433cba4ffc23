//! The two benchmark apps, with the same tools: Trails (macros, generated validators) and a
//! plain rmcp server (`#[tool_router]`, schemars constraints, router built once and cloned).

pub mod trails_app {
    use trails::shape;

    #[shape(iri = "https://example.org/bench#Input")]
    pub struct BenchInput {
        /// Text to echo.
        #[predicate(min_length = 1, max_length = 200)]
        pub query: String,
        /// Repetitions (1–100).
        #[predicate(min_value = 1, max_value = 100)]
        pub limit: Option<u32>,
        #[predicate(one_of = ["asc", "desc"])]
        pub order: Option<String>,
    }

    #[shape(iri = "https://example.org/bench#Output")]
    pub struct BenchOutput {
        pub echo: String,
        pub count: u32,
    }

    pub fn work(input: BenchInput) -> BenchOutput {
        BenchOutput { echo: input.query, count: input.limit.unwrap_or(1) }
    }

    /// The 100-capability app.
    pub mod caps {
        include!(concat!(env!("OUT_DIR"), "/trails_caps_100.rs"));
    }

    /// Keeps this crate's linker-collected tables in the binaries.
    pub fn link() {}
}

pub mod rmcp_app {
    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::model::{InitializeResult, ServerCapabilities};
    use rmcp::{tool_handler, ServerHandler};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct BenchInput {
        /// Text to echo.
        #[schemars(length(min = 1, max = 200))]
        pub query: String,
        /// Repetitions (1–100).
        #[schemars(range(min = 1, max = 100))]
        pub limit: Option<u32>,
        pub order: Option<Order>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum Order {
        Asc,
        Desc,
    }

    #[derive(Serialize, JsonSchema)]
    pub struct BenchOutput {
        pub echo: String,
        pub count: u32,
    }

    pub fn work(input: BenchInput) -> BenchOutput {
        BenchOutput { echo: input.query, count: input.limit.unwrap_or(1) }
    }

    #[derive(Clone)]
    pub struct Baseline {
        tool_router: ToolRouter<Self>,
    }

    impl Baseline {
        pub fn new() -> Self {
            Baseline { tool_router: Self::tool_router() }
        }
    }

    impl Baseline {
        /// The router, for inspection.
        pub fn router(&self) -> &ToolRouter<Self> {
            &self.tool_router
        }
    }

    impl Default for Baseline {
        fn default() -> Self {
            Self::new()
        }
    }

    include!(concat!(env!("OUT_DIR"), "/rmcp_tools_100.rs"));

    #[tool_handler(router = self.tool_router)]
    impl ServerHandler for Baseline {
        fn get_info(&self) -> InitializeResult {
            InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
        }
    }
}
