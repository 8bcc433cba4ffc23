//! The MCP server: an rmcp `ServerHandler` over the catalog. One value per connection (stdio)
//! or per request/session (HTTP); creating one is an `Arc` clone.

use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
    GetPromptResponse, Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, RequestMetaObject, ServerCapabilities, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::subscribe::{self, Activity, SessionSubscriptions};
use crate::method::{self, Transport, PROTOCOL_VERSIONS};
use crate::state::Shared;
use crate::wire::errors;
use crate::wire::trace::TraceParent;
use trails_core::auth::{bearer, Caller, Scope, ScopeSet};
use trails_core::pipeline::Lookup;
use trails_core::LogLevel;

/// What a 2025-* HTTP session's handler shares with the session guard in front of it, which
/// answers some of the session's requests without it (`http/hot/`).
#[derive(Default)]
pub(crate) struct SessionLink {
    /// When the client last sent anything.
    pub(crate) activity: Arc<Activity>,
    /// The protocol version `initialize` agreed on (rmcp puts the same in the peer info the
    /// handler reads; the guard refuses a second `initialize` that would change it there).
    pub(crate) version: OnceLock<String>,
    /// What the client said of itself at `initialize` (what a handler reads in `ctx.request()`).
    pub(crate) client: OnceLock<Arc<InitializeRequestParams>>,
    /// The least severe log message the client asked for (`logging/setLevel`; none: no messages).
    pub(crate) log_level: std::sync::Mutex<Option<LogLevel>>,
}

impl SessionLink {
    /// The level `logging/setLevel` set, if any.
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        *self.log_level.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What one session (one stdio connection, one 2025-* HTTP session) keeps.
#[derive(Default)]
struct Session {
    /// The stdio caller, fixed at `initialize`.
    caller: OnceLock<Caller>,
    /// Its notifications (tool-list changes, `resources/subscribe` subscriptions).
    subscriptions: SessionSubscriptions,
    /// What it shares with the HTTP session guard in front of it (set at `initialize`).
    link: OnceLock<Arc<SessionLink>>,
    /// When `initialize` opened it, and the version it asked for (`mcp.server.session.duration`).
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    opened: OnceLock<(std::time::Instant, String)>,
}

#[cfg(feature = "otel")]
impl Drop for Session {
    fn drop(&mut self) {
        // rmcp drops a session's handler when the session ends, however it ends.
        if let Some((opened, version)) = self.opened.get() {
            crate::otel::session_done(opened.elapsed(), Some(version));
        }
    }
}

/// The rmcp handler: one per session (a new one per stateless HTTP request).
#[derive(Clone)]
pub(crate) struct TrailsServer {
    shared: Arc<Shared>,
    transport: Transport,
    session: Arc<Session>,
}

impl TrailsServer {
    pub(crate) fn new(shared: Arc<Shared>, transport: Transport) -> TrailsServer {
        TrailsServer { shared, transport, session: Arc::default() }
    }

    /// The stdio caller for a presented credential: with `TRAILS_MCP_TOKEN` set it must match;
    /// without it the caller is anonymous (runtime scope only).
    fn stdio_caller(&self, presented: Option<&str>) -> Result<Caller, ErrorData> {
        let settings = &self.shared.mcp;
        match &settings.stdio_token {
            None => Ok(Caller::anonymous(settings.process_scopes)),
            Some(table) => match presented.and_then(bearer).and_then(|token| table.verify(token)) {
                Some(entry) => Ok(Caller { name: Some(entry.name.clone()), client: None, scopes: entry.scopes }),
                None => Err(errors::authentication_failed()),
            },
        }
    }

    fn activity(&self) -> &Arc<Activity> {
        &self.session.link.get_or_init(Arc::default).activity
    }

