//! The MCP server: an rmcp `ServerHandler` over the catalog. One value per connection (stdio)
//! or per request/session (HTTP); creating one is an `Arc` clone.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, OnceLock};

use futures_util::FutureExt;
use tracing::Instrument;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::Value;

use crate::auth::{bearer, Caller};
use crate::catalog::{Catalog, Lookup};
use crate::config::{Settings, ValidationErrors};
use crate::ctx::{AppState, Ctx};
use crate::error::Error;
use crate::registry::{call_tool, Registry};
use crate::wire;

/// The protocol revisions this server implements.
pub const PROTOCOL_VERSIONS: &[ProtocolVersion] =
    &[ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

/// Most sessions kept for `list_changed` notifications; the oldest are forgotten first.
const MAX_NOTIFIED_SESSIONS: usize = 1024;

/// Everything built once per process and shared by every connection.
pub struct Shared {
    pub registry: Registry,
    pub catalog: Catalog,
    pub settings: Settings,
    pub state: Option<AppState>,
    pub name: String,
    pub version: String,
    /// The capability manifest, rendered once.
    pub manifest: String,
    sessions: Mutex<Vec<Peer<RoleServer>>>,
}

impl Shared {
    pub fn new(registry: Registry, settings: Settings, state: Option<AppState>, name: String, version: String) -> Result<Shared, String> {
        let catalog = Catalog::new(&registry, settings.production)?;
        let manifest = crate::manifest::render(&registry);
        Ok(Shared { registry, catalog, settings, state, name, version, manifest, sessions: Mutex::default() })
    }

    fn remember_session(&self, peer: Peer<RoleServer>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.retain(|p| !p.is_transport_closed());
        if sessions.len() >= MAX_NOTIFIED_SESSIONS {
            sessions.remove(0);
        }
        sessions.push(peer);
    }

    /// Enable or disable a tool at run time and tell every connected session.
    pub async fn set_tool_enabled(&self, name: &str, enabled: bool) -> Result<bool, String> {
        let changed = self.catalog.set_enabled(name, enabled)?;
        if changed {
            tracing::info!(tool = name, enabled, "tool availability changed");
            let peers: Vec<Peer<RoleServer>> = self.sessions.lock().unwrap_or_else(|p| p.into_inner()).clone();
            for peer in peers.iter().filter(|p| !p.is_transport_closed()) {
                if let Err(error) = peer.notify_tool_list_changed().await {
                    tracing::debug!(%error, "could not notify a session of list_changed");
                }
            }
        }
        Ok(changed)
    }
}

/// A handle handlers get through [`Ctx::control`] to change what the server serves.
#[derive(Clone)]
pub struct Control(Arc<Shared>);

impl Control {
    pub async fn set_tool_enabled(&self, name: &str, enabled: bool) -> Result<bool, String> {
        self.0.set_tool_enabled(name, enabled).await
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// One client per process; identity fixed at `initialize` (or per request on 2026-07-28).
    Stdio,
    /// Identity per request, from the `Authorization` header (see `http.rs`).
    Http,
}

#[derive(Clone)]
pub struct TrailsServer {
    shared: Arc<Shared>,
    transport: Transport,
    session_caller: Arc<OnceLock<Caller>>,
}

impl TrailsServer {
    pub fn new(shared: Arc<Shared>, transport: Transport) -> TrailsServer {
        TrailsServer { shared, transport, session_caller: Arc::default() }
    }

    /// The stdio caller for a presented credential: with `TRAILS_MCP_TOKEN` set it must match;
    /// without it the caller is anonymous (runtime scope only).
    fn stdio_caller(&self, presented: Option<&str>) -> Result<Caller, ErrorData> {
        let settings = &self.shared.settings;
        match &settings.stdio_token {
            None => Ok(Caller::anonymous(settings.process_scopes)),
            Some(table) => match presented.and_then(bearer).and_then(|token| table.verify(token)) {
                Some(entry) => Ok(Caller { name: Some(entry.name.clone()), scopes: entry.scopes }),
                None => Err(wire::authentication_failed()),
            },
        }
    }

    fn caller(&self, context: &RequestContext<RoleServer>) -> Result<Caller, ErrorData> {
        match self.transport {
            Transport::Stdio => match self.session_caller.get() {
                Some(caller) => Ok(caller.clone()),
                None => self.stdio_caller(authorization_in(&context.meta.0)),
            },
            Transport::Http => Ok(context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Caller>())
                .cloned()
                .unwrap_or_else(|| Caller::anonymous(self.shared.settings.process_scopes))),
        }
    }

    async fn dispatch(&self, request: CallToolRequestParams, caller: Caller) -> Result<CallToolResult, ErrorData> {
        let settings = &self.shared.settings;
        let name = request.name.as_ref();
        let tool = match self.shared.catalog.lookup(name, caller.scopes) {
            Lookup::Found(tool) => tool,
            Lookup::Unknown => return Err(wire::unknown_tool(name)),
            Lookup::Denied(tool) => {
                return Err(if settings.mask_denied {
                    wire::unknown_tool(name)
                } else if !caller.is_authenticated() {
                    wire::authentication_required(name, tool.entry.scope)
                } else {
                    wire::scope_denied(name, tool.entry.scope, &caller)
                });
            }
        };
        let trace_id = uuid::Uuid::new_v4().simple().to_string();
        let span = tracing::info_span!("tools/call", tool = name, trace_id = %trace_id, caller = caller.name.as_deref().unwrap_or("anonymous"));
        let mut ctx = Ctx::new(trace_id.clone(), caller.name.clone(), caller.scopes.iter().collect())
            .with_control(Control(self.shared.clone()));
        if let Some(state) = &self.shared.state {
            ctx = ctx.with_state(state.clone());
        }
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        // A panicking handler fails its own call only.
        let outcome = AssertUnwindSafe(call_tool(tool.entry, ctx, arguments)).catch_unwind().instrument(span.clone()).await;
        let _in_span = span.enter(); // no await below: safe to hold
        match outcome {
            Ok(Ok(output)) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(output.text)]);
                result.structured_content = output.structured;
                Ok(result)
            }
            Ok(Err(Error::Validation { errors, total })) => match settings.validation_errors {
                ValidationErrors::Jsonrpc => Err(wire::validation_failed(&errors, total)),
                ValidationErrors::ToolResult => {
                    let mut body = wire::validation_data(&errors, total);
                    body["error"] = Value::String(format!("validation failed on {total} field(s)"));
                    Ok(CallToolResult::structured_error(body))
                }
            },
            Ok(Err(Error::UnknownTool(other))) => Err(wire::unknown_tool(&other)),
            Ok(Err(Error::PolicyDenied(reason))) => Err(wire::policy_denied(&reason)),
            Ok(Err(Error::BudgetExceeded(reason))) => Err(wire::budget_exceeded(&reason)),
            Ok(Err(Error::Internal(detail))) => {
                tracing::error!(%detail, "handler failed");
                Err(wire::internal(&trace_id))
            }
            Err(panic) => {
                let detail = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string panic".to_owned());
                tracing::error!(%detail, "handler panicked");
                Err(wire::internal(&trace_id))
            }
        }
    }
}

