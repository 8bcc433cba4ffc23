//! `[kg]`: the knowledge graph's store, for an app that declares node types — the one `[kg]`
//! configures (the embedded store, or a remote SPARQL server; each a feature), unless the app
//! brought its own (`App::kg`), with `[kg]`'s instance bound and the provenance retention applied.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{within, ConfigError, Env, KgConfig};
use crate::part::{Assembly, BuildError, Part};
use crate::resources::StoreFacts;
use trails_kg::Kg;

/// Where the embedded store lives when neither `[kg] path` nor `TRAILS_KG_PATH` says.
const DEFAULT_KG_PATH: &str = "trails-data";

/// `[kg]`, resolved.
#[derive(Debug, Clone)]
pub(super) struct Store {
    /// The embedded store's data directory (and the ledger's, beside a remote store).
    path: PathBuf,
    /// Base IRI of instances.
    base: String,
    #[cfg_attr(not(feature = "embedded-store"), allow(dead_code))]
    synchronous: trails_kg::Synchronous,
    remote: Option<RemoteKg>,
    /// Heaviest instance the store accepts, when configured (unset: the store's own bound).
    max_instance_bytes: Option<usize>,
    retention: trails_kg::provenance::Retention,
}

/// A remote SPARQL 1.1 store's endpoints and credentials.
#[derive(Clone)]
struct RemoteKg {
    query_url: String,
    update_url: String,
    /// User and password for updates, if the endpoint needs them.
    credentials: Option<(String, String)>,
    /// PEM CA certificates trusted for `https://` besides the system's roots.
    ca_file: Option<PathBuf>,
}

impl std::fmt::Debug for RemoteKg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The password never reaches a log.
        f.debug_struct("RemoteKg")
            .field("query_url", &self.query_url)
            .field("update_url", &self.update_url)
            .field("user", &self.credentials.as_ref().map(|(user, _)| user))
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

/// The data directory the store part settled on, for the parts after it (the ledger lives there
/// when the store is not a SQLite file of its own).
#[cfg_attr(not(feature = "ledger"), allow(dead_code))]
pub(super) struct DataDir(pub(super) PathBuf);

impl Store {
    pub(super) fn resolve(kg: KgConfig, env: &Env) -> Result<Store, ConfigError> {
        // Unset keeps the store's own bound (`Kg::with_max_instance_bytes`, or the default).
        let max_instance_bytes = match kg.max_instance_bytes {
            None => None,
            value => Some(within(
                "[kg] max_instance_bytes",
                value,
                trails_kg::DEFAULT_MAX_INSTANCE_BYTES,
                1024..=64 * 1024 * 1024,
                "1024 to 67108864",
            )?),
        };
        let base = kg.base.unwrap_or_else(|| trails_kg::DEFAULT_BASE.to_owned());
        if oxrdf::NamedNode::new(format!("{}/x", base.trim_end_matches('/'))).is_err() {
            return Err(ConfigError::Value { key: "[kg] base", value: base, expected: "an absolute IRI" });
        }
        let remote = match env.get("TRAILS_KG_QUERY_URL").or(kg.query_url) {
            None => None,
            Some(query_url) => {
                let update_url = env.get("TRAILS_KG_UPDATE_URL").or(kg.update_url).unwrap_or_else(|| query_url.clone());
                for (key, url) in [("[kg] query_url", &query_url), ("[kg] update_url", &update_url)] {
                    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
                    let parsed = url.parse::<http::Uri>();
                    if !scheme_ok || parsed.is_err() {
                        let expected = "an http:// or https:// URL";
                        return Err(ConfigError::Value { key, value: url.clone(), expected });
                    }
                    // Never echo the URL here: it holds a secret.
                    if parsed.ok().and_then(|uri| uri.authority().map(|a| a.as_str().contains('@'))).unwrap_or(false) {
                        let expected = "a URL without user or password (use [kg] user and TRAILS_KG_PASSWORD)";
                        return Err(ConfigError::Value { key, value: "<a URL with credentials>".into(), expected });
                    }
                }
                let ca_file = env.get("TRAILS_KG_CA_FILE").map(PathBuf::from).or(kg.ca_file);
                let credentials =
                    match (env.get("TRAILS_KG_USER").or(kg.user), env.get("TRAILS_KG_PASSWORD").or(kg.password)) {
                        (Some(user), Some(password)) => Some((user, password)),
                        (None, None) => None,
                        _ => {
                            return Err(ConfigError::Value {
                                key: "[kg] user / password",
                                value: "one of the two".into(),
                                expected: "both (TRAILS_KG_USER and TRAILS_KG_PASSWORD) or neither",
                            })
                        }
                    };
                Some(RemoteKg { query_url, update_url, credentials, ca_file })
            }
        };
        let days = kg.provenance_max_age_days.unwrap_or(90);
        Ok(Store {
            path: env
                .get("TRAILS_KG_PATH")
                .map(PathBuf::from)
                .or(kg.path)
                .unwrap_or_else(|| PathBuf::from(DEFAULT_KG_PATH)),
            base,
            synchronous: kg.synchronous.unwrap_or_default(),
            remote,
            max_instance_bytes,
            retention: trails_kg::provenance::Retention {
                keep: kg.provenance_keep.unwrap_or(100_000),
                max_age: chrono::Duration::days(i64::from(days)),
            },
        })
    }
}

