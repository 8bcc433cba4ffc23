//! The names the compiler (the macros, `trails-codegen`) and the runtime must agree on, defined
//! once: they agree by construction, not by a test.

use std::fmt;

/// The access level a tool declares (`runtime` for capabilities, the declared scope for meta
/// capabilities). `runtime` ⊂ `builder` ⊂ `dev`: holding a scope holds the ones below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Everyday calls an agent makes on behalf of a user.
    Runtime,
    /// Changing what the server offers (enable/disable tools, …).
    Builder,
    /// Authoring: scaffolding and snapshots; hidden entirely in production.
    Dev,
}

impl Scope {
    /// Every scope, lowest first.
    pub const ALL: [Scope; 3] = [Scope::Runtime, Scope::Builder, Scope::Dev];

    /// The wire name: `runtime`, `builder` or `dev`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Runtime => "runtime",
            Scope::Builder => "builder",
            Scope::Dev => "dev",
        }
    }

    /// The variant's name, as generated code writes it.
    pub const fn variant(self) -> &'static str {
        match self {
            Scope::Runtime => "Runtime",
            Scope::Builder => "Builder",
            Scope::Dev => "Dev",
        }
    }
}

impl std::str::FromStr for Scope {
    type Err = UnknownScope;

    fn from_str(text: &str) -> Result<Scope, UnknownScope> {
        let text = text.trim();
        Scope::ALL.into_iter().find(|scope| scope.as_str() == text).ok_or_else(|| UnknownScope(text.to_owned()))
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A scope name that is none of `runtime`, `builder`, `dev`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownScope(pub String);

impl fmt::Display for UnknownScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown scope `{}`; scopes are runtime, builder and dev", self.0)
    }
}

impl std::error::Error for UnknownScope {}

/// How a node type's instances are shown where they are listed (`#[predicate(role = "title")]`,
/// PDPP's declared display roles): a list item's evidence card is built from the fields with a
/// role, never from field names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisplayRole {
    /// The item's label (a `String`).
    Title,
    /// A short description, the card's excerpt (a `String`).
    Summary,
    /// The long text, the excerpt when there is no summary (a `String`).
    Body,
    /// When it happened or last changed (a `DateTime`).
    Timestamp,
    /// Its state (a `String` or an enum).
    Status,
    /// A human-facing identifier besides the key (a `String` or an integer).
    Identifier,
    /// Where it lives outside the graph (a `String`).
    Url,
}

impl DisplayRole {
    /// Every role, by its name in `#[predicate(role = "…")]` and in every projection.
    pub const ALL: [(&'static str, DisplayRole); 7] = [
        ("title", DisplayRole::Title),
        ("summary", DisplayRole::Summary),
        ("body", DisplayRole::Body),
        ("timestamp", DisplayRole::Timestamp),
        ("status", DisplayRole::Status),
        ("identifier", DisplayRole::Identifier),
        ("url", DisplayRole::Url),
    ];

    /// The role's name, as declared and published.
    pub const fn name(self) -> &'static str {
        match self {
            DisplayRole::Title => "title",
            DisplayRole::Summary => "summary",
            DisplayRole::Body => "body",
            DisplayRole::Timestamp => "timestamp",
            DisplayRole::Status => "status",
            DisplayRole::Identifier => "identifier",
            DisplayRole::Url => "url",
        }
    }

    /// The variant's name, as generated code writes it.
    pub const fn variant(self) -> &'static str {
        match self {
            DisplayRole::Title => "Title",
            DisplayRole::Summary => "Summary",
            DisplayRole::Body => "Body",
            DisplayRole::Timestamp => "Timestamp",
            DisplayRole::Status => "Status",
            DisplayRole::Identifier => "Identifier",
            DisplayRole::Url => "Url",
        }
    }
}

/// A field of a capability's canonical descriptor (its entry in the capability manifest), which
/// the macros write and the runtime serves: every descriptor has all of them, in [`ALL`](Self::ALL)'s
/// order, after `@id` and `@type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanonicalField {
    /// The capability id (`requirements.search`).
    Id,
    /// Its SemVer.
    Version,
    /// What it does.
    Description,
    /// The IRI of the shape of its arguments.
    InputShape,
    /// The IRI of the shape of its result.
    OutputShape,
    /// What must hold before it is called.
    Preconditions,
    /// What it writes, deletes, overwrites and calls out to, and whether it records provenance.
    SideEffects,
    /// Model tokens, dollars and latency a call costs.
    Cost,
    /// The Cedar policies that must allow a call.
    PolicyRequired,
    /// Whether calling it twice is calling it once.
    Idempotent,
    /// The capability it supersedes.
    Deprecates,
    /// The entailment regime it declares for its reads (`none`, `rdfs`, …).
    Reasoning,
    /// The assurance level it declares.
    Assurance,
    /// `stable`, `deprecated`, …
    VersionStatus,
    /// Whether a call can be tried without running it (`_meta.trails.dry_run`, DESIGN §4.12):
    /// always `true`, so an agent reading the manifest knows it may ask first.
    DryRun,
    /// The question the user is asked before a call runs — only where declared, after the others
    /// (not in [`CanonicalField::ALL`]).
    Confirm,
    /// Whether a call may run as an MCP task ([`TaskSupport`]) — only where declared, last (not in
    /// [`CanonicalField::ALL`]).
    Task,
}

