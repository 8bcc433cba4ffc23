//! What a handler knows about the call it is serving.

pub mod input;

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::auth::{Scope, ScopeSet};
use crate::declare::ObjectShape;
use crate::error::Error;
use futures_util::future::BoxFuture;
use input::{Elicited, Input, Kind, Root, Sample, Sampled};

/// Shared application state, handed to every handler (like axum's `State`).
pub type AppState = Arc<dyn Any + Send + Sync>;

/// The distributed trace a call belongs to (W3C trace context): the trace the client's
/// `traceparent` named, or the one OpenTelemetry started. Attached to a call's [`Ctx`] by the
/// server when there is one; provenance records it beside the call's own [`Ctx::trace_id`],
/// which stays unique per call (one trace spans many calls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistributedTrace {
    /// 32 lowercase hex digits.
    pub trace_id: String,
}

/// What the client's request carried besides the tool's arguments, as a handler reads it
/// ([`Ctx::request`]): its `_meta`, the protocol version it is answered under, its session, and
/// what the client said of itself (`clientInfo` and `capabilities`: at `initialize` in a 2025-*
/// session, in every request's `_meta` from 2026-07-28 on). Empty where a call came from no
/// client (a unit test, `/invoke`).
#[derive(Debug, Clone, Default)]
pub struct RequestInfo {
    meta: Map<String, Value>,
    protocol_version: Option<String>,
    session_id: Option<String>,
    client_info: Option<Value>,
    client_capabilities: Option<Value>,
}

impl RequestInfo {
    /// What a transport read of a request.
    pub fn new(
        meta: Map<String, Value>,
        protocol_version: Option<String>,
        session_id: Option<String>,
        client_info: Option<Value>,
        client_capabilities: Option<Value>,
    ) -> Self {
        RequestInfo { meta, protocol_version, session_id, client_info, client_capabilities }
    }
    /// The request's `_meta` (empty when it had none).
    pub fn meta(&self) -> &Map<String, Value> {
        &self.meta
    }
    /// The `progressToken` the request carried: progress sent with [`Ctx::progress`] goes under it.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta.get("progressToken")
    }
    /// The protocol revision the call is answered under (`2025-11-25`, `2026-07-28`, …).
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }
    /// The MCP session it belongs to (2025-* revisions over HTTP).
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }
    /// The client's `clientInfo` (`{"name", "version", …}`).
    pub fn client_info(&self) -> Option<&Value> {
        self.client_info.as_ref()
    }
    /// The capabilities the client declared (`{"sampling": {}, "elicitation": {}, …}`).
    pub fn client_capabilities(&self) -> Option<&Value> {
        self.client_capabilities.as_ref()
    }
    /// Whether the client declared capability `name` (`"sampling"`, `"elicitation"`, `"roots"`):
    /// an object under its name (for `elicitation`, one that takes forms: `{}` or with `form`).
    pub fn client_declares(&self, name: &str) -> bool {
        let declared = self.client_capabilities.as_ref().and_then(|capabilities| capabilities.get(name));
        match (name, declared.and_then(Value::as_object)) {
            ("elicitation", Some(modes)) => modes.is_empty() || modes.contains_key("form"),
            (_, object) => object.is_some(),
        }
    }
}

/// Where a call's progress goes: a transport that can reach the client while the call runs
/// implements it for a request that carried a `progressToken`.
pub trait ProgressSink: Send + Sync + 'static {
    /// Send `notifications/progress` with these values.
    fn send(&self, progress: f64, total: Option<f64>, message: Option<String>) -> BoxFuture<'static, ()>;
}

/// A call's progress reporter, attached by the transport ([`Ctx::progress`] uses it). It sends
/// only increasing progress (MCP requires it), and at most one notification per
/// [`Progress::EVERY`], besides the last (`progress == total`), so a handler may report in a
/// tight loop.
#[derive(Clone)]
pub struct Progress {
    sink: Arc<dyn ProgressSink>,
    last: Arc<Mutex<Option<(Instant, f64)>>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress").field("last", &self.last).finish_non_exhaustive()
    }
}

impl Progress {
    /// The shortest time between two notifications.
    pub const EVERY: Duration = Duration::from_millis(20);

    /// A reporter sending to `sink`.
    pub fn new(sink: impl ProgressSink) -> Self {
        Progress { sink: Arc::new(sink), last: Arc::default() }
    }

