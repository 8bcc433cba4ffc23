//! The knowledge graph's store, for an app that declares node types: the one `[kg]` configures
//! (the embedded store, or a remote SPARQL server; each a feature), unless the app brought its
//! own (`App::kg`), with `[kg]`'s instance bound and the provenance retention applied.

use std::sync::Arc;

use crate::config::Settings;
use crate::part::{Assembly, BuildError, Part};
use trails_kg::Kg;

pub(super) struct Store;

impl Part for Store {
    fn name(&self) -> &'static str {
        "store"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let settings = assembly.settings;
        let kg = match assembly.kg.take() {
            Some(kg) => Some(kg),
            None if assembly.registry.node_types().next().is_some() => Some(open(settings)?),
            None => None,
        };
        let kg = match (kg, settings.kg_max_instance_bytes) {
            (Some(kg), Some(bytes)) => Some(kg.with_max_instance_bytes(bytes)),
            (kg, _) => kg,
        };
        let retention =
            trails_kg::provenance::Retention { keep: settings.provenance_keep, max_age: settings.provenance_max_age };
        assembly.kg = kg.map(|kg| kg.with_provenance_retention(retention));
        Ok(())
    }
}

/// The store `[kg]` configures: a remote SPARQL server when it names one, else the embedded store
/// (opened, and rebuilt, now: a bad path fails the start, not the first call).
// Built without either store, every arm refuses.
#[cfg_attr(not(any(feature = "remote-store", feature = "embedded-store")), allow(unreachable_code, unused_variables))]
fn open(settings: &Settings) -> Result<Kg, BuildError> {
    let store: Arc<dyn trails_kg::Store> = match &settings.kg_remote {
        #[cfg(feature = "remote-store")]
        Some(remote) => {
            let mut store = trails_kg::RemoteStore::builder(&remote.query_url).update_url(&remote.update_url);
            if let Some((user, password)) = &remote.credentials {
                store = store.credentials(user, password);
            }
            if let Some(path) = &remote.ca_file {
                let pem = std::fs::read(path).map_err(|source| trails_kg::StoreError::Io {
                    what: "cannot read the CA file",
                    path: path.clone(),
                    source,
                })?;
                store = store.ca_certificates_pem(pem);
            }
            Arc::new(store.build()?)
        }
        #[cfg(not(feature = "remote-store"))]
        Some(_) => {
            return Err(BuildError::NotBuiltIn {
                what: "a remote store (`[kg] query_url`)".into(),
                feature: "remote-store",
            })
        }
        #[cfg(feature = "embedded-store")]
        None => Arc::new(trails_kg::EmbeddedStore::open(&settings.kg_path, settings.kg_synchronous)?),
        #[cfg(not(feature = "embedded-store"))]
        None => {
            return Err(BuildError::NotBuiltIn {
                what: "node types without a remote store (`[kg] query_url`)".into(),
                feature: "embedded-store",
            })
        }
    };
    Ok(Kg::new(store, settings.kg_base.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// Built without a store's feature, a configuration that asks for it stops the start and
    /// names the feature (run by `cargo xtask features`, which builds without them).
    #[test]
    fn a_store_left_out_of_the_build_is_named_when_configured() {
        let remote = Config::parse("[kg]\nquery_url = \"http://127.0.0.1:1/query\"\n").unwrap();
        let remote = Settings::resolve(remote, &|_| None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let embedded = Settings { kg_path: dir.path().join("kg"), ..Settings::default() };
        for (settings, feature, built) in [
            (remote, "remote-store", cfg!(feature = "remote-store")),
            (embedded, "embedded-store", cfg!(feature = "embedded-store")),
        ] {
            let refused = open(&settings).err().map(|error| error.to_string());
            if built {
                assert!(!refused.as_deref().is_some_and(|e| e.contains(feature)), "{refused:?}");
            } else {
                let refused = refused.expect("a store this binary lacks must not open");
                assert!(refused.contains(&format!("`{feature}` feature")), "{refused}");
            }
        }
    }
}
