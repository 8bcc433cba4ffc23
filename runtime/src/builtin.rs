//! Meta capabilities every Trails app ships.

use crate::{meta_capability, shape, Ctx, Error, FieldCode, FieldError, Result};

/// Liveness answer of `trails.meta.ping`.
#[shape(iri = "https://w3id.org/trails/meta#Pong")]
pub struct Pong {
    /// Always `pong`.
    pub reply: String,
    /// The `message` argument, echoed back when one was given.
    pub echo: Option<String>,
    /// Trace id of this call, to correlate with server logs.
    pub trace_id: String,
}

/// Check that the server is up and answering; echoes `message` back.
#[meta_capability(op = "ping", scope = "runtime", version = "1.0.0", side_effects(none), idempotent)]
async fn ping(
    ctx: &Ctx,
    /// Optional text to echo back.
    #[predicate(max_length = 200)]
    message: Option<String>,
) -> Result<Pong> {
    Ok(Pong { reply: "pong".to_owned(), echo: message, trace_id: ctx.trace_id().to_owned() })
}

/// What `trails.meta.tools.enable` did.
#[shape(iri = "https://w3id.org/trails/meta#ToolSwitch")]
pub struct ToolSwitch {
    pub tool: String,
    pub enabled: bool,
    /// False when the tool already was in the requested state.
    pub changed: bool,
}

/// Enable or disable a tool at run time; connected sessions receive `notifications/tools/list_changed`.
#[meta_capability(namespace = "tools", op = "enable", scope = "builder", version = "1.0.0", side_effects(overwrites), idempotent)]
async fn enable_tool(
    ctx: &Ctx,
    /// MCP name of the tool to switch.
    #[predicate(min_length = 1, max_length = 128)]
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
    if tool == "trails_meta_tools_enable" && !enabled {
        return Err(reject("trails_meta_tools_enable cannot disable itself".into()));
    }
    let control = ctx.control().ok_or_else(|| Error::internal("enable_tool called outside a running server"))?;
    let changed = control.set_tool_enabled(&tool, enabled).await.map_err(reject)?;
    Ok(ToolSwitch { tool, enabled, changed })
}
