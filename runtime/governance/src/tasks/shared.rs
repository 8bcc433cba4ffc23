//! Task records shared by replicas, in Redis (`[coordination]`, the `redis` feature): a task made
//! through one replica is read, answered and cancelled through any other. Each change reads the
//! record, changes it here and writes it back if no other write came between (else it reads
//! again); see `trails_coord::tasks`.

use std::collections::HashMap;

use serde_json::{Map, Value};
use trails_coord::tasks::{Put, TaskWrite};
use trails_coord::{CoordError, Coordinator};

use super::{Caps, Status, Task, TaskError, TaskFuture, TaskStore, Touched};

/// How many times a change is redone after losing a race before it gives up.
const RETRIES: usize = 16;
/// Lapsed leases looked at per pass.
const REAPED_PER_PASS: usize = 256;

/// The records in Redis.
#[derive(Clone)]
pub struct SharedTasks {
    coordinator: Coordinator,
}

impl SharedTasks {
    pub fn new(coordinator: Coordinator) -> SharedTasks {
        SharedTasks { coordinator }
    }
}

fn failed(error: CoordError) -> TaskError {
    TaskError::Ledger(format!("the replicas' task records (Redis): {error}"))
}

/// `task` as the hash's fields: requests under `q:<key>`, answers under `a:<key>`.
fn fields(task: &Task) -> Vec<(String, String)> {
    let mut fields = vec![
        ("owner".to_owned(), task.owner.clone()),
        ("tool".to_owned(), task.tool.clone()),
        ("status".to_owned(), task.status.as_str().to_owned()),
        ("created".to_owned(), task.created_ms.to_string()),
        ("updated".to_owned(), task.updated_ms.to_string()),
        ("expires".to_owned(), task.expires_ms.to_string()),
        ("runner".to_owned(), task.runner.clone()),
    ];
    let optional = [("message", task.status_message.clone()), ("key", task.key.clone())];
    fields.extend(optional.into_iter().filter_map(|(name, value)| Some((name.to_owned(), value?))));
    if let Some(outcome) = &task.outcome {
        fields.push(("outcome".to_owned(), outcome.to_string()));
    }
    for (key, request) in &task.input_requests {
        fields.push((format!("q:{key}"), request.to_string()));
    }
    for (key, answer) in &task.input_responses {
        fields.push((format!("a:{key}"), answer.to_string()));
    }
    fields
}

fn read(id: &str, mut fields: HashMap<String, String>) -> Task {
    let mut take = |name: &str| fields.remove(name);
    let number = |text: Option<String>| text.and_then(|text| text.parse().ok()).unwrap_or(0);
    let mut task = Task {
        id: id.to_owned(),
        owner: take("owner").unwrap_or_default(),
        tool: take("tool").unwrap_or_default(),
        // A status this build does not know was written by a newer one: read as failed.
        status: take("status").and_then(|status| Status::named(&status)).unwrap_or(Status::Failed),
        status_message: take("message"),
        created_ms: number(take("created")),
        updated_ms: number(take("updated")),
        expires_ms: number(take("expires")),
        input_requests: Map::new(),
        input_responses: Map::new(),
        outcome: take("outcome").and_then(|text| serde_json::from_str(&text).ok()),
        runner: take("runner").unwrap_or_default(),
        lease_ms: 0,
        key: take("key"),
    };
    for (name, text) in fields {
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if let Some(key) = name.strip_prefix("q:") {
            task.input_requests.insert(key.to_owned(), value);
        } else if let Some(key) = name.strip_prefix("a:") {
            task.input_responses.insert(key.to_owned(), value);
        }
    }
    task
}

impl SharedTasks {
    async fn get(&self, id: &str, now_ms: i64) -> Result<Option<(u64, Task)>, TaskError> {
        let found = self.coordinator.task_get(id).await.map_err(failed)?;
        Ok(found.map(|(version, fields)| (version, read(id, fields))).filter(|(_, task)| task.expires_ms > now_ms))
    }

    async fn put(&self, version: u64, task: &Task, now_ms: i64) -> Result<Put, TaskError> {
        let write = TaskWrite {
            id: &task.id,
            owner: &task.owner,
            version: Some(version),
            fields: fields(task),
            expires_ms: task.expires_ms,
            lease_ms: task.lease_ms,
            running: !task.status.is_terminal(),
            cap: 0,
            kept: usize::MAX,
            keyed: None,
            now_ms,
        };
        self.coordinator.task_put(write).await.map_err(failed)
    }

    /// Read task `id`, let `change` decide (`None`: leave it as it is), write it back; again while
    /// another write came between.
    async fn change<T>(
        &self,
        id: &str,
        now_ms: i64,
        mut change: impl FnMut(Option<&mut Task>) -> (T, bool) + Send,
    ) -> Result<T, TaskError> {
        for _ in 0..RETRIES {
            let Some((version, mut task)) = self.get(id, now_ms).await? else { return Ok(change(None).0) };
            let (answer, write) = change(Some(&mut task));
            if !write || self.put(version, &task, now_ms).await? == Put::Written {
                return Ok(answer);
            }
        }
        Err(TaskError::Ledger(format!("task `{id}` changed too often at once; retry")))
    }
}

impl TaskStore for SharedTasks {
    fn shared(&self) -> bool {
        true
    }