    fn caller(&self, context: &RequestContext<RoleServer>) -> Result<Caller, ErrorData> {
        self.activity().touch();
        match self.transport {
            Transport::Stdio => match self.session.caller.get() {
                Some(caller) => Ok(caller.clone()),
                None => self.stdio_caller(authorization_in(&context.meta.0)),
            },
            Transport::Http => Ok(context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Caller>())
                .cloned()
                .unwrap_or_else(|| Caller::anonymous(self.shared.mcp.process_scopes))),
        }
    }
}

/// A request as rmcp's context holds it, for the method table. `params_meta`: the `_meta` left
/// in the params (rmcp moves it into the context).
fn request(
    context: &mut RequestContext<RoleServer>,
    params_meta: Option<RequestMetaObject>,
    caller: Caller,
    transport: Transport,
    session_level: Option<LogLevel>,
) -> method::Request {
    let parts = context.extensions.get::<http::request::Parts>();
    let headers = parts.map(|parts| &parts.headers);
    let header = |name| headers.and_then(|headers| headers.get(name)).and_then(|value| value.to_str().ok());
    let agreed = context.peer.peer_info().map(|info| info.protocol_version.as_str().to_owned());
    let meta_version = context.meta.protocol_version();
    let version = method::version(
        meta_version.as_ref().map(ProtocolVersion::as_str),
        header("mcp-protocol-version"),
        agreed.as_deref(),
    )
    .map(str::to_owned);
    let session = header("mcp-session-id").map(str::to_owned);
    let header_trace = headers.and_then(TraceParent::from_headers);
    // Both, the context's winning (over the wire rmcp moves the params' there; in process both
    // may hold some).
    let mut meta = params_meta.map(|meta| meta.0 .0).unwrap_or_default();
    meta.extend(std::mem::take(&mut context.meta.0 .0));
    let client = context.peer.peer_info();
    // A 2026-07-28 request names its own level; a session's is the one `logging/setLevel` set.
    let log_level = match meta.get(method::LOG_LEVEL) {
        Some(level) => serde_json::from_value(level.clone()).ok(),
        None => session_level,
    };
    method::Request {
        id: context.id.clone(),
        caller,
        meta,
        header_trace,
        session,
        version,
        transport,
        client,
        // rmcp sends what the handler notifies on the request's own stream (stdio, its SSE
        // answer), and cancels the token on `notifications/cancelled` or a hang-up.
        peer: Some(context.peer.clone()),
        cancel: Some(context.ct.clone()),
        log_level,
    }
}

/// `_meta.authorization` as a string (`"Bearer …"` or the bare token).
fn authorization_in(meta: &serde_json::Map<String, Value>) -> Option<&str> {
    meta.get("authorization").and_then(Value::as_str)
}