impl CanonicalField {
    /// Every field, in the order a descriptor has them.
    pub const ALL: [CanonicalField; 15] = [
        CanonicalField::Id,
        CanonicalField::Version,
        CanonicalField::Description,
        CanonicalField::InputShape,
        CanonicalField::OutputShape,
        CanonicalField::Preconditions,
        CanonicalField::SideEffects,
        CanonicalField::Cost,
        CanonicalField::PolicyRequired,
        CanonicalField::Idempotent,
        CanonicalField::Deprecates,
        CanonicalField::Reasoning,
        CanonicalField::Assurance,
        CanonicalField::VersionStatus,
        CanonicalField::DryRun,
    ];

    /// The field's key in the descriptor.
    pub const fn name(self) -> &'static str {
        match self {
            CanonicalField::Id => "id",
            CanonicalField::Version => "version",
            CanonicalField::Description => "description",
            CanonicalField::InputShape => "input_shape",
            CanonicalField::OutputShape => "output_shape",
            CanonicalField::Preconditions => "preconditions",
            CanonicalField::SideEffects => "side_effects",
            CanonicalField::Cost => "cost",
            CanonicalField::PolicyRequired => "policy_required",
            CanonicalField::Idempotent => "idempotent",
            CanonicalField::Deprecates => "deprecates",
            CanonicalField::Reasoning => "reasoning",
            CanonicalField::Assurance => "assurance",
            CanonicalField::VersionStatus => "version_status",
            CanonicalField::DryRun => "dry_run",
            CanonicalField::Confirm => "confirm",
            CanonicalField::Task => "task",
        }
    }
}

/// Whether a capability's calls may run as MCP tasks (the Tasks extension's modes): the client
/// gets a task handle and polls for the result instead of holding the request open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum TaskSupport {
    /// Never a task: the call holds its request until it ends (the default).
    #[default]
    Forbidden,
    /// A task when the client supports them and the call outlasts the server's inline bound.
    Optional,
    /// Always a task: a client that supports none is refused (`-32021`).
    Required,
}

impl TaskSupport {
    /// Every mode, in the order above.
    pub const ALL: [TaskSupport; 3] = [TaskSupport::Forbidden, TaskSupport::Optional, TaskSupport::Required];

    /// The wire name: `forbidden`, `optional` or `required`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// The variant's name, as generated code writes it.
    pub const fn variant(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "Forbidden",
            TaskSupport::Optional => "Optional",
            TaskSupport::Required => "Required",
        }
    }

    /// The mode named `name`, if it is one.
    pub fn named(name: &str) -> Option<TaskSupport> {
        TaskSupport::ALL.into_iter().find(|mode| mode.as_str() == name)
    }
}

/// What a capability's reads infer (`reasoning = "…"`): under [`Reasoning::Rdfs`] a read of a
/// node type includes the instances of the types that `extends` it (`rdfs:subClassOf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Reasoning {
    /// A type's reads see its own instances only (the default).
    #[default]
    None,
    /// A type's reads see its own instances and those of every type that extends it.
    Rdfs,
}

impl Reasoning {
    /// Every level, in the order above.
    pub const ALL: [Reasoning; 2] = [Reasoning::None, Reasoning::Rdfs];

    /// The wire name: `none` or `rdfs`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Reasoning::None => "none",
            Reasoning::Rdfs => "rdfs",
        }
    }

    /// The variant's name, as generated code writes it.
    pub const fn variant(self) -> &'static str {
        match self {
            Reasoning::None => "None",
            Reasoning::Rdfs => "Rdfs",
        }
    }

    /// The level named `name`, if it is one.
    pub fn named(name: &str) -> Option<Reasoning> {
        Reasoning::ALL.into_iter().find(|level| level.as_str() == name)
    }
}

/// ADR-0013's assurance levels a capability may declare (`assurance = "…"`), each with what it
/// needs: only `L1` — its calls recorded as unsigned provenance activities — is what Trails does.
pub const ASSURANCE_LEVELS: [(&str, &str); 3] = [
    ("L1", "its calls are recorded as unsigned provenance activities"),
    ("L2", "needs JOSE-signed execution records, which Trails does not produce"),
    ("L3", "needs JOSE-signed execution records anchored in an external audit ledger, which Trails does not produce"),
];

/// The `[kg] base` when none is configured: instance IRIs are `urn:trails:kg/<Label>/<key>`.
pub const DEFAULT_KG_BASE: &str = "urn:trails:kg";

/// The named graph a node type's instances live in, under the store's `base`: what the store
/// writes, and what a capability's manifest entry says it writes.
pub fn graph_iri(base: &str, label: &str) -> String {
    format!("{base}/graph/{label}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for (name, role) in DisplayRole::ALL {
            assert_eq!(role.name(), name);
        }
        for scope in Scope::ALL {
            assert_eq!(scope.as_str().parse::<Scope>(), Ok(scope));
            assert_eq!(format!("{scope:?}"), scope.variant());
        }
        for (_, role) in DisplayRole::ALL {
            assert_eq!(format!("{role:?}"), role.variant());
        }
        for mode in TaskSupport::ALL {
            assert_eq!(TaskSupport::named(mode.as_str()), Some(mode));
            assert_eq!(format!("{mode:?}"), mode.variant());
        }
        assert_eq!(
            "admin".parse::<Scope>().unwrap_err().to_string(),
            "unknown scope `admin`; scopes are runtime, builder and dev"
        );
    }
}
