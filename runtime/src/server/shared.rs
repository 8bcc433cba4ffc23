//! Everything one process serves, built once and shared by every connection and transport.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::config::Settings;
use crate::declare::NodeTypeInfo;
use crate::kg::provenance::{Call, Touched};
use crate::kg::Kg;
use crate::registry::{Registry, ShapeEntry};

use super::catalog::{Catalog, NoSuchTool};
use super::ctx::AppState;
use super::notifier::Subscriptions;

/// Everything built once per process and shared by every connection.
pub(crate) struct Shared {
    pub(crate) catalog: Catalog,
    pub(crate) settings: Settings,
    pub(crate) state: Option<AppState>,
    pub(crate) name: String,
    pub(crate) version: String,
    /// The capability manifest, rendered once.
    pub(crate) manifest: String,
    /// Sessions and listeners, told about tool-list and knowledge-graph changes.
    pub(crate) subscriptions: Arc<Subscriptions>,
    /// The knowledge graph every call gets (`None`: the app declares no node type).
    pub(crate) kg: Option<Kg>,
    /// The Cedar policies of `policy_required` capabilities (`None`: no capability requires one).
    pub(crate) policies: Option<crate::policy::Policies>,
    /// What each caller spent of its budget (`[budget]`).
    pub(crate) budgets: crate::budget::Budgets,
    /// Idempotency keys and the results they replay.
    pub(crate) idempotency: crate::idempotency::Ledger,
    /// The node types, in registry order (the KG resources).
    pub(crate) node_types: Vec<&'static NodeTypeInfo>,
    /// Every shape, in registry order (`trails://schema`).
    pub(crate) shape_entries: Vec<&'static ShapeEntry>,
    /// The SHACL shapes, by name and IRI (`/shapes`).
    pub(crate) shapes: crate::projection::shacl::Shapes,
    /// Calls since provenance was last pruned, and how many activities pruning dropped.
    pub(crate) provenance_calls: AtomicUsize,
    pub(crate) provenance_pruned: AtomicU64,
    /// A pruning pass is running: at most one at a time, since a pass counts, then reads the
    /// oldest, then deletes, and two interleaved passes would delete more than they should.
    pruning: AtomicBool,
}

/// Prune provenance every this many calls.
const PRUNE_EVERY: usize = 100;

impl Shared {
    pub(crate) fn new(
        registry: &Registry,
        settings: Settings,
        state: Option<AppState>,
        name: String,
        version: String,
        kg: Option<Kg>,
    ) -> Shared {
        let catalog = Catalog::new(registry, settings.production);
        let manifest = crate::projection::manifest(registry);
        // Every initialized session is a subscriber (tool-list changes), and so is every
        // 2026-07-28 `subscriptions/listen` request: room for as many of each as of sessions.
        let subscriptions = Arc::new(Subscriptions::new(
            settings.max_sessions,
            settings.max_anonymous_sessions,
            settings.max_subscriptions,
            settings.subscription_queue,
        ));
        if let Some(kg) = &kg {
            let observer: std::sync::Weak<dyn crate::kg::changes::Observer> = Arc::downgrade(&subscriptions) as _;
            kg.observe(observer);
        }
        let ledger_path = crate::ledger::prepare(&settings, kg.as_ref());
        let budgets = crate::budget::Budgets::new(settings.budget.clone(), ledger_path.clone());
        let retention = crate::idempotency::Retention {
            keep: settings.idempotency_retention,
            max_keys: settings.idempotency_max_keys,
        };
        let idempotency = crate::idempotency::Ledger::new(ledger_path, retention);
        Shared {
            catalog,
            budgets,
            idempotency,
            settings,
            state,
            name,
            version,
            manifest,
            subscriptions,
            kg,
            policies: None,
            node_types: registry.node_types().collect(),
            shapes: crate::projection::shacl::Shapes::new(
                &registry.shapes().collect::<Vec<_>>(),
                &registry.tools().collect::<Vec<_>>(),
            ),
            shape_entries: registry.shapes().collect(),
            provenance_calls: AtomicUsize::new(0),
            provenance_pruned: AtomicU64::new(0),
            pruning: AtomicBool::new(false),
        }
    }

    /// These policies decide the calls of `policy_required` capabilities.
    pub(crate) fn with_policies(mut self, policies: Option<crate::policy::Policies>) -> Shared {
        self.policies = policies;
        self
    }

    /// Record the activity of a finished call (durable before the call answers), and now and
    /// then prune old ones in the background. A failure is logged: it never fails the call.
    pub(crate) async fn record_activity(self: &Arc<Self>, kg: &Kg, call: &Call<'_>, touched: &Touched) {
        if let Err(error) = kg.record_activity(call, touched).await {
            tracing::error!(%error, trace_id = call.trace_id, "could not record provenance");
        }
        let due = self.provenance_calls.fetch_add(1, Ordering::Relaxed) + 1 >= PRUNE_EVERY;
        if due && !self.pruning.swap(true, Ordering::AcqRel) {
            self.provenance_calls.store(0, Ordering::Relaxed);
            let (shared, kg) = (self.clone(), kg.clone());
            tokio::spawn(async move {
                let (keep, max_age) = (shared.settings.provenance_keep, shared.settings.provenance_max_age);
                // Pass after pass until a pass has less than a full batch to drop: under load
                // faster than one pass per PRUNE_EVERY calls, pruning catches up instead of
                // letting the log (and the engine's memory) grow until the load stops.
                loop {
                    match kg.prune_provenance(keep, max_age).await {
                        Ok(dropped) => {
                            shared.provenance_pruned.fetch_add(dropped as u64, Ordering::Relaxed);
                            if dropped < crate::kg::PRUNE_BATCH {
                                break;
                            }
                        }
                        Err(error) => {
                            tracing::error!(%error, "pruning provenance failed");
                            break;
                        }
                    }
                }
                shared.pruning.store(false, Ordering::Release);
            });
        }
    }

    /// Enable or disable a tool at run time and tell every connected session.
    pub(crate) fn set_tool_enabled(&self, name: &str, enabled: bool) -> Result<bool, NoSuchTool> {
        let changed = self.catalog.set_enabled(name, enabled)?;
        if changed {
            tracing::info!(tool = name, enabled, "tool availability changed");
            self.subscriptions.tool_list_changed();
        }
        Ok(changed)
    }
}