    fn create(&self, task: Task, caps: Caps) -> TaskFuture<()> {
        let store = self.clone();
        Box::pin(async move {
            let write = TaskWrite {
                id: &task.id,
                owner: &task.owner,
                version: None,
                fields: fields(&task),
                expires_ms: task.expires_ms,
                lease_ms: task.lease_ms,
                running: !task.status.is_terminal(),
                cap: if task.status.is_terminal() { 0 } else { caps.live },
                kept: caps.kept,
                keyed: task.key.as_deref().map(|key| (task.tool.as_str(), key)),
                now_ms: task.created_ms,
            };
            match store.coordinator.task_put(write).await.map_err(failed)? {
                Put::Written => Ok(()),
                Put::Full(live) => Err(TaskError::Full { live, cap: caps.live }),
                Put::Lost => Err(TaskError::Ledger(format!("a task `{}` exists already", task.id))),
            }
        })
    }

    fn live(&self, owner: &str, now_ms: i64) -> TaskFuture<usize> {
        let (store, owner) = (self.clone(), owner.to_owned());
        Box::pin(async move { store.coordinator.task_running(&owner, now_ms).await.map_err(failed) })
    }

    fn load(&self, id: &str, now_ms: i64) -> TaskFuture<Option<Task>> {
        let (store, id) = (self.clone(), id.to_owned());
        Box::pin(async move { Ok(store.get(&id, now_ms).await?.map(|(_, task)| task)) })
    }

    fn keyed(&self, owner: &str, tool: &str, key: &str, now_ms: i64) -> TaskFuture<Option<Task>> {
        let (store, owner, tool, key) = (self.clone(), owner.to_owned(), tool.to_owned(), key.to_owned());
        Box::pin(async move {
            let Some(id) = store.coordinator.task_keyed(&owner, &tool, &key).await.map_err(failed)? else {
                return Ok(None);
            };
            let task = store.get(&id, now_ms).await?.map(|(_, task)| task);
            Ok(task.filter(|task| task.owner == owner && task.tool == tool))
        })
    }

    fn update(&self, id: &str, now_ms: i64, mut change: Box<dyn FnMut(&mut Task) + Send>) -> TaskFuture<bool> {
        let (store, id) = (self.clone(), id.to_owned());
        Box::pin(async move {
            store
                .change(&id, now_ms, |task| match task {
                    Some(task) if !task.status.is_terminal() => {
                        change(task);
                        task.updated_ms = now_ms;
                        (true, true)
                    }
                    _ => (false, false),
                })
                .await
        })
    }

    fn answer(&self, id: &str, owner: &str, responses: Map<String, Value>, now_ms: i64) -> TaskFuture<Touched> {
        let (store, id, owner) = (self.clone(), id.to_owned(), owner.to_owned());
        Box::pin(async move {
            store
                .change(&id, now_ms, |task| match task {
                    Some(task) if task.owner == owner => {
                        if task.status.is_terminal() {
                            return (Touched::Done, false);
                        }
                        super::answered(task, &responses, now_ms);
                        (Touched::Done, true)
                    }
                    _ => (Touched::NotFound, false),
                })
                .await
        })
    }

    fn take_answers(&self, id: &str) -> TaskFuture<Map<String, Value>> {
        let (store, id) = (self.clone(), id.to_owned());
        Box::pin(async move {
            // Whatever its expiry: the running call takes what was answered.
            store
                .change(&id, i64::MIN, |task| match task {
                    Some(task) if !task.input_responses.is_empty() => (std::mem::take(&mut task.input_responses), true),
                    _ => (Map::new(), false),
                })
                .await
        })
    }

    fn cancel(&self, id: &str, owner: &str, now_ms: i64) -> TaskFuture<Touched> {
        let (store, id, owner) = (self.clone(), id.to_owned(), owner.to_owned());
        Box::pin(async move {
            store
                .change(&id, now_ms, |task| match task {
                    Some(task) if task.owner == owner => match task.status.is_terminal() {
                        true => (Touched::Done, false),
                        false => {
                            super::cancelled(task, now_ms);
                            (Touched::Done, true)
                        }
                    },
                    _ => (Touched::NotFound, false),
                })
                .await
        })
    }

    fn renew(&self, _runner: &str, ids: Vec<String>, lease_ms: i64) -> TaskFuture<()> {
        let store = self.clone();
        Box::pin(async move { store.coordinator.task_renew(&ids, lease_ms).await.map_err(failed) })
    }

    fn reap(&self, now_ms: i64) -> TaskFuture<(usize, usize)> {
        let store = self.clone();
        Box::pin(async move {
            let lapsed = store.coordinator.task_lapsed(now_ms, REAPED_PER_PASS).await.map_err(failed)?;
            let (mut failed_count, mut gone) = (0, 0);
            for id in lapsed {
                let failed_now = store
                    .change(&id, now_ms, |task| match task {
                        Some(task) if !task.status.is_terminal() => {
                            super::runner_gone(task, now_ms);
                            (Some(true), true)
                        }
                        Some(_) => (Some(false), false),
                        None => (None, false),
                    })
                    .await?;
                match failed_now {
                    Some(true) => failed_count += 1,
                    // Ended (its lease should have gone with its end), or expired.
                    Some(false) | None => {
                        store.coordinator.task_forget(&id).await.map_err(failed)?;
                        gone += 1;
                    }
                }
            }
            Ok((failed_count, gone))
        })
    }
}
