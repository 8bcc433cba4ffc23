//! `trails::App::new().state(…).run()`: build the server once from the linked tables and the
//! settings, then serve it or answer a command.

use std::any::Any;
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use super::command::{Cli, Command};
use crate::config::Settings;
use crate::part::{Assembly, BuildError, Part, Slot};
use crate::server::{ServeError, Server};
use crate::state::{Brought, Listings, Shared};
use trails_core::auth::{sha256_hex, ScopeSet};
use trails_core::ctx::AppState;
use trails_core::pipeline::{Catalog, Confirmation, Guard, Preconditions, Validation};
use trails_core::registry::{Registry, ShapeEntry, ToolEntry, SHAPES, TOOLS};
use trails_kg::Kg;

/// A Trails application: the linked capabilities plus shared state.
pub struct App {
    state: Option<AppState>,
    name: String,
    version: String,
    kg: Option<Kg>,
    guards: Vec<Arc<dyn Guard>>,
    parts: Vec<Box<dyn Part>>,
    instructions: Option<String>,
    skills: bool,
}

impl Default for App {
    fn default() -> Self {
        App::new()
    }
}

impl App {
    /// An app serving everything linked into this binary, named `trails-app`.
    pub fn new() -> App {
        App {
            state: None,
            name: "trails-app".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            kg: None,
            guards: Vec::new(),
            parts: Vec::new(),
            instructions: None,
            skills: false,
        }
    }

    /// Shared state handlers read with `ctx.state::<T>()`.
    pub fn state<T: Any + Send + Sync>(mut self, state: T) -> App {
        self.state = Some(Arc::new(state));
        self
    }

    /// Serve this knowledge graph instead of the embedded store of `[kg]` (a remote store, or
    /// `Kg::temporary()` in tests). Its instance bound stays its own unless `[kg]
    /// max_instance_bytes` is set, which replaces it.
    pub fn kg(mut self, kg: Kg) -> App {
        self.kg = Some(kg);
        self
    }

    /// Pass every call through `guard` as well: after validation and policies (it sees the
    /// validated arguments, which no guard can change), before idempotency keys and budgets (a
    /// call it refuses claims no key and costs nothing). Guards added later run inside earlier
    /// ones. See `trails::pipeline::Guard`.
    pub fn guard(mut self, guard: impl Guard) -> App {
        self.guards.push(Arc::new(guard));
        self
    }

    /// Add `part` to the server (see [`Part`]): after the built-in parts, in the order parts are
    /// added.
    pub fn part(mut self, part: impl Part) -> App {
        self.parts.push(Box::new(part));
        self
    }

    /// What the server tells a client about itself at `initialize` (and `server/discover`):
    /// how to use its tools together, what to call first. Hosts give it to the model. Trails'
    /// note on how its errors read follows it.
    pub fn instructions(mut self, instructions: impl Into<String>) -> App {
        self.instructions = Some(instructions.into());
        self
    }

    /// Serve a skill per capability namespace, generated from the declarations (MCP's Skills
    /// extension, SEP-2640): what each runtime tool does, what must hold first, what it changes
    /// and costs, whether it asks the user, and a call to start from — at
    /// `skill://<namespace>/SKILL.md`, for hosts that load skills (chapter 2 of the guide).
    pub fn generated_skills(mut self) -> App {
        self.skills = true;
        self
    }

