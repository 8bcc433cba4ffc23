//! `[policy]`: Cedar policies (the `cedar` feature).

use std::path::PathBuf;

use crate::config::{Env, PolicyConfig};
use crate::part::{Assembly, BuildError, Part, Slot};

/// `policy_required`: the Cedar policies of `[policy]`, read when the server is assembled (a
/// missing policy fails the start, naming it), asked before each call.
pub(super) struct Policies {
    files: Vec<PathBuf>,
    entities: Option<PathBuf>,
}

impl Policies {
    pub(super) fn resolve(config: PolicyConfig, env: &Env) -> Policies {
        Policies {
            files: super::policy_files(&config, env),
            entities: env.get("TRAILS_POLICY_ENTITIES").map(PathBuf::from).or(config.entities),
        }
    }
}

impl Part for Policies {
    fn name(&self) -> &'static str {
        "policies"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let tools: Vec<_> = assembly.registry.tools().collect();
        let policies = trails_governance::policy::Policies::load(&self.files, self.entities.as_ref(), &tools)?;
        if let Some(policies) = policies {
            assembly.guard(Slot::Authorize, trails_governance::policy::PolicyGuard(policies));
        }
        Ok(())
    }
}