    fn admit(&self, progress: f64, total: Option<f64>) -> bool {
        if !progress.is_finite() {
            return false;
        }
        let mut last = self.last.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        let done = total.is_some_and(|total| progress >= total);
        let admitted = match *last {
            None => true,
            Some((at, sent)) => progress > sent && (done || now.duration_since(at) >= Self::EVERY),
        };
        if admitted {
            *last = Some((now, progress));
        }
        admitted
    }
}

/// How severe a message a handler logs to its client is (MCP's levels, syslog's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// What happened.
    Info,
    /// Normal but significant.
    Notice,
    /// Something to look at.
    Warning,
    /// Something failed.
    Error,
    /// A part failed.
    Critical,
    /// Act now.
    Alert,
    /// Unusable.
    Emergency,
}

/// Where a call's log messages go: a transport that can reach the client while the call runs
/// implements it, for a client that asked for messages (a 2025 session's `logging/setLevel`, a
/// 2026-07-28 request's `_meta` log level).
pub trait LogSink: Send + Sync + 'static {
    /// Send `notifications/message`.
    fn send(&self, level: LogLevel, data: Value) -> BoxFuture<'static, ()>;
}

/// A call's logger, attached by the transport ([`Ctx::log`] uses it): it sends messages at or
/// above the level the client asked for, at most [`ClientLog::MAX_PER_CALL`] per call.
#[derive(Clone)]
pub struct ClientLog {
    sink: Arc<dyn LogSink>,
    least: LogLevel,
    sent: Arc<std::sync::atomic::AtomicUsize>,
}

impl std::fmt::Debug for ClientLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientLog").field("least", &self.least).finish_non_exhaustive()
    }
}

impl ClientLog {
    /// Messages one call sends at most (a handler logging in a loop cannot flood its client).
    pub const MAX_PER_CALL: usize = 1000;

    /// A logger sending messages at `least` and above to `sink`.
    pub fn new(sink: impl LogSink, least: LogLevel) -> Self {
        ClientLog { sink: Arc::new(sink), least, sent: Arc::default() }
    }
}

/// What makes a call an MCP task at once ([`Ctx::become_task`]): the transport's, attached to a
/// call that may become one.
pub trait TaskSink: Send + Sync + 'static {
    /// Make the call a task now; whether it is one (the client has its handle).
    fn become_task(&self) -> BoxFuture<'static, bool>;
}

/// A call's way to become an MCP task before the inline bound passes, attached by the transport
/// when the capability declares `task` and the client takes tasks.
#[derive(Clone)]
pub struct TaskSwitch(Arc<dyn TaskSink>);

impl std::fmt::Debug for TaskSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskSwitch")
    }
}

impl TaskSwitch {
    /// A switch that makes the call a task through `sink`.
    pub fn new(sink: impl TaskSink) -> Self {
        TaskSwitch(Arc::new(sink))
    }
}

/// The signal a call's client cancelled it, attached by the transport ([`Ctx::cancelled`]).
#[derive(Clone, Debug, Default)]
pub struct Cancellation(CancellationToken);

impl Cancellation {
    /// A signal that fires when `token` is cancelled.
    pub fn new(token: CancellationToken) -> Self {
        Cancellation(token)
    }
}