/// `_meta.authorization` as a string (`"Bearer …"` or the bare token).
fn authorization_in(meta: &serde_json::Map<String, Value>) -> Option<&str> {
    meta.get("authorization").and_then(Value::as_str)
}

impl ServerHandler for TrailsServer {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new(self.shared.name.clone(), self.shared.version.clone()))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .with_instructions(
                "Tools carry `_meta.trails` (kind, scope, manifest_uri). Validation failures are JSON-RPC -32602 \
                 errors whose data.fields lists every rejected field.",
            )
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(PROTOCOL_VERSIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if self.transport == Transport::Stdio {
            // rmcp moves a request's `_meta` into the context; accept it in either place.
            let presented =
                authorization_in(&context.meta.0).or_else(|| request.meta.as_ref().and_then(|m| authorization_in(&m.0)));
            let caller = self.stdio_caller(presented)?;
            tracing::info!(caller = caller.name.as_deref().unwrap_or("anonymous"), scopes = ?caller.scopes, "stdio client initialized");
            let _ = self.session_caller.set(caller);
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    /// Lets rmcp check SEP-2243 `Mcp-Param-*` headers against the declared input schema.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        match self.shared.catalog.lookup(name, crate::auth::ScopeSet::up_to(crate::scope::Scope::Dev)) {
            Lookup::Found(tool) => Some(tool.tool.clone()),
            _ => None,
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.shared.remember_session(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.caller(&context)?;
        Ok(ListToolsResult::with_all_items(self.shared.catalog.list(caller.scopes).as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller(&context)?;
        self.dispatch(request, caller).await.map(CallToolResponse::Complete)
    }
}
