//! The node types and shapes of the requirements app.

use trails::{node_type, shape, Blob, DateTime, Ref};

/// A person who can own requirements.
#[node_type(label = "Person", iri = "https://example.org/req#Person", key = "email")]
#[derive(Clone, Debug)]
pub struct Person {
    /// Display name.
    #[predicate(min_length = 1, max_length = 120, role = "title")]
    pub name: String,
    /// Work e-mail address; identifies the person.
    #[predicate(pattern = r"^[^@\s]+@[^@\s]+\.[^@\s]+$", max_length = 254)]
    pub email: String,
}

/// A product requirement.
#[node_type(
    label = "Requirement",
    iri = "https://example.org/req#Requirement",
    key = "req_id",
    prefixes(req = "https://example.org/req#")
)]
#[derive(Clone, Debug)]
pub struct Requirement {
    /// Stable identifier, `REQ-` followed by digits.
    #[predicate(iri = "req:reqId", pattern = r"^REQ-\d+$", max_length = 16, required)]
    pub req_id: String,
    /// One-line summary.
    #[predicate(min_length = 3, max_length = 200, role = "title")]
    pub title: String,
    /// Lifecycle state.
    #[predicate(one_of = ["proposed", "accepted", "rejected"], role = "status")]
    pub status: String,
    /// 1 (highest) to 5 (lowest).
    #[predicate(min_value = 1, max_value = 5)]
    pub priority: i64,
    /// Free-form labels.
    #[predicate(many, max_count = 10, min_length = 1, max_length = 32)]
    pub tags: Vec<String>,
    /// The person accountable for it.
    pub owner: Option<Ref<Person>>,
    /// When it is due.
    pub due: Option<DateTime>,
    /// Supporting files (specs, screenshots). Sent as base64; models see each file's media type,
    /// size and SHA-256, and hosts that read resources fetch the bytes at its `uri`.
    #[predicate(max_count = 5)]
    pub attachments: Option<Vec<Blob>>,
}

/// Fields to change on a requirement; omitted fields stay as they are.
#[shape(iri = "https://example.org/req/shapes#UpdateRequirement")]
pub struct UpdateRequirement {
    #[predicate(pattern = r"^REQ-\d+$", max_length = 16)]
    pub req_id: String,
    #[predicate(min_length = 3, max_length = 200)]
    pub title: Option<String>,
    #[predicate(one_of = ["proposed", "accepted", "rejected"])]
    pub status: Option<String>,
    #[predicate(min_value = 1, max_value = 5)]
    pub priority: Option<i64>,
}

/// Search criteria; all are optional and combine with AND.
#[shape(iri = "https://example.org/req/shapes#SearchRequirements")]
pub struct SearchRequirements {
    /// Case-insensitive text to find in the title.
    #[predicate(min_length = 1, max_length = 200)]
    pub text: Option<String>,
    #[predicate(one_of = ["proposed", "accepted", "rejected"])]
    pub status: Option<String>,
    /// Most results to return (default 20).
    #[predicate(min_value = 1, max_value = 100)]
    pub limit: Option<u32>,
}

/// Statistics of the store, for builders.
#[shape(iri = "https://example.org/req/shapes#Stats")]
pub struct Stats {
    /// Requirements stored.
    pub requirements: u64,
    /// People stored.
    pub people: u64,
    /// Requirements per status (statuses without any are left out).
    #[predicate(max_count = 3)]
    pub by_status: Vec<StatusCount>,
}

/// How many requirements have one status.
#[shape(iri = "https://example.org/req/shapes#StatusCount")]
pub struct StatusCount {
    /// `proposed`, `accepted` or `rejected`.
    pub status: String,
    /// Requirements with it.
    pub count: u64,
}