impl Part for Store {
    fn name(&self) -> &'static str {
        "store"
    }

    fn assemble(self: Box<Self>, assembly: &mut Assembly<'_>) -> Result<(), BuildError> {
        let kg = match assembly.kg.take() {
            Some(kg) => Some(kg),
            None if assembly.registry.node_types().next().is_some() => Some(self.open()?),
            None => None,
        };
        let kg = match (kg, self.max_instance_bytes) {
            (Some(kg), Some(bytes)) => Some(kg.with_max_instance_bytes(bytes)),
            (kg, _) => kg,
        };
        assembly.kg = kg.map(|kg| kg.with_provenance_retention(self.retention));
        assembly.provide(StoreFacts {
            store: match &self.remote {
                Some(remote) => format!("remote SPARQL endpoint {}", remote.query_url),
                None => format!("embedded store in {}", self.path.display()),
            },
            provenance_keep: self.retention.keep,
            provenance_max_age_days: self.retention.max_age.num_days(),
        });
        assembly.provide(DataDir(self.path));
        Ok(())
    }
}

impl Store {
    /// The store `[kg]` configures: a remote SPARQL server when it names one, else the embedded
    /// store (opened, and rebuilt, now: a bad path fails the start, not the first call).
    // Built without either store, every arm refuses.
    #[cfg_attr(
        not(any(feature = "remote-store", feature = "embedded-store")),
        allow(unreachable_code, unused_variables)
    )]
    fn open(&self) -> Result<Kg, BuildError> {
        let store: Arc<dyn trails_kg::Store> = match &self.remote {
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
            None => Arc::new(trails_kg::EmbeddedStore::open(&self.path, self.synchronous)?),
            #[cfg(not(feature = "embedded-store"))]
            None => {
                return Err(BuildError::NotBuiltIn {
                    what: "node types without a remote store (`[kg] query_url`)".into(),
                    feature: "embedded-store",
                })
            }
        };
        Ok(Kg::new(store, self.base.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(toml: &str, env: &[(&'static str, &str)]) -> Result<Store, ConfigError> {
        let config = crate::config::Config::parse(toml).unwrap();
        let env: Vec<(&str, String)> = env.iter().map(|(name, value)| (*name, (*value).to_owned())).collect();
        let env = Env::new(move |name| env.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone()));
        Store::resolve(config.kg, &env)
    }

    /// Built without a store's feature, a configuration that asks for it stops the start and
    /// names the feature (run by `cargo xtask features`, which builds without them).
    #[test]
    fn a_store_left_out_of_the_build_is_named_when_configured() {
        let remote = store("[kg]\nquery_url = \"http://127.0.0.1:1/query\"\n", &[]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let embedded = store("", &[("TRAILS_KG_PATH", dir.path().join("kg").to_str().unwrap())]).unwrap();
        for (store, feature, built) in [
            (remote, "remote-store", cfg!(feature = "remote-store")),
            (embedded, "embedded-store", cfg!(feature = "embedded-store")),
        ] {
            let refused = store.open().err().map(|error| error.to_string());
            if built {
                assert!(!refused.as_deref().is_some_and(|e| e.contains(feature)), "{refused:?}");
            } else {
                let refused = refused.expect("a store this binary lacks must not open");
                assert!(refused.contains(&format!("`{feature}` feature")), "{refused}");
            }
        }
    }

    #[test]
    fn a_remote_store_keeps_its_password_out_of_urls_and_logs() {
        let with_user = "[kg]\nquery_url = \"http://u:p@db.example/q\"\n";
        let refused = store(with_user, &[]).unwrap_err().to_string();
        assert!(refused.contains("without user or password") && !refused.contains("u:p"), "{refused}");
        let half = store("[kg]\nquery_url = \"http://db.example/q\"\nuser = \"u\"\n", &[]).unwrap_err();
        assert!(half.to_string().contains("TRAILS_KG_PASSWORD"), "{half}");
        let both =
            store("[kg]\nquery_url = \"http://db.example/q\"\nuser = \"u\"\n", &[("TRAILS_KG_PASSWORD", "sesame")]);
        let shown = format!("{:?}", both.unwrap());
        assert!(shown.contains("\"u\"") && !shown.contains("sesame"), "{shown}");
        assert!(store("[kg]\nbase = \"not an iri\"\n", &[]).unwrap_err().to_string().starts_with("[kg] base"));
    }
}