impl ServerHandler for TrailsServer {
    fn get_info(&self) -> InitializeResult {
        // Every app has resources (the schema, stats, the manifest); only the knowledge graph's
        // change on their own.
        let mut capabilities = match self.shared.resources.kg {
            Some(_) => ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_completions()
                .build(),
            None => ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_resources().build(),
        };
        // Log messages a handler sends (`ctx.log`), for a session that sets a level.
        capabilities.logging = Some(Default::default());
        // (A prompt list does not change while the server runs: no `listChanged`.)
        if !self.shared.prompts.is_empty() {
            capabilities.prompts = Some(rmcp::model::PromptsCapability::default());
        }
        // What completes: the knowledge graph's templates (above), prompts' and the app's
        // templates' variables.
        if !self.shared.prompts.is_empty() || !self.shared.own_resources.templates.is_empty() {
            capabilities.completions.get_or_insert_with(Default::default);
        }
        // Tasks (the Tasks extension), where a capability may run as one.
        if self.shared.tasks.is_some() {
            let extensions = capabilities.extensions.get_or_insert_with(Default::default);
            extensions.insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), Default::default());
        }
        // Skills ride on resources (declared above).
        if self.shared.skills.is_some() {
            let extensions = capabilities.extensions.get_or_insert_with(Default::default);
            extensions.insert(rmcp::model::SKILLS_EXTENSION_ID.to_owned(), Default::default());
        }
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new(self.shared.name.clone(), self.shared.version.clone()))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .with_instructions(self.shared.instructions.clone())
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
            let presented = authorization_in(&context.meta.0)
                .or_else(|| request.meta.as_ref().and_then(|m| authorization_in(&m.0)));
            let caller = self.stdio_caller(presented)?;
            tracing::info!(caller = caller.name.as_deref().unwrap_or("anonymous"), scopes = ?caller.scopes, "stdio client initialized");
            let _ = self.session.caller.set(caller);
        }
        let _ = self.session.opened.set((std::time::Instant::now(), request.protocol_version.to_string()));
        let parts = context.extensions.get::<http::request::Parts>();
        if let Some(link) = parts.and_then(|parts| parts.extensions.get::<Arc<SessionLink>>()) {
            let _ = self.session.link.set(link.clone());
        }
        context.peer.set_peer_info(request.clone());
        let agreed = self.negotiate_initialize(&request)?;
        // (rmcp negotiates again from this answer, to the same version.)
        let link = self.session.link.get_or_init(Arc::default);
        let _ = link.version.set(agreed.protocol_version.as_str().to_owned());
        let _ = link.client.set(Arc::new(request.clone()));
        Ok(agreed)
    }

    /// Lets rmcp check SEP-2243 `Mcp-Param-*` headers against the declared input schema.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        match self.shared.pipeline.catalog.lookup(name, ScopeSet::up_to(Scope::Dev)) {
            Lookup::Found(tool) => Some(self.shared.listings.tool(tool.entry).clone()),
            _ => None,
        }
    }

    /// From here on the session hears about tool-list changes (stateless HTTP requests have
    /// no later to hear it in).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.transport == Transport::Stdio || self.in_session(&context.extensions) {
            if let Err(error) = self.session.subscriptions.open(&self.shared, &context.peer, self.idle_limit()) {
                tracing::warn!(%error.message, "a session will not hear about tool-list changes");
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.caller(&context)?;
        Ok(method::list_tools(&self.shared, &request(&mut context, None, caller, self.transport, self.log_level())))
    }

    async fn call_tool(
        &self,
        mut params: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller(&context)?;
        let asked = request(&mut context, params.meta.take(), caller, self.transport, self.log_level());
        method::call_tool(&self.shared, asked, params).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let caller = self.caller(&context)?;
        Ok(method::list_resources(&self.shared, &request(&mut context, None, caller, self.transport, self.log_level())))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let caller = self.caller(&context)?;
        Ok(method::list_templates(&self.shared, &request(&mut context, None, caller, self.transport, self.log_level())))
    }

    async fn complete(
        &self,
        mut params: CompleteRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let caller = self.caller(&context)?;
        let asked = request(&mut context, params.meta.take(), caller, self.transport, self.log_level());
        method::complete(&self.shared, &asked, params).await
    }

    // 2025-* sessions' logging (2026-07-28 names a level per request): rmcp refuses the method
    // itself for 2026-07-28 peers.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.caller(&context)?;
        let level: LogLevel = serde_json::to_value(request.level)
            .and_then(serde_json::from_value)
            .map_err(|error| ErrorData::invalid_params(format!("not a log level: {error}"), None))?;
        let link = self.session.link.get_or_init(Arc::default);
        *link.log_level.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(level);
        Ok(())
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, ErrorData> {
        self.caller(&context)?;
        method::list_skills(&self.shared)
    }

    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, ErrorData> {
        self.caller(&context)?;
        method::get_skill(&self.shared, &request)
    }

    async fn get_task(
        &self,
        mut params: rmcp::model::GetTaskParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let caller = self.caller(&context)?;
        let asked = request(&mut context, params.meta.take(), caller, self.transport, self.log_level());
        method::get_task(&self.shared, &asked, params).await
    }

    async fn update_task(
        &self,
        mut params: rmcp::model::UpdateTaskParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.caller(&context)?;
        let asked = request(&mut context, params.meta.take(), caller, self.transport, self.log_level());
        method::update_task(&self.shared, &asked, params).await
    }

    async fn cancel_task(
        &self,
        mut params: rmcp::model::CancelTaskParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.caller(&context)?;
        let asked = request(&mut context, params.meta.take(), caller, self.transport, self.log_level());
        method::cancel_task(&self.shared, &asked, params).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let caller = self.caller(&context)?;
        Ok(method::list_prompts(&self.shared, &request(&mut context, None, caller, self.transport, self.log_level())))
    }

    async fn get_prompt(
        &self,
        mut params: GetPromptRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let caller = self.caller(&context)?;
        let asked = request(&mut context, params.meta.take(), caller, self.transport, self.log_level());
        method::get_prompt(&self.shared, asked, params).await
    }

    async fn read_resource(
        &self,
        mut params: ReadResourceRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let caller = self.caller(&context)?;
        let asked = request(&mut context, params.meta.take(), caller, self.transport, self.log_level());
        method::read_resource(&self.shared, &asked, params).await
    }

    // Subscriptions (see `subscribe`): 2025-* sessions subscribe per URI; 2026-07-28 clients
    // listen. rmcp marks the legacy pair deprecated; it is what those protocol versions have.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.caller(&context)?;
        if self.transport == Transport::Http && !self.in_session(&context.extensions) {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::INVALID_REQUEST,
                "resources/subscribe needs a session to deliver updates on: connect without disabling sessions \
                 (`[http] sessions`), or use subscriptions/listen (protocol 2026-07-28)",
                None,
            ));
        }
        self.session.subscriptions.subscribe(&self.shared, &context.peer, self.idle_limit(), &caller, &request.uri)
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.caller(&context)?;
        self.session.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    /// Tool-list changes and the resource URIs that can be watched (rmcp drops the latter when no
    /// knowledge graph advertises `subscribe`). A URI nobody can watch — a page, the schema,
    /// nothing — is left out of the acknowledgement, the 2026-07-28 way of saying no: an error
    /// after it reaches SDKs as a lost stream, without its reason. What depends on the caller
    /// (builder-only resources) is checked when the listen starts.
    ///
    /// A filter naming more URIs than a subscriber may watch accepts none of them here (so rmcp's
    /// intersections stay cheap whatever the request holds); `listen` then refuses it.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let anyone = ScopeSet::up_to(Scope::Dev);
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.resource_subscriptions = requested
            .resource_subscriptions
            .as_ref()
            .filter(|uris| uris.len() <= self.shared.mcp.max_subscriptions)
            .map(|uris| uris.iter().filter(|uri| self.shared.topic(uri, anyone).is_ok()).cloned().collect());
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let caller = self.caller(context.request_context())?;
        // The anonymous pool is HTTP's: a stdio client is the one peer of its process.
        let anonymous = self.transport == Transport::Http && !caller.is_authenticated();
        subscribe::listen(&self.shared, &caller, anonymous, context).await
    }
}

impl TrailsServer {
    /// Whether an HTTP request belongs to a session (stateless requests have nowhere to deliver
    /// later notifications).
    /// The level this session's client asked for with `logging/setLevel`.
    fn log_level(&self) -> Option<LogLevel> {
        self.session.link.get().and_then(|link| link.log_level())
    }

    fn in_session(&self, extensions: &rmcp::model::Extensions) -> bool {
        self.shared.http.sessions
            && extensions
                .get::<http::request::Parts>()
                .is_some_and(|parts| parts.headers.contains_key("mcp-session-id"))
    }

    /// How long an HTTP session's client may send nothing before its notifications stop (so an
    /// abandoned session idles out instead of being kept alive by its own notifications);
    /// stdio sessions end with their connection instead.
    fn idle_limit(&self) -> Option<(Arc<Activity>, std::time::Duration)> {
        (self.transport == Transport::Http).then(|| (self.activity().clone(), self.shared.http.session_idle))
    }
}