/// Per-call context handed to every handler.
#[derive(Clone)]
pub struct Ctx {
    trace_id: String,
    caller: Option<String>,
    client: Option<String>,
    scopes: ScopeSet,
    state: Option<AppState>,
    extensions: Vec<(TypeId, Arc<dyn Any + Send + Sync>)>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("trace_id", &self.trace_id)
            .field("caller", &self.caller)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl Ctx {
    /// A context for a call with this trace id, caller name (`None`: anonymous) and scopes.
    pub fn new(trace_id: impl Into<String>, caller: Option<String>, scopes: ScopeSet) -> Self {
        Ctx { trace_id: trace_id.into(), caller, client: None, scopes, state: None, extensions: Vec::new() }
    }
    /// A context for tests and the CLI: anonymous caller, runtime scope only.
    pub fn local() -> Self {
        Ctx::new("local", None, ScopeSet::up_to(Scope::Runtime))
    }
    /// The same context for a caller whose OAuth access token was issued to `client`.
    pub fn with_client(mut self, client: Option<String>) -> Self {
        self.client = client;
        self
    }
    /// The same context carrying the application's shared state.
    pub fn with_state(mut self, state: AppState) -> Self {
        self.state = Some(state);
        self
    }
    /// The same context carrying `value`, found again by its type with [`Ctx::extension`]
    /// (replacing a value of the same type). The server attaches what its parts give a handler
    /// this way — the knowledge graph (`trails::kg::KgCtx`), the running server's `Control` —
    /// and a guard can attach its own.
    pub fn with_extension<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.set_extension(value);
        self
    }
    pub(crate) fn set_extension<T: Any + Send + Sync>(&mut self, value: T) {
        self.attach(TypeId::of::<T>(), Arc::new(value));
    }
    /// Attach `value`, of the type `id` names (`pipeline::Attach`'s values).
    pub(crate) fn attach(&mut self, id: TypeId, value: Arc<dyn Any + Send + Sync>) {
        match self.extensions.iter_mut().find(|(kept, _)| *kept == id) {
            Some((_, slot)) => *slot = value,
            None => self.extensions.push((id, value)),
        }
    }
    /// The value of type `T` attached with [`Ctx::with_extension`], if any.
    pub fn extension<T: Any + Send + Sync>(&self) -> Option<&T> {
        let (_, value) = self.extensions.iter().find(|(id, _)| *id == TypeId::of::<T>())?;
        value.downcast_ref::<T>()
    }
    /// The id under which this call is logged; internal errors carry it to the client.
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }
    /// The W3C trace id of the distributed trace this call belongs to, when there is one (see
    /// [`DistributedTrace`]): what to log to find the call in a tracing backend.
    pub fn distributed_trace_id(&self) -> Option<&str> {
        self.extension::<DistributedTrace>().map(|trace| trace.trace_id.as_str())
    }
    /// The configured name of the caller's token, or `None` when anonymous.
    pub fn caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }
    /// The OAuth client (`client_id`) the caller's access token was issued to: which application
    /// acts for the caller. `None` for static tokens and anonymous callers.
    pub fn client(&self) -> Option<&str> {
        self.client.as_deref()
    }
    /// The scopes the caller holds for this call.
    pub fn scopes(&self) -> ScopeSet {
        self.scopes
    }
    /// What the client's request carried besides the arguments: its `_meta`, the protocol
    /// version, the session, the client's info and declared capabilities.
    pub fn request(&self) -> &RequestInfo {
        static NONE: std::sync::OnceLock<RequestInfo> = std::sync::OnceLock::new();
        self.extension::<RequestInfo>().unwrap_or_else(|| NONE.get_or_init(RequestInfo::default))
    }

    /// Tell the client how far the call has come — `done` of `total` (when known), with a
    /// message — as `notifications/progress`, when its request carried a `progressToken` (else
    /// nothing is sent). Progress that does not increase is not sent, nor more than one
    /// notification per [`Progress::EVERY`] before the last.
    pub async fn progress(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(progress) = self.extension::<Progress>() {
            if progress.admit(done, total) {
                progress.sink.send(done, total, message.map(str::to_owned)).await;
            }
        }
    }

    /// Send the client a log message (`notifications/message`, with `data`: a string or any JSON)
    /// when it asked for messages of `level` or less severe ones; nothing otherwise (MCP sends
    /// no message a client did not ask for). The server's own log is `tracing`'s, not this.
    pub async fn log(&self, level: LogLevel, data: impl Into<Value>) {
        let Some(log) = self.extension::<ClientLog>() else { return };
        if level < log.least || log.sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= ClientLog::MAX_PER_CALL {
            return;
        }
        log.sink.send(level, data.into()).await;
    }

    /// Completes when the client cancels the call (`notifications/cancelled`, or a 2026-07-28
    /// client closing the request's stream, or `tasks/cancel` for a call run as a task); never,
    /// for a call no client can cancel. The call is not stopped for it: the handler decides what
    /// to finish (a write it began is kept, and an idempotency key records whatever the handler
    /// returned) — a task's call, within 5 s: then it is dropped where it waits.
    pub async fn cancelled(&self) {
        match self.extension::<Cancellation>() {
            Some(cancellation) => cancellation.0.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// Make this call an MCP task now, rather than once it outlasts `[tasks] inline_ms`: the
    /// client gets the task's handle and polls it, and from here on the call's questions
    /// (`ctx.elicit`, …) wait on the task and its progress is the task's status message. Whether
    /// it is a task now: `false` for a capability not declared `task`, or a client that takes no
    /// tasks (the call holds its request as any other).
    pub async fn become_task(&self) -> bool {
        match self.extension::<TaskSwitch>() {
            Some(switch) => switch.0.become_task().await,
            None => false,
        }
    }

    /// Whether the client has cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.extension::<Cancellation>().is_some_and(|cancellation| cancellation.0.is_cancelled())
    }

    /// Ask the user a question through the client (MCP elicitation): `message`, and a form
    /// with `T`'s fields (a flat shape of strings, numbers, booleans and enums, as MCP
    /// requires). The answer is validated like arguments (a failure is `-32602` naming the
    /// answer's fields). `key` names the question: from protocol 2026-07-28 on, the call is
    /// answered with an input-required result and runs again from the start once the client
    /// answers, and the question asked under the same key then has its answer at once — so ask
    /// before you write. A client that declared no `elicitation` capability gets MCP's `-32021`
    /// ([`Error::MissingClientCapability`], which the handler may also handle: ask otherwise);
    /// a call no client made (`/invoke`, a test) the `precondition_failed` error.
    pub async fn elicit<T: ObjectShape>(&self, key: &str, message: &str) -> Result<Elicited<T>, Error> {
        const {
            assert!(
                T::FORM,
                "`ctx.elicit` asks for a form, and MCP's forms are flat: each field of the shape a string, number, \
                 boolean or `#[shape]` enum, or a `Vec` of an enum (a hand-written field type says \
                 `Schema::FORM_FIELD`); ask for a nested shape's fields in a shape of their own"
            )
        };
        let params = input::elicit_params::<T>(message)?;
        let answer = self.ask(key, Kind::Elicitation, params).await?;
        input::elicited(key, answer)
    }

    /// Whether the user confirms `question` (the confirmation guard's: `confirm = "…"`): a
    /// yes/no form, `true` only for an accepted yes.
    pub(crate) async fn confirm(&self, question: &str) -> Result<bool, Error> {
        let params = serde_json::json!({
            "mode": "form",
            "message": question,
            "requestedSchema": {
                "type": "object",
                "properties": { "confirm": { "type": "boolean", "title": "Confirm", "description": question } },
                "required": ["confirm"],
            },
        });
        let answer = self.ask(input::CONFIRM_KEY, Kind::Elicitation, params).await?;
        input::confirmed(answer)
    }

    /// Ask the client's model (MCP sampling). As [`Ctx::elicit`]: `key`, the capability
    /// (`sampling`), the rounds.
    pub async fn sample(&self, key: &str, request: Sample) -> Result<Sampled, Error> {
        let answer = self.ask(key, Kind::Sampling, input::sample_params(&request)).await?;
        input::sampled(key, answer)
    }

    /// The client's roots (MCP `roots/list`). As [`Ctx::elicit`]: `key`, the capability
    /// (`roots`), the rounds.
    pub async fn roots(&self, key: &str) -> Result<Vec<Root>, Error> {
        let answer = self.ask(key, Kind::Roots, serde_json::json!({})).await?;
        input::roots(key, answer)
    }

    async fn ask(&self, key: &str, kind: Kind, params: Value) -> Result<Value, Error> {
        if key.starts_with(input::RESERVED_PREFIX) && key != input::CONFIRM_KEY {
            return Err(Error::internal(format!(
                "question key `{key}`: keys starting with `{}` are the server's own; choose another",
                input::RESERVED_PREFIX
            )));
        }
        let capability = kind.capability();
        let request = self.request();
        if !request.client_declares(capability) {
            // A client that did not declare it, or none at all (`/invoke`, a test).
            return Err(match request.client_capabilities() {
                Some(_) => Error::MissingClientCapability(capability),
                None => Error::precondition_failed(format!(
                    "this call needs to ask its client (`{capability}`), and no MCP client made it: call it \
                     over MCP from a client that declares `{capability}`"
                )),
            });
        }
        let Some(input) = self.extension::<Input>() else {
            return Err(Error::precondition_failed(format!(
                "this call needs to ask its client (`{capability}`), and this request cannot carry a question (a \
                 2025-* request outside a session): open a session, or call with protocol 2026-07-28"
            )));
        };
        input::ask(input, key, kind, params).await
    }

    /// The application state of type `T`. Missing state is a server misconfiguration, reported
    /// to the client as an internal error (never with the type name).
    pub fn state<T: Any + Send + Sync>(&self) -> Result<&T, Error> {
        self.state
            .as_deref()
            .and_then(|state| state.downcast_ref::<T>())
            .ok_or_else(|| Error::internal(format!("no application state of type {}", std::any::type_name::<T>())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reporter sent: (progress, total, message).
    type Report = (f64, Option<f64>, Option<String>);

    #[derive(Clone, Default)]
    struct Sent(Arc<Mutex<Vec<Report>>>);

    impl ProgressSink for Sent {
        fn send(&self, progress: f64, total: Option<f64>, message: Option<String>) -> BoxFuture<'static, ()> {
            self.0.lock().unwrap().push((progress, total, message));
            Box::pin(async {})
        }
    }

    #[test]
    fn progress_goes_only_up_at_a_bounded_rate_and_the_last_always() {
        futures_util::FutureExt::now_or_never(async {
            let sent = Sent::default();
            let ctx = Ctx::local();
            ctx.progress(1.0, None, None).await; // no reporter: nothing, no failure
            let ctx = ctx.with_extension(Progress::new(sent.clone()));
            ctx.progress(0.0, Some(100.0), Some("start")).await;
            ctx.progress(0.0, Some(100.0), None).await; // not an increase
            ctx.progress(10.0, Some(100.0), None).await; // too soon after the first
            ctx.progress(f64::NAN, Some(100.0), None).await;
            ctx.progress(100.0, Some(100.0), Some("done")).await; // the last, however soon
            std::thread::sleep(Progress::EVERY);
            ctx.progress(50.0, Some(100.0), None).await; // down again
            let sent = sent.0.lock().unwrap().clone();
            assert_eq!(sent, vec![(0.0, Some(100.0), Some("start".into())), (100.0, Some(100.0), Some("done".into()))]);
        })
        .expect("nothing awaits");
    }

    #[derive(Clone, Default)]
    struct Logged(Arc<Mutex<Vec<(LogLevel, Value)>>>);

    impl LogSink for Logged {
        fn send(&self, level: LogLevel, data: Value) -> BoxFuture<'static, ()> {
            self.0.lock().unwrap().push((level, data));
            Box::pin(async {})
        }
    }

    #[test]
    fn a_client_gets_the_messages_it_asked_for_and_no_more() {
        futures_util::FutureExt::now_or_never(async {
            Ctx::local().log(LogLevel::Emergency, "no client: nothing, no failure").await;
            let logged = Logged::default();
            let ctx = Ctx::local().with_extension(ClientLog::new(logged.clone(), LogLevel::Info));
            ctx.log(LogLevel::Debug, "below").await;
            ctx.log(LogLevel::Info, "started").await;
            ctx.log(LogLevel::Error, serde_json::json!({ "failed": 1 })).await;
            for _ in 0..2 * ClientLog::MAX_PER_CALL {
                ctx.log(LogLevel::Warning, "again").await;
            }
            let logged = logged.0.lock().unwrap();
            assert_eq!(
                logged[..2],
                [(LogLevel::Info, "started".into()), (LogLevel::Error, serde_json::json!({ "failed": 1 }))]
            );
            assert_eq!(logged.len(), ClientLog::MAX_PER_CALL, "bounded per call");
        })
        .expect("nothing awaits");
    }

    #[test]
    fn cancellation_is_a_signal_the_handler_reads() {
        let token = CancellationToken::new();
        let ctx = Ctx::local().with_extension(Cancellation::new(token.clone()));
        assert!(!ctx.is_cancelled());
        assert!(futures_util::FutureExt::now_or_never(ctx.cancelled()).is_none());
        token.cancel();
        assert!(ctx.is_cancelled());
        assert!(futures_util::FutureExt::now_or_never(ctx.cancelled()).is_some());
        assert!(!Ctx::local().is_cancelled(), "no client, no cancellation");
    }

    #[test]
    fn a_handler_reads_what_its_request_carried() {
        assert!(Ctx::local().request().meta().is_empty());
        let meta = serde_json::json!({ "progressToken": "p-1" }).as_object().unwrap().clone();
        let info = RequestInfo::new(
            meta,
            Some("2026-07-28".into()),
            None,
            Some(serde_json::json!({ "name": "host" })),
            Some(serde_json::json!({ "sampling": {} })),
        );
        let ctx = Ctx::local().with_extension(info);
        let request = ctx.request();
        assert_eq!(request.progress_token(), Some(&serde_json::json!("p-1")));
        assert_eq!(request.protocol_version(), Some("2026-07-28"));
        assert!(request.client_declares("sampling") && !request.client_declares("elicitation"));
        assert_eq!(request.client_info().unwrap()["name"], "host");
    }

    #[test]
    fn an_extension_is_found_by_its_type_and_replaced_by_another_of_it() {
        #[derive(Debug, PartialEq)]
        struct Tenant(&'static str);
        let ctx = Ctx::local();
        assert_eq!(ctx.extension::<Tenant>(), None);
        let ctx = ctx.with_extension(Tenant("a")).with_extension(7_u32).with_extension(Tenant("b"));
        assert_eq!(ctx.extension::<Tenant>(), Some(&Tenant("b")));
        assert_eq!(ctx.extension::<u32>(), Some(&7));
        assert_eq!(ctx.clone().extension::<u32>(), Some(&7), "a clone carries them too");
        assert_eq!(ctx.extension::<u64>(), None);
    }
}
