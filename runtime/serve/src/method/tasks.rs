//! Tasks (MCP's Tasks extension, `io.modelcontextprotocol/tasks`, 2026-07-28): a call of a
//! capability declared `task` that outlasts `[tasks] inline_ms` answers with a task handle and
//! runs on; the client polls `tasks/get`, answers its questions with `tasks/update` and stops it
//! with `tasks/cancel`. Creation is the server's choice: work that ends within the bound answers
//! as a plain result (`task = "required"`: as a task already ended), and a client that did not
//! declare the extension gets the held request as before (`required`: `-32021`).
//!
//! A call runs as a round of input-required results until it becomes a task, so a question
//! asked in its first `inline_ms` is answered by the call's own rounds (MCP: a tool gathers its
//! input before it escalates); once it is a task, its questions wait on the task
//! (`input_required`, answered by `tasks/update`) and its progress is the task's status message.
//! The record is written before the handle is sent; the result when the call ends.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use rmcp::model::{
    CallToolResponse, CancelTaskParams, ClientCapabilities, CreateTaskResult, DetailedTask, ErrorData, GetTaskParams,
    GetTaskResult, TaskPayload, TaskStatus, UpdateTaskParams, TASKS_EXTENSION_ID,
};
use serde_json::{json, Map, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use super::call::{call, CallInfo, ToPeer, Via};
use super::input::Rounds;
use super::Request;
use crate::state::tasks::{now_ms, Run, Tasks};
use crate::state::Shared;
use crate::wire;
use trails_core::auth::Caller;
use trails_core::ctx::input::Asker;
use trails_core::pipeline::{Answer, Refusal};
use trails_core::{Cancellation, Progress, ProgressSink, TaskSink, TaskSupport, TaskSwitch};
use trails_governance::tasks::{Status, Task, TaskError, Touched};

/// How long a cancelled task's call may take to see `ctx.cancelled()` and end before it is
/// dropped.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Most answers one `tasks/update` carries, and most bytes of them.
const MAX_ANSWERS: usize = 64;
const MAX_ANSWER_BYTES: usize = 128 * 1024;

/// How a `tools/call` runs: held until it ends, or as a task when it outlasts the bound.
pub(crate) enum Plan {
    Held,
    Task(Arc<Tasks>, TaskSupport),
}

/// How `request`'s call of `tool` runs. `Err`: a capability declared `task = "required"` called
/// by a client that did not declare the extension (`-32021`, nothing runs).
pub(crate) fn plan(shared: &Shared, request: &Request, tool: &str) -> Result<Plan, ErrorData> {
    let Some(entry) = shared.pipeline.catalog.entry(tool).filter(|entry| request.caller.scopes.contains(entry.scope()))
    else {
        // The pipeline answers for a tool the caller cannot call.
        return Ok(Plan::Held);
    };
    let support = entry.task();
    if support == TaskSupport::Forbidden {
        return Ok(Plan::Held);
    }
    let declared = declares_tasks(request) && request.current();
    match (&shared.tasks, declared, support) {
        (Some(tasks), true, _) => Ok(Plan::Task(tasks.clone(), support)),
        (_, false, TaskSupport::Required) => Err(undeclared()),
        _ => Ok(Plan::Held),
    }
}

/// Whether the client declared the Tasks extension on this request (2026-07-28's per-request
/// capabilities: the extension counts only there, whatever was declared before).
fn declares_tasks(request: &Request) -> bool {
    request
        .meta
        .get(super::CLIENT_CAPABILITIES)
        .and_then(|capabilities| capabilities.get("extensions"))
        .is_some_and(|extensions| extensions.get(TASKS_EXTENSION_ID).is_some())
}

/// `-32021`: the request did not declare the extension.
fn undeclared() -> ErrorData {
    ErrorData::missing_required_client_capability(ClientCapabilities::builder().enable_tasks().build())
}

/// Who may read, answer and cancel a task: the identity, grant and scopes that created it.
fn owner(caller: &Caller) -> String {
    json!([caller.name, caller.client, caller.scopes.names()]).to_string()
}

/// What one call run as a task carries from `call_tool`.
pub(crate) struct TaskCall {
    pub(crate) name: String,
    pub(crate) arguments: Option<Map<String, Value>>,
    pub(crate) caller: Caller,
    pub(crate) via: Via,
    pub(crate) info: CallInfo,
    pub(crate) rounds: Option<Rounds>,
    /// Fires when the client hangs up while the call is still its request's.
    pub(crate) hang_up: Option<CancellationToken>,
    /// Where progress goes while the call is its request's.
    pub(crate) progress: Option<ToPeer>,
}

/// Run `call` so that it becomes a task if it outlasts the bound.
pub(crate) async fn run(
    shared: &Arc<Shared>,
    tasks: Arc<Tasks>,
    support: TaskSupport,
    call_: TaskCall,
) -> Result<CallToolResponse, ErrorData> {
    let TaskCall { name, arguments, caller, via, mut info, rounds, hang_up, progress } = call_;
    let owner = owner(&caller);
    let now = now_ms();
    // A retry with the idempotency key of a call still running as a task gets that task (once it
    // ended, the key's kept result answers the retry).
    if let Some(key) = info.key.as_ref().and_then(|key| key.value.as_str()) {
        let found = tasks.store.keyed(&owner, &name, key, now).await.map_err(store_failed)?;
        if let Some(task) = found.filter(|task| !task.status.is_terminal()) {
            return Ok(CallToolResponse::Task(CreateTaskResult::new(detailed(&task, &tasks).task)));
        }
    }
    // One task too many is refused before anything runs (and checked again when it is created).
    let live = tasks.store.live(&owner, now).await.map_err(store_failed)?;
    if live >= tasks.settings.max_live {
        return Err(store_failed(TaskError::Full { live, cap: tasks.settings.max_live }));
    }
    let key = info.key.as_ref().and_then(|key| key.value.as_str()).map(str::to_owned);
    let stop = CancellationToken::new();
    info.cancel = Some(Cancellation::new(stop.clone()));
    let (ready, became) = watch::channel(None::<Arc<Run>>);
    info.progress = Some(Progress::new(TaskProgress { before: progress, became: became.clone() }));
    let asked_to = Arc::new(tokio::sync::Notify::new());
    info.task = Some(TaskSwitch::new(Switch { asked_to: asked_to.clone(), became: became.clone() }));
    let id = uuid::Uuid::new_v4().to_string();
    let round = rounds.as_ref().map(Rounds::round);
    // Aborted if this request is dropped before the task exists (or the call ends in it).
    let mut handle = {
        let (shared, name) = (shared.clone(), name.clone());
        AbortOnDropHandle::new(tokio::spawn(async move { call(&shared, &name, arguments, caller, via, info).await }))
    };
    let hung_up = async {
        match &hang_up {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let ended = tokio::select! {
        joined = &mut handle => Some(joined),
        () = tokio::time::sleep(tasks.settings.inline) => None,
        () = asked_to.notified() => None,
        () = hung_up => {
            stop.cancel();
            handle.abort();
            return Err(ErrorData::internal_error("the client went away before the call ended", None));
        }
    };
    let asker = Arc::new(TaskAsker { tasks: tasks.clone(), id: id.clone(), became, keys: Mutex::default() });
    let ended = match ended {
        Some(joined) => Some(joined),
        // A round with a question waiting ends with it, as an input-required result.
        None if round.as_ref().is_some_and(|round| !round.escalate(asker.clone())) => Some((&mut handle).await),
        None => None,
    };
    let record = |status: Status, outcome: Option<Value>, message: Option<String>| {
        let ttl = i64::try_from(tasks.settings.ttl.as_millis()).unwrap_or(i64::MAX);
        Task {
            id: id.clone(),
            owner: owner.clone(),
            tool: name.clone(),
            status,
            status_message: message,
            created_ms: now,
            updated_ms: now_ms(),
            expires_ms: now.saturating_add(ttl),
            input_requests: Map::new(),
            input_responses: Map::new(),
            outcome,
            runner: tasks.runner.clone(),
            lease_ms: now_ms().saturating_add(tasks.settings.lease_ms()),
            key: key.clone(),
        }
    };
    if let Some(joined) = ended {
        let outcome = match joined {
            Ok(Err(Refusal::InputRequired(asked))) => {
                return super::input::asked(shared, rounds.as_ref(), *asked).map(CallToolResponse::InputRequired);
            }
            Ok(outcome) => outcome,
            Err(_) => Err(panicked()),
        };
        if support == TaskSupport::Optional {
            return outcome
                .map(|answer| CallToolResponse::Complete(wire::call::answer(answer)))
                .map_err(|r| wire::call::refusal(&r));
        }
        // Required: a task, ended already.
        let (status, outcome, message) = settled(outcome);
        let task = record(status, Some(outcome), message);
        tasks.store.create(task.clone(), tasks.settings.caps()).await.map_err(store_failed)?;
        return Ok(CallToolResponse::Task(CreateTaskResult::new(detailed(&task, &tasks).task)));
    }
    let task = record(Status::Working, None, None);
    if let Err(error) = tasks.store.create(task.clone(), tasks.settings.caps()).await {
        stop.cancel();
        return Err(store_failed(error));
    }
    let run = tasks.start(&id, stop.clone(), task.expires_ms);
    let _ = ready.send(Some(run.clone()));
    tokio::spawn(finish(tasks.clone(), id, run, handle.detach()));
    Ok(CallToolResponse::Task(CreateTaskResult::new(detailed(&task, &tasks).task)))
}

/// Wait for task `id`'s call and keep what it ended with — unless it was stopped first: a
/// cancelled task stays cancelled (its record says so already), and the call is given
/// [`CANCEL_GRACE`] to see `ctx.cancelled()` before it is dropped.
async fn finish(
    tasks: Arc<Tasks>,
    id: String,
    run: Arc<Run>,
    mut handle: tokio::task::JoinHandle<Result<Answer, Refusal>>,
) {
    let joined = tokio::select! {
        joined = &mut handle => Some(joined),
        () = run.cancel.cancelled() => None,
    };
    match joined {
        Some(joined) => {
            let outcome = match joined {
                Ok(outcome) => outcome,
                Err(_) => Err(panicked()),
            };
            let (status, outcome, message) = settled(outcome);
            let change = Box::new(move |task: &mut Task| {
                task.status = status;
                task.outcome = Some(outcome.clone());
                task.status_message.clone_from(&message);
                task.input_requests.clear();
                task.input_responses.clear();
            });
            if let Err(error) = tasks.store.update(&id, now_ms(), change).await {
                tracing::error!(%error, task = %id, "a task's result was not kept; it fails when its lease lapses");
            }
        }
        None => {
            if tokio::time::timeout(CANCEL_GRACE, &mut handle).await.is_err() {
                handle.abort();
            }
        }
    }
    tasks.ended(&id);
}

/// A call's end as a task keeps it: a result (a tool's error result included) completes it; a
/// JSON-RPC error fails it.
fn settled(outcome: Result<Answer, Refusal>) -> (Status, Value, Option<String>) {
    match outcome {
        Ok(answer) => {
            let result = serde_json::to_value(wire::call::answer(answer)).unwrap_or_else(|_| json!({ "content": [] }));
            (Status::Completed, result, None)
        }
        Err(refusal) => {
            let error = wire::call::refusal(&refusal);
            let message = error.message.to_string();
            let error = serde_json::to_value(&error).unwrap_or_else(|_| json!({ "code": -32603, "message": message }));
            (Status::Failed, error, Some(message))
        }
    }
}

fn panicked() -> Refusal {
    Refusal::Failed { error: trails_core::Error::internal("the call panicked"), trace_id: String::new() }
}

fn store_failed(error: TaskError) -> ErrorData {
    if let TaskError::Ledger(detail) = &error {
        tracing::error!(%detail, "the task records failed");
    }
    let error: trails_core::Error = error.into();
    wire::call::refusal(&Refusal::Failed { error, trace_id: String::new() })
}

/// A task as the extension's `DetailedTask`.
fn detailed(task: &Task, tasks: &Tasks) -> DetailedTask {
    let status = match task.status {
        Status::Working => TaskStatus::Working,
        Status::InputRequired => TaskStatus::InputRequired,
        Status::Completed => TaskStatus::Completed,
        Status::Failed => TaskStatus::Failed,
        Status::Cancelled => TaskStatus::Cancelled,
    };
    let ttl = u64::try_from(task.expires_ms.saturating_sub(task.created_ms)).unwrap_or(0);
    let poll = u64::try_from(tasks.settings.poll_interval.as_millis()).unwrap_or(1000);
    let mut base = rmcp::model::Task::new(task.id.clone(), status, iso(task.created_ms), iso(task.updated_ms))
        .with_ttl_ms(ttl.max(1))
        .with_poll_interval_ms(poll);
    if let Some(message) = &task.status_message {
        base = base.with_status_message(message.clone());
    }
    let object = |value: &Option<Value>| match value {
        Some(Value::Object(object)) => object.clone(),
        _ => Map::new(),
    };
    let payload = match task.status {
        Status::Working => TaskPayload::Working,
        Status::InputRequired => {
            let requests = serde_json::from_value(Value::Object(task.input_requests.clone())).unwrap_or_default();
            TaskPayload::InputRequired { input_requests: requests }
        }
        Status::Completed => TaskPayload::Completed { result: object(&task.outcome) },
        Status::Failed => TaskPayload::Failed { error: object(&task.outcome) },
        Status::Cancelled => TaskPayload::Cancelled,
    };
    DetailedTask::new(base, payload)
}

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The tasks, or why `request` may not ask of them: the server runs none (`-32601`), the request
/// did not declare the extension (`-32021`).
fn served<'a>(shared: &'a Shared, request: &Request) -> Result<&'a Arc<Tasks>, ErrorData> {
    let tasks = shared
        .tasks
        .as_ref()
        .ok_or_else(|| ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, "this server runs no tasks", None))?;
    match declares_tasks(request) {
        true => Ok(tasks),
        false => Err(undeclared()),
    }
}

