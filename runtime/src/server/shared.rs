//! Everything one process serves, built once and shared by every connection and transport.

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
}

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
        let retention =
            crate::kg::provenance::Retention { keep: settings.provenance_keep, max_age: settings.provenance_max_age };
        let kg = kg.map(|kg| kg.with_provenance_retention(retention));
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
        }
    }

    /// These policies decide the calls of `policy_required` capabilities.
    pub(crate) fn with_policies(mut self, policies: Option<crate::policy::Policies>) -> Shared {
        self.policies = policies;
        self
    }

    /// Record the activity of a finished call (durable before the call answers; see
    /// `Kg::record_activity`). A failure is logged: it never fails the call.
    pub(crate) async fn record_activity(&self, kg: &Kg, call: &Call<'_>, touched: &Touched) {
        if let Err(error) = kg.record_activity(call, touched).await {
            tracing::error!(%error, trace_id = call.trace_id, "could not record provenance");
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
