//! `[tasks]`: capabilities declared `task` run as MCP tasks, their records kept in the ledger
//! (the `ledger` feature). Nothing opens and nothing runs in the background unless a capability
//! declares `task`.

use std::sync::Arc;
use std::time::Duration;

use crate::config::{within, ConfigError, TasksConfig};
use crate::part::{Assembly, BuildError, Part};
use crate::state::tasks::{now_ms, TaskSettings, Tasks};
use crate::state::Running;
use trails_core::TaskSupport;
use trails_governance::tasks::{LedgerTasks, Status, TaskStore};

/// The tasks part, its section resolved.
pub(super) struct TasksPart {
    settings: TaskSettings,
}

impl TasksPart {
    pub(super) fn resolve(config: TasksConfig) -> Result<TasksPart, ConfigError> {
        let inline_ms = within("[tasks] inline_ms", config.inline_ms, 500, 0..=60_000, "0 to 60000")?;
        let ttl_secs = within("[tasks] ttl_secs", config.ttl_secs, 3600, 10..=2_678_400, "10 to 2678400")?;
        let poll_ms = within("[tasks] poll_interval_ms", config.poll_interval_ms, 1000, 100..=60_000, "100 to 60000")?;
        let max_live = within("[tasks] max_live_per_caller", config.max_live_per_caller, 64, 1..=10_000, "1 to 10000")?;
        let lease_secs = within("[tasks] lease_secs", config.lease_secs, 15, 2..=600, "2 to 600")?;
        let max_kept =
            within("[tasks] max_kept_per_caller", config.max_kept_per_caller, 1000, 1..=1_000_000, "1 to 1000000")?;
        Ok(TasksPart {
            settings: TaskSettings {
                inline: Duration::from_millis(inline_ms),
                ttl: Duration::from_secs(ttl_secs),
                poll_interval: Duration::from_millis(poll_ms),
                max_live,
                lease: Duration::from_secs(lease_secs),
                max_kept,
            },
        })
    }
}

impl Part for TasksPart {
    fn name(&self) -> &'static str {
        "tasks"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        if !assembly.registry.tools().any(|tool| tool.task() != TaskSupport::Forbidden) {
            return Ok(());
        }
        let store = match shared(assembly) {
            Some(shared) => shared,
            None => {
                let store_file = assembly.kg.as_ref().and_then(|kg| kg.store().sqlite_path());
                let dir =
                    &assembly.provided::<super::store::DataDir>().expect("the store part assembles before tasks").0;
                let path = trails_governance::ledger::prepare(dir, store_file);
                let opened = LedgerTasks::open(&path)
                    .map_err(|error| BuildError::Part { part: "tasks", source: error.into() })?;
                Arc::new(opened) as Arc<dyn TaskStore>
            }
        };
        let tasks = Arc::new(Tasks::new(store, self.settings));
        assembly.provide(tasks.clone());
        assembly.background(move |running| tend(tasks, running));
        Ok(())
    }
}

/// The replicas' records, in Redis, when `[coordination]` connected.
#[cfg(feature = "redis")]
fn shared(assembly: &Assembly<'_>) -> Option<Arc<dyn TaskStore>> {
    let replicas = assembly.provided::<crate::state::Replicas>()?;
    Some(Arc::new(trails_governance::tasks::SharedTasks::new(replicas.governance().coordinator)))
}

#[cfg(not(feature = "redis"))]
fn shared(_: &Assembly<'_>) -> Option<Arc<dyn TaskStore>> {
    None
}

/// While the server runs: renew the leases of the tasks this replica runs, take what clients
/// did to them through another replica (a shared store only), end those that expired, and fail
/// the tasks of replicas that stopped. When it stops: stop the tasks running here and fail
/// their records at once (a restart finds them failed with a reason, not running).
async fn tend(tasks: Arc<Tasks>, running: Running) {
    let mut tick = tokio::time::interval(tasks.settings.tick());
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Reaping (a write) every third of a lease: a dead replica's tasks fail within 4/3 of it.
    let reap_every = (tasks.settings.lease / 3).max(tasks.settings.tick());
    let mut reaped = std::time::Instant::now();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = running.stopping() => break,
        }
        let now = now_ms();
        let runs = tasks.runs();
        for (id, run) in &runs {
            if now >= run.expires_ms {
                run.cancel.cancel();
            }
            // Cancelled (or failed) elsewhere: through another replica, another process.
            match tasks.store.load(id, now).await {
                Ok(Some(task)) if !task.status.is_terminal() => {}
                Ok(_) => run.cancel.cancel(),
                Err(error) => tracing::warn!(%error, task = %id, "a running task's record was not read"),
            }
            let progress = run.progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
            if let Some(message) = progress {
                let change = Box::new(move |task: &mut trails_governance::tasks::Task| {
                    if task.status == Status::Working {
                        task.status_message = Some(message.clone());
                    }
                });
                if let Err(error) = tasks.store.update(id, now, change).await {
                    tracing::warn!(%error, task = %id, "a task's progress was not kept");
                }
            }
        }
        let ids: Vec<String> = runs.into_iter().map(|(id, _)| id).collect();
        let lease = now.saturating_add(tasks.settings.lease_ms());
        if !ids.is_empty() {
            if let Err(error) = tasks.store.renew(&tasks.runner, ids, lease).await {
                tracing::error!(%error, "the leases of this replica's tasks were not renewed");
            }
        }
        if reaped.elapsed() < reap_every || tasks.store.idle() {
            continue;
        }
        reaped = std::time::Instant::now();
        match tasks.store.reap(now).await {
            Ok((0, _)) => {}
            Ok((failed, _)) => tracing::warn!(failed, "tasks whose server stopped before they ended are failed"),
            Err(error) => tracing::error!(%error, "stopped and expired tasks were not cleared"),
        }
    }
    let now = now_ms();
    for (id, run) in tasks.runs() {
        run.cancel.cancel();
        let change = Box::new(|task: &mut trails_governance::tasks::Task| {
            task.status = Status::Failed;
            task.status_message = Some("the server stopped before the task ended".to_owned());
            task.input_requests.clear();
            task.input_responses.clear();
            task.outcome = Some(trails_governance::tasks::runner_stopped());
        });
        if let Err(error) = tasks.store.update(&id, now, change).await {
            tracing::error!(%error, task = %id, "a task stopped with the server was not failed; its lease will fail it");
        }
    }
}
