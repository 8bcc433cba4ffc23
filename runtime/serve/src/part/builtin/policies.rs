//! Cedar policies (the `cedar` feature).

use crate::part::{Assembly, BuildError, Part, Slot};

/// `policy_required`: the Cedar policies of `[policy]`, read now (a missing policy fails the
/// start, naming it), asked before each call.
pub(super) struct Policies;

impl Part for Policies {
    fn name(&self) -> &'static str {
        "policies"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let tools: Vec<_> = assembly.registry.tools().collect();
        let settings = assembly.settings;
        let policies = trails_governance::policy::Policies::load(
            &settings.policy_files,
            settings.policy_entities.as_ref(),
            &tools,
        )?;
        if let Some(policies) = policies {
            assembly.guard(Slot::Authorize, trails_governance::policy::PolicyGuard(policies));
        }
        Ok(())
    }
}