fn not_found(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no task `{id}`: it is unknown, expired, or another caller's"), None)
}

/// `tasks/get`: the task, with its questions, result or error.
pub(crate) async fn get_task(
    shared: &Shared,
    request: &Request,
    params: GetTaskParams,
) -> Result<GetTaskResult, ErrorData> {
    let tasks = served(shared, request)?;
    let task = tasks.store.get(&params.task_id, &owner(&request.caller), now_ms()).await.map_err(store_failed)?;
    let task = task.ok_or_else(|| not_found(&params.task_id))?;
    Ok(GetTaskResult::new(detailed(&task, tasks)))
}

/// `tasks/update`: answers to the task's questions (an answer to a question it does not wait on
/// is ignored).
pub(crate) async fn update_task(shared: &Shared, request: &Request, params: UpdateTaskParams) -> Result<(), ErrorData> {
    let tasks = served(shared, request)?;
    let answers: Map<String, Value> = params.input_responses.into_iter().collect();
    if answers.len() > MAX_ANSWERS {
        return Err(ErrorData::invalid_params(format!("one tasks/update carries at most {MAX_ANSWERS} answers"), None));
    }
    let size = serde_json::to_vec(&answers).map_or(0, |bytes| bytes.len());
    if size > MAX_ANSWER_BYTES {
        return Err(ErrorData::invalid_params(
            format!("the answers come to {size} bytes; one tasks/update carries at most {MAX_ANSWER_BYTES}"),
            None,
        ));
    }
    if let Some((key, _)) = answers.iter().find(|(_, answer)| !answer.is_object()) {
        return Err(ErrorData::invalid_params(format!("inputResponses.{key} is not a result object"), None));
    }
    let touched =
        tasks.store.answer(&params.task_id, &owner(&request.caller), answers, now_ms()).await.map_err(store_failed)?;
    if touched == Touched::NotFound {
        return Err(not_found(&params.task_id));
    }
    if let Some(run) = tasks.run(&params.task_id) {
        run.answered.notify_waiters();
    }
    Ok(())
}

