//! `trails.meta.tools.enable`: switch a tool on or off at run time.

use trails_core::{Ctx, Error, Result};
use trails_core::{FieldCode, FieldError};
use trails_macros::{meta_capability, shape};

/// What `trails.meta.tools.enable` did.
#[shape(iri = "https://w3id.org/trails/meta#ToolSwitch")]
pub(crate) struct ToolSwitch {
    /// The tool's MCP name.
    pub tool: String,
    /// Its state now.
    pub enabled: bool,
    /// False when the tool already was in the requested state.
    pub changed: bool,
}

/// Enable or disable a tool at run time; connected sessions receive `notifications/tools/list_changed`.
#[meta_capability(
    namespace = "tools",
    op = "enable",
    scope = "builder",
    version = "1.0.0",
    side_effects(overwrites),
    idempotent
)]
async fn enable_tool(
    ctx: &Ctx,
    /// The tool to switch: its name (`requirements_search`) or id (`requirements.search`).
    #[predicate(min_length = 1, max_length = 64)]
    tool: String,
    /// `false` hides the tool from `tools/list` and rejects calls to it as unknown.
    enabled: bool,
) -> Result<ToolSwitch> {
    let reject = |message: String| {
        Error::validation(vec![FieldError {
            field: "tool".into(),
            code: FieldCode::OneOf,
            message,
            value: serde_json::json!(tool),
            constraint: serde_json::json!("the name of a served tool other than trails_meta_tools_enable"),
        }])
    };
    if matches!(tool.as_str(), "trails_meta_tools_enable" | "trails.meta.tools.enable") && !enabled {
        return Err(reject("trails_meta_tools_enable cannot disable itself".into()));
    }
    let control = ctx
        .extension::<crate::state::Control>()
        .ok_or_else(|| Error::internal("enable_tool called outside a running server"))?;
    let changed = control.set_tool_enabled(&tool, enabled).await.map_err(|e| reject(e.to_string()))?;
    Ok(ToolSwitch { tool, enabled, changed })
}