    /// The `serverInfo` name and version clients see.
    pub fn named(mut self, name: impl Into<String>, version: impl Into<String>) -> App {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Assemble the server once: collect the registry, open the store, assemble the parts (the
    /// built-in ones, then the app's), parse descriptors, render the manifest.
    pub fn build(self, settings: Settings) -> Result<Server, BuildError> {
        let registry = Registry::collect()?;
        let Settings { mcp, http, telemetry: _, parts, env } = settings;
        // A key drawn at start seals states no other process (nor this one, restarted) opens.
        if mcp.production && !mcp.request_state.configured {
            tracing::warn!(
                "[mcp] request_state_keys is unset: input-required rounds (questions to the user, `confirm`) are \
                 sealed with a key drawn at start, so a round answered after a restart, or through another \
                 replica, is refused; set the same keys on every replica"
            );
        }
        // The built-in parts (the store among them: an app's own `App::kg` is served instead),
        // each handed its own section, then the app's, which read theirs from what is left.
        let (builtin, sections) = crate::part::builtin::parts(parts, http.public_url.as_deref(), &env)?;
        let parts = builtin.into_iter().chain(self.parts).collect();
        let mut assembled = Assembly::new(&sections, &env, &registry, &self.name, self.kg).assemble(parts)?;
        // The order every call passes (`pipeline::Guard`, `part::Slot`).
        let kg = assembled.kg.take();
        let mut guards: Vec<Arc<dyn Guard>> = Vec::new();
        if let Some(kg) = &kg {
            guards.push(Arc::new(trails_kg::provenance::ProvenanceGuard(kg.clone())));
        }
        let node_types: Vec<_> = registry.node_types().collect();
        guards
            .push(Arc::new(Validation::served(crate::projection::served::served_enums(registry.tools(), &node_types))));
        guards.extend(assembled.guards(Slot::Authorize));
        guards.extend(self.guards);
        guards.extend(assembled.guards(Slot::App));
        // What must hold before the call runs (only where declared), evaluated before the user is
        // asked to confirm it.
        if registry.tools().any(|tool| tool.preconditions().is_some()) {
            guards.push(Arc::new(Preconditions));
        }
        // Asked once the call would run, before anything is charged (only where declared).
        if registry.tools().any(|tool| tool.confirm().is_some()) {
            guards.push(Arc::new(Confirmation));
        }
        guards.extend(assembled.guards(Slot::Settle));
        let brought = Brought {
            state: self.state,
            name: self.name,
            version: self.version,
            instructions: self.instructions,
            skills: self.skills,
            kg,
            guards,
            kept: assembled.kept,
            background: assembled.background,
        };
        Ok(Server::new(Arc::new(Shared::new(&registry, mcp, http, brought))))
    }

    /// Keep the declarations of a library crate in this binary: `include(my_library::link)`, where
    /// `link` is an empty `pub fn link() {}` of that crate. It is not called.
    ///
    /// The macros' tables are collected by the linker, which leaves out a crate nothing in the
    /// binary names, and its capabilities with it. Naming a function of the crate here keeps it;
    /// `run` refuses to serve a binary in which no declaration of the app's own is left.
    pub fn include(self, link: fn()) -> App {
        // Taking the address is what names the crate.
        std::hint::black_box(link);
        self
    }

    /// Parse the command line and run. Logs go to stderr (never stdout: that is the stdio wire).
    /// Exit codes: 0 success, 1 a failure while serving, 2 bad configuration or arguments.
    pub fn run(self) -> ExitCode {
        let cli = Cli::parse();
        // Hashing a token needs no settings: it must work while trails.toml is half written.
        if let Command::HashToken { token } = &cli.command {
            println!("{}", sha256_hex(token));
            return ExitCode::SUCCESS;
        }
        // `--config` / `TRAILS_CONFIG`, else `./trails.toml` when there is one: a newcomer's file
        // beside the binary is not silently ignored. The log says which was read.
        let config = cli.config.clone().or_else(|| {
            let here = std::path::PathBuf::from(DEFAULT_CONFIG);
            here.is_file().then_some(here)
        });
        // Read before logging starts: `[telemetry]` decides where spans go. Its errors are printed.
        let settings = match Settings::load(config.as_deref()) {
            Ok(settings) => settings,
            Err(error) => return fail(&error, ExitCode::from(2)),
        };
        let serving = matches!(cli.command, Command::Serve { .. });
        let _logging = match crate::server::logging(&settings, &self.name, serving) {
            Ok(logging) => logging,
            Err(error) => return fail(&error, ExitCode::from(2)),
        };
        match &config {
            Some(path) => {
                tracing::info!(config = %path.display(), "configuration read from this file and TRAILS_* variables")
            }
            None => tracing::info!("no trails.toml here and no --config: defaults and TRAILS_* variables"),
        }
        // An app with nothing of its own may still scaffold its first declarations: `meta`, and a
        // process that serves the dev scope (the `gen.*` tools), only warn.
        let others = !trails_core::registry::PROMPTS.is_empty() || !trails_core::registry::RESOURCES.is_empty();
        if !others && !declares_anything(TOOLS.iter(), SHAPES.iter()) {
            let error = BuildError::NothingDeclared;
            match cli.command {
                Command::Meta { .. } => tracing::warn!("{error}"),
                _ if settings.mcp.process_scopes.contains(trails_core::auth::Scope::Dev) => tracing::warn!("{error}"),
                _ => return fail(&error, error.exit_code()),
            }
        }
        match cli.command {
            // Answered before the settings were read.
            Command::HashToken { .. } => ExitCode::SUCCESS,
            Command::Tools { scopes } => {
                let scopes = match scopes.map(|s| ScopeSet::parse_list(s.split(','))) {
                    Some(Ok(set)) => set,
                    Some(Err(error)) => return fail(&error, ExitCode::from(2)),
                    None => settings.mcp.process_scopes,
                };
                // A trails.toml `serve` would refuse is refused here too: the parts' sections
                // resolve and each section is a part's (nothing is opened or connected).
                let public_url = settings.http.public_url.as_deref();
                let checked = crate::part::builtin::parts(settings.parts.clone(), public_url, &settings.env).and_then(
                    |(builtin, sections)| {
                        let parts: Vec<Box<dyn Part>> = builtin.into_iter().chain(self.parts).collect();
                        crate::part::assembly::check_sections(&parts, &sections)
                    },
                );
                if let Err(error) = checked {
                    return fail(&error, error.exit_code());
                }
                // Listing needs only the tables: the store is not opened.
                match tools_json(&settings, scopes) {
                    Ok(json) => {
                        let _ = writeln!(std::io::stdout().lock(), "{json}");
                        ExitCode::SUCCESS
                    }
                    Err(error) => fail(&error, ExitCode::FAILURE),
                }
            }
            Command::Meta { capability, arguments } => {
                // Any spelling a person might type: `gen.shape`, `gen_shape`, the id
                // `trails.meta.gen.shape` or the tool name `trails_meta_gen_shape`.
                let id = if capability.starts_with("trails.meta.") || capability.starts_with("trails_meta_") {
                    capability
                } else if capability.contains('_') {
                    format!("trails_meta_{capability}")
                } else {
                    format!("trails.meta.{capability}")
                };
                let arguments = match serde_json::from_str::<serde_json::Value>(arguments.as_deref().unwrap_or("{}")) {
                    Ok(serde_json::Value::Object(arguments)) => arguments,
                    Ok(_) => return fail(&"the arguments are a JSON object", ExitCode::from(2)),
                    Err(error) => return fail(&format!("the arguments are not JSON: {error}"), ExitCode::from(2)),
                };
                let server = match self.build(settings) {
                    Ok(server) => server,
                    Err(error) => return fail(&error, error.exit_code()),
                };
                let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
                    Ok(runtime) => runtime,
                    Err(error) => return fail(&error, ExitCode::FAILURE),
                };
                match runtime.block_on(server.call_meta(&id, arguments)) {
                    Ok(text) => {
                        let _ = writeln!(std::io::stdout().lock(), "{text}");
                        ExitCode::SUCCESS
                    }
                    Err(error) => {
                        eprintln!("{error}");
                        ExitCode::FAILURE
                    }
                }
            }
            Command::Serve { stdio, http } => {
                let transport = match Transport::chosen(stdio, http, settings.http.bind) {
                    Ok(transport) => transport,
                    Err(error) => return fail(&error, error.exit_code()),
                };
                let server = match self.build(settings) {
                    Ok(server) => server,
                    Err(error) => return fail(&error, error.exit_code()),
                };
                match serve(server, transport) {
                    Ok(()) => ExitCode::SUCCESS,
                    // Configuration to fix, like any other: 2.
                    Err(error @ ServeError::HostPolicy(_)) => fail(&error, ExitCode::from(2)),
                    Err(error) => fail(&error, ExitCode::FAILURE),
                }
            }
        }
    }
}

/// Whether any tool or shape is the app's own, not one of the built-ins in `builtin/` (every
/// prompt and resource is the app's).
fn declares_anything(
    tools: impl IntoIterator<Item = &'static ToolEntry>,
    shapes: impl IntoIterator<Item = &'static ShapeEntry>,
) -> bool {
    let own = |source: &str| !source.starts_with("trails_serve::builtin::");
    tools.into_iter().any(|tool| own(tool.source())) || shapes.into_iter().any(|shape| own(shape.source()))
}

fn tools_json(settings: &Settings, scopes: ScopeSet) -> Result<String, BuildError> {
    let registry = Registry::collect()?;
    let catalog = Catalog::new(&registry, settings.mcp.production);
    let own = crate::projection::served::own_descriptors(registry.tools(), &registry.node_types().collect::<Vec<_>>());
    // `tools/list` shows no canonical descriptor.
    let tools = Listings::new(&catalog, settings.mcp.manifest_enabled, own, Default::default())
        .list(&catalog, trails_core::pipeline::View::of(scopes));
    Ok(serde_json::to_string_pretty(tools.as_ref()).expect("tools serialise"))
}

/// What `serve` speaks, among the transports this binary was built with.
enum Transport {
    #[cfg(feature = "stdio")]
    Stdio,
    #[cfg(feature = "http")]
    Http(SocketAddr),
}

impl Transport {
    /// `--stdio`, `--http [ADDR]` (`None`: not given; `Some(None)`: no address, so `bind`), or
    /// neither: HTTP on `bind` (`[http] bind`), or stdio in a binary built without HTTP. A
    /// transport left out of the build is refused by its feature's name.
    fn chosen(stdio: bool, http: Option<Option<SocketAddr>>, bind: SocketAddr) -> Result<Transport, BuildError> {
        if stdio {
            #[cfg(feature = "stdio")]
            return Ok(Transport::Stdio);
            #[cfg(not(feature = "stdio"))]
            return Err(not_built_in("`serve --stdio`", "stdio"));
        }
        #[cfg(feature = "http")]
        return Ok(Transport::Http(http.flatten().unwrap_or(bind)));
        #[cfg(not(feature = "http"))]
        {
            let _ = bind;
            #[cfg(feature = "stdio")]
            if http.is_none() {
                return Ok(Transport::Stdio);
            }
            Err(not_built_in(if http.is_some() { "`serve --http`" } else { "`serve`" }, "http"))
        }
    }
}

#[cfg(not(all(feature = "http", feature = "stdio")))]
fn not_built_in(what: &str, feature: &'static str) -> BuildError {
    BuildError::NotBuiltIn { what: what.to_owned(), feature }
}

#[cfg_attr(not(any(feature = "http", feature = "stdio")), allow(unused_variables))]
fn serve(server: Server, transport: Transport) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(ServeError::Runtime)?;
    runtime.block_on(async move {
        match transport {
            #[cfg(feature = "stdio")]
            Transport::Stdio => server.serve_stdio().await,
            #[cfg(feature = "http")]
            Transport::Http(bind) => {
                let listener = tokio::net::TcpListener::bind(bind)
                    .await
                    .map_err(|source| ServeError::Bind { addr: bind, source })?;
                server.serve_http(listener).await
            }
        }
    })
}