/// `tasks/cancel`: a task still running is cancelled (its call stopped); an ended one stays.
pub(crate) async fn cancel_task(shared: &Shared, request: &Request, params: CancelTaskParams) -> Result<(), ErrorData> {
    let tasks = served(shared, request)?;
    let touched = tasks.store.cancel(&params.task_id, &owner(&request.caller), now_ms()).await.map_err(store_failed)?;
    if touched == Touched::NotFound {
        return Err(not_found(&params.task_id));
    }
    if let Some(run) = tasks.run(&params.task_id) {
        run.cancel.cancel();
    }
    Ok(())
}

/// `ctx.become_task()`: ends the inline bound now.
struct Switch {
    asked_to: Arc<tokio::sync::Notify>,
    became: watch::Receiver<Option<Arc<Run>>>,
}

impl TaskSink for Switch {
    fn become_task(&self) -> BoxFuture<'static, bool> {
        self.asked_to.notify_one();
        let mut became = self.became.clone();
        Box::pin(async move { became.wait_for(Option::is_some).await.is_ok() })
    }
}

/// Progress: to the request's client while the call is its request's, then the task's status
/// message.
struct TaskProgress {
    before: Option<ToPeer>,
    became: watch::Receiver<Option<Arc<Run>>>,
}

impl ProgressSink for TaskProgress {
    fn send(&self, progress: f64, total: Option<f64>, message: Option<String>) -> BoxFuture<'static, ()> {
        if let Some(run) = self.became.borrow().clone() {
            let done = match total {
                Some(total) => format!("{progress}/{total}"),
                None => progress.to_string(),
            };
            let text = match message {
                Some(message) => format!("{message} ({done})"),
                None => done,
            };
            *run.progress.lock().unwrap_or_else(PoisonError::into_inner) = Some(text);
            return Box::pin(async {});
        }
        match &self.before {
            Some(peer) => peer.send(progress, total, message),
            None => Box::pin(async {}),
        }
    }
}