fn fail(error: &dyn std::fmt::Display, code: ExitCode) -> ExitCode {
    eprintln!("error: {error}");
    code
}

/// The configuration file read from the working directory when no `--config` names one.
pub(crate) const DEFAULT_CONFIG: &str = "trails.toml";

#[cfg(test)]
mod tests {
    use super::*;

    /// Built without Cedar, policies in the configuration stop the start rather than go unenforced.
    #[test]
    fn policies_without_cedar_are_refused_by_name() {
        let settings = Settings::from_toml("[policy]\nfiles = [\"policies.cedar\"]\n");
        let refused = App::new().build(settings).err().map(|error| error.to_string());
        if cfg!(feature = "cedar") {
            assert_eq!(refused, None);
        } else {
            assert_eq!(
                refused.as_deref(),
                Some("`[policy] files` needs trails-mcp's `cedar` feature, which this binary was built without: enable it in Cargo.toml")
            );
        }
    }

    /// This unit-test binary holds only the built-ins: what an app binary whose capabilities the
    /// linker left out looks like. `run` refuses it, naming the fix.
    #[test]
    fn a_binary_with_only_the_built_ins_declares_nothing() {
        let builtins: Vec<&str> = TOOLS.iter().map(|tool| tool.source()).collect();
        assert!(builtins.iter().all(|source| source.starts_with("trails_serve::builtin::")), "{builtins:?}");
        assert!(!declares_anything(TOOLS.iter(), SHAPES.iter()));
        assert_eq!(BuildError::NothingDeclared.exit_code(), ExitCode::from(2));
        assert!(BuildError::NothingDeclared.to_string().contains("App::new().include(my_library::link)"));
    }