/// A question a task's call asked and still waits on: dropped unanswered (the call stopped waiting,
/// or ended), it leaves the record's outstanding questions.
struct Outstanding {
    tasks: Arc<Tasks>,
    id: String,
    key: Option<String>,
}

impl Drop for Outstanding {
    fn drop(&mut self) {
        let Some(key) = self.key.take() else { return };
        let (tasks, id) = (self.tasks.clone(), std::mem::take(&mut self.id));
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        runtime.spawn(async move {
            let change = Box::new(move |task: &mut Task| {
                task.input_requests.remove(&key);
                if task.input_requests.is_empty() && task.status == Status::InputRequired {
                    task.status = Status::Working;
                }
            });
            if let Err(error) = tasks.store.update(&id, now_ms(), change).await {
                tracing::warn!(%error, task = %id, "a question no longer waited on stays in the task's record");
            }
        });
    }
}

/// A task's questions: kept in its record (`input_required`, under a key unique over the task)
/// until `tasks/update` answers them.
struct TaskAsker {
    tasks: Arc<Tasks>,
    id: String,
    became: watch::Receiver<Option<Arc<Run>>>,
    /// The keys asked so far: a key asked again is asked under a new one.
    keys: Mutex<HashSet<String>>,
}

impl Asker for TaskAsker {
    fn ask(
        &self,
        key: &str,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, trails_core::Error>> {
        let (tasks, id, mut became) = (self.tasks.clone(), self.id.clone(), self.became.clone());
        let key = {
            let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
            let mut unique = key.to_owned();
            let mut n = 1;
            while !keys.insert(unique.clone()) {
                n += 1;
                unique = format!("{key}.{n}");
            }
            unique
        };
        Box::pin(async move {
            let gone = || trails_core::Error::precondition_failed("the task ended while it asked");
            let run = match became.wait_for(Option::is_some).await {
                Ok(run) => run.clone().expect("waited for it"),
                Err(_) => return Err(gone()),
            };
            let request = json!({ "method": method, "params": params });
            let (asked_key, asked) = (key.clone(), request);
            let change = Box::new(move |task: &mut Task| {
                task.input_requests.insert(asked_key.clone(), asked.clone());
                task.status = Status::InputRequired;
                task.status_message = None;
            });
            let asked = tasks.store.update(&id, now_ms(), change).await.map_err(trails_core::Error::from)?;
            if !asked {
                return Err(gone());
            }
            // A handler that stops waiting (a timeout of its own) takes its question back.
            let mut outstanding = Outstanding { tasks: tasks.clone(), id: id.clone(), key: Some(key.clone()) };
            loop {
                let notified = run.answered.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                let taken = run.answers.lock().unwrap_or_else(PoisonError::into_inner).remove(&key);
                if let Some(answer) = taken {
                    outstanding.key = None;
                    return Ok(answer);
                }
                // Read first: answers are rare, and taking them is a write.
                match tasks.store.load(&id, now_ms()).await.map_err(trails_core::Error::from)? {
                    Some(task) if task.status.is_terminal() => return Err(gone()),
                    None => return Err(gone()),
                    Some(task) if !task.input_responses.is_empty() => {
                        let fresh = tasks.store.take_answers(&id).await.map_err(trails_core::Error::from)?;
                        run.answers.lock().unwrap_or_else(PoisonError::into_inner).extend(fresh);
                        run.answered.notify_waiters();
                        continue;
                    }
                    Some(_) => {}
                }
                tokio::select! {
                    () = notified => {}
                    () = tokio::time::sleep(tasks.settings.tick()) => {}
                    () = run.cancel.cancelled() => return Err(gone()),
                }
            }
        })
    }
}