    /// Built without the ledger, budget limits stop the start rather than go unenforced.
    #[test]
    fn budget_limits_without_the_ledger_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let kg = format!("[kg]\npath = {:?}\n", dir.path().join("kg"));
        assert!(App::new().build(Settings::from_toml(&kg)).is_ok());
        let token = format!(
            "{kg}[[http.tokens]]\nname = \"agent\"\nsha256 = \"{}\"\nscopes = [\"runtime\"]\nbudget = {{ tokens = 10 }}\n",
            "0".repeat(64)
        );
        let settings = Settings::from_toml(&token);
        let refused = App::new().build(settings).err().map(|error| error.to_string());
        if cfg!(feature = "ledger") {
            assert_eq!(refused, None);
        } else {
            assert_eq!(
                refused.as_deref(),
                Some("token `agent`'s `budget` needs trails-mcp's `ledger` feature, which this binary was built without: enable it in Cargo.toml")
            );
        }
    }

    /// Built without `oauth`, an `[auth.oauth]` section stops the start rather than leave every
    /// token refused; built with it, a CA file that cannot be read does.
    #[test]
    fn oauth_without_the_feature_is_refused_by_name() {
        let toml =
            "[http]\npublic_url = \"https://mcp.example.com\"\n[auth.oauth]\nissuer = \"https://id.example.com\"\n";
        let dir = tempfile::tempdir().unwrap();
        let toml = format!("[kg]\npath = {:?}\n{toml}", dir.path().join("kg"));
        let settings = Settings::from_toml(&toml);
        let refused = App::new().build(settings.clone()).err().map(|error| error.to_string());
        if cfg!(feature = "oauth") {
            assert_eq!(refused, None);
            let missing = format!("{toml}ca_file = \"{}\"\n", dir.path().join("nope.pem").display());
            let settings = Settings::from_toml(&missing);
            let refused = App::new().build(settings).err().map(|error| error.to_string()).unwrap_or_default();
            assert!(refused.starts_with("[auth.oauth]: cannot read ca_file"), "{refused}");
        } else {
            assert_eq!(
                refused.as_deref(),
                Some("[auth.oauth] (an OAuth resource server) needs trails-mcp's `oauth` feature, which this binary was built without: enable it in Cargo.toml")
            );
        }
    }

    /// `serve` speaks what was built in, and names the feature of a transport left out.
    #[test]
    fn a_transport_left_out_of_the_build_is_refused_by_name() {
        // `[http] bind` as configured, not the default.
        let bind = "127.0.0.1:9100".parse().unwrap();
        let chosen = |stdio, http| Transport::chosen(stdio, http, bind).map_err(|error| error.to_string());
        let refused = |what: &str, feature: &str| {
            Some(format!(
                "{what} needs trails-mcp's `{feature}` feature, which this binary was built without: enable it in Cargo.toml"
            ))
        };
        match chosen(true, None) {
            #[cfg(feature = "stdio")]
            Ok(Transport::Stdio) => {}
            other => assert!(!cfg!(feature = "stdio") && other.err() == refused("`serve --stdio`", "stdio")),
        }
        let other: std::net::SocketAddr = "127.0.0.1:9".parse().unwrap();
        match chosen(false, Some(Some(other))) {
            #[cfg(feature = "http")]
            Ok(Transport::Http(addr)) => assert_eq!(addr, other),
            other => assert!(!cfg!(feature = "http") && other.err() == refused("`serve --http`", "http")),
        }
        // `--http` without an address: `[http] bind`.
        match chosen(false, Some(None)) {
            #[cfg(feature = "http")]
            Ok(Transport::Http(addr)) => assert_eq!(addr, bind),
            other => assert!(!cfg!(feature = "http") && other.err() == refused("`serve --http`", "http")),
        }
        // No flag: HTTP on `[http] bind`, else stdio, else neither.
        match chosen(false, None) {
            #[cfg(feature = "http")]
            Ok(Transport::Http(addr)) => assert_eq!(addr, bind),
            #[cfg(all(feature = "stdio", not(feature = "http")))]
            Ok(Transport::Stdio) => {}
            other => {
                assert!(!cfg!(any(feature = "http", feature = "stdio")) && other.err() == refused("`serve`", "http"))
            }
        }
    }
}
