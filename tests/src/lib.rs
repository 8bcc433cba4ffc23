//! The fixture app of the golden-file tests: `trails.meta.ping`
//! (built in), `research.search`, one capability carrying the full constraint matrix (one
//! fixture per mapped JSON Schema keyword), one node-type-typed parameter, and a namespaced meta
//! capability so every `_meta.trails` key appears in a golden.

pub mod client;
pub mod golden;
pub mod in_process;
pub mod launch;
pub mod servers;

pub use launch::{KilledOnDrop, Launch, Served, StdioApp};

use trails::prelude::*;

/// A person who can own requirements.
#[node_type(label = "Reviewer", iri = "https://example.org/people#Reviewer", unique = ["email"])]
pub struct Person {
    #[predicate(min_length = 1, max_length = 120, role = "title")]
    pub name: String,
    /// Work e-mail address.
    #[predicate(pattern = r"^[^@\s]+@[^@\s]+$")]
    pub email: String,
}

/// A research paper returned by `research_search`.
#[shape(iri = "https://example.org/research#Paper")]
pub struct Paper {
    pub title: String,
    pub year: u16,
    pub authors: Vec<String>,
}

/// Sort order of search results.
#[shape(rename_all = "lowercase")]
pub enum Order {
    Asc,
    Desc,
}

#[shape(iri = "https://example.org/research#SearchInput")]
pub struct SearchInput {
    /// Free-text query.
    #[predicate(min_length = 1, max_length = 200)]
    pub query: String,
    /// Most results to return (default 10).
    #[predicate(min_value = 1, max_value = 100)]
    pub limit: Option<u32>,
    pub order: Option<Order>,
}

/// Search the paper index by free text.
#[capability(
    id = "research.search",
    version = "1.2.0",
    side_effects(none),
    idempotent,
    cost(tokens = 40, latency_p50_ms = 3, latency_p95_ms = 12)
)]
pub async fn search(_ctx: &Ctx, input: SearchInput) -> Result<Vec<Paper>> {
    let limit = input.limit.unwrap_or(10) as usize;
    let mut papers: Vec<Paper> = CORPUS
        .iter()
        .filter(|(title, _)| title.to_lowercase().contains(&input.query.to_lowercase()))
        .map(|(title, year)| Paper { title: (*title).to_owned(), year: *year, authors: vec!["A. Author".into()] })
        .collect();
    papers.sort_by_key(|p| p.year);
    if matches!(input.order, Some(Order::Desc)) {
        papers.reverse();
    }
    papers.truncate(limit);
    Ok(papers)
}

const CORPUS: &[(&str, u16)] = &[
    ("Shapes Constraint Language", 2017),
    ("Provenance of knowledge graphs", 2021),
    ("Model Context Protocol in practice", 2025),
];

/// An address, nested inside [`Constraints`] to show inlining and nested error paths.
#[shape(iri = "https://example.org/fixtures#Address")]
pub struct Address {
    #[predicate(min_length = 2)]
    pub city: String,
    /// ISO 3166-1 alpha-2 country code.
    #[predicate(pattern = r"^[A-Z]{2}$")]
    pub country: String,
}

/// One field per mapped JSON Schema keyword.
#[shape(iri = "https://example.org/fixtures#Constraints")]
pub struct Constraints {
    /// `required` (non-`Option`), `minLength`, `maxLength`.
    #[predicate(min_length = 3, max_length = 16)]
    pub handle: String,
    /// `pattern`.
    #[predicate(pattern = r"^REQ-\d+$")]
    pub code: String,
    /// `enum` of strings.
    #[predicate(one_of = ["proposed", "accepted", "rejected"])]
    pub status: String,
    /// `enum` of integers.
    #[predicate(one_of = [1, 2, 3])]
    pub tier: Option<i64>,
    /// `minimum` and `maximum` on an integer.
    #[predicate(min_value = 1, max_value = 5)]
    pub priority: i32,
    /// `minimum` and `maximum` on a number.
    #[predicate(min_value = 0.0, max_value = 1.0)]
    pub confidence: Option<f64>,
    /// `minItems`/`maxItems` with item constraints.
    #[predicate(many, min_count = 1, max_count = 3, max_length = 20)]
    pub tags: Vec<String>,
    /// Unsigned integer: `minimum: 0` and the type's maximum.
    pub retries: Option<u8>,
    pub urgent: Option<bool>,
    /// `format: date-time`.
    pub due: Option<DateTime>,
    /// A nested shape, inlined.
    pub address: Option<Address>,
}

/// Accept a constraint-matrix record; returns it unchanged.
#[capability(id = "fixtures.constraints", version = "0.3.0", side_effects(overwrites),
             policy_required = ["fixtures.write"], preconditions(check = not_blocked), version_status = "experimental",
             idempotent)]
pub async fn constraints(input: Constraints) -> Result<Constraints> {
    Ok(input)
}

/// `fixtures.constraints`' own precondition: a record tagged `blocked` is refused.
async fn not_blocked(_ctx: &Ctx, arguments: &serde_json::Value) -> std::result::Result<(), String> {
    let tags = arguments["tags"].as_array().map(Vec::as_slice).unwrap_or_default();
    match tags.iter().any(|tag| tag == "blocked") {
        true => Err("the record is tagged `blocked`".to_owned()),
        false => Ok(()),
    }
}

/// Assign a reviewer the old way: superseded by `fixtures.assign`, kept for the clients that
/// still call it.
#[capability(id = "fixtures.assign_v1", version = "1.4.0", version_status = "deprecated", side_effects(none))]
pub async fn assign_v1(
    /// The paper's title.
    #[predicate(min_length = 1, max_length = 200)]
    paper: String,
) -> Result<String> {
    Ok(format!("{paper}: assign reviewers with fixtures.assign"))
}

/// Assign a person as reviewer of a paper.
#[capability(id = "fixtures.assign", version = "2.0.0", side_effects(external = ["mail.example.org"]),
             deprecates = "fixtures.assign_v1", reasoning = "rdfs", assurance = "L1")]
pub async fn assign(
    _ctx: &Ctx,
    /// The reviewer.
    reviewer: Ref<Person>,
    #[predicate(min_length = 1)] paper_title: String,
    /// Co-reviewers, if any.
    #[predicate(max_count = 2)]
    co_reviewers: Option<Vec<Ref<Person>>>,
) -> Result<String> {
    let co = co_reviewers.map(|c| c.len()).unwrap_or(0);
    Ok(format!("{} reviews {paper_title} with {co} co-reviewer(s)", reviewer.iri()))
}

/// Create a person from a full node-type input.
#[capability(id = "fixtures.person.create", version = "1.0.0", side_effects(none))]
pub async fn create_person(person: Person) -> Result<Person> {
    Ok(person)
}

/// As many people as asked for (builders only): a long list of node-type instances.
#[meta_capability(
    namespace = "fixture",
    op = "people",
    scope = "builder",
    version = "0.1.0",
    side_effects(none),
    idempotent
)]
pub async fn people(
    /// How many.
    #[predicate(min_value = 1, max_value = 10000)]
    count: u32,
) -> Result<Vec<Person>> {
    Ok((0..count).map(|n| Person { name: format!("Person {n:05}"), email: format!("p{n}@example.org") }).collect())
}

/// Reset fixture data (builder scope).
#[meta_capability(namespace = "fixture", op = "reset", scope = "builder", version = "0.1.0", side_effects(deletes))]
pub async fn reset(_ctx: &Ctx) -> Result<()> {
    Ok(())
}

/// Whether `n` is even: a `bool` result, structured as `{"result": …}` with its `outputSchema`
/// (what the goldens, the hot path and OpenAPI hold a scalar result to).
#[capability(id = "fixtures.even", version = "1.0.0", side_effects(none), idempotent)]
pub async fn even(
    /// Any integer.
    n: i64,
) -> Result<bool> {
    Ok(n % 2 == 0)
}

/// The note pinned for every caller.
#[resource(uri = "notes://pinned", title = "Pinned note", mime_type = "text/markdown")]
pub async fn pinned() -> Result<String> {
    Ok("# Pinned\nShip on Friday.".to_owned())
}

/// A yearly report of one kind.
#[resource(uri = "reports://{year}/{kind}", name = "report", mime_type = "application/json")]
pub async fn report(
    /// The year, four digits.
    #[predicate(pattern = "^[0-9]{4}$")]
    year: String,
    /// Which report.
    #[predicate(one_of = ["sales", "costs"])]
    kind: String,
) -> Result<String> {
    Ok(serde_json::json!({ "year": year, "kind": kind }).to_string())
}

/// The operators' runbook (builders only).
#[resource(uri = "ops://runbook", scope = "builder")]
pub async fn runbook() -> Result<Vec<u8>> {
    Ok(b"restart it".to_vec())
}

/// Ask for a review of a requirement.
#[prompt(name = "review", title = "Review a requirement")]
pub async fn review_prompt(
    /// The requirement's id, `REQ-<n>`.
    #[predicate(pattern = "^REQ-[0-9]+$")]
    req_id: String,
    /// How the review should sound.
    #[predicate(one_of = ["kind", "blunt", "brief"])]
    tone: Option<String>,
) -> Result<Vec<PromptMessage>> {
    let tone = tone.unwrap_or_else(|| "kind".to_owned());
    Ok(vec![
        PromptMessage::user(format!("Review {req_id}, in a {tone} tone.")),
        PromptMessage::assistant(Content::embedded(Embedded::text(
            format!("trails://kg/Requirement/{req_id}"),
            "application/json",
            "{}",
        ))),
    ])
}

/// What the schema should change (for builders).
#[prompt(scope = "builder")]
pub async fn schema_review(ctx: &Ctx) -> Result<String> {
    Ok(format!("Review the schema as {}.", ctx.caller().unwrap_or("anonymous")))
}

/// How far each `fixtures.count` call (by its label) counted before its client cancelled it.
pub static CANCELLED_AT: std::sync::Mutex<Vec<(String, u32)>> = std::sync::Mutex::new(Vec::new());

/// Counts to `to`, a step every `pause_ms`, reporting each step as progress; stops when the
/// client cancels the call (and records where, under `label`).
#[capability(id = "fixtures.count", version = "1.0.0", side_effects(none))]
pub async fn count(
    ctx: &Ctx,
    /// Where to stop.
    #[predicate(min_value = 1, max_value = 1000)]
    to: u32,
    /// Milliseconds between steps.
    #[predicate(max_value = 2000)]
    pause_ms: u32,
    /// What the test calls this call.
    #[predicate(max_length = 40)]
    label: String,
) -> Result<String> {
    for step in 1..=to {
        tokio::select! {
            () = ctx.cancelled() => {
                CANCELLED_AT.lock().unwrap().push((label, step - 1));
                return Ok(format!("cancelled after {}", step - 1));
            }
            () = tokio::time::sleep(std::time::Duration::from_millis(pause_ms.into())) => {}
        }
        ctx.progress(step.into(), Some(to.into()), Some(&format!("counted {step}"))).await;
        ctx.log(trails::LogLevel::Debug, format!("counted {step}")).await;
    }
    Ok(format!("counted to {to}"))
}

/// What the call's request carried: the protocol version, whether it is in a session, the
/// client's info and capabilities, the progress token.
#[capability(id = "fixtures.request", version = "1.0.0", side_effects(none), idempotent)]
pub async fn request(ctx: &Ctx) -> Result<serde_json::Value> {
    let request = ctx.request();
    Ok(serde_json::json!({
        "protocol_version": request.protocol_version(),
        "in_session": request.session_id().is_some(),
        "client": request.client_info(),
        "capabilities": request.client_capabilities(),
        "progress_token": request.progress_token(),
    }))
}

/// A chart: a caption for the model, the picture for the user, and its data embedded.
#[capability(id = "fixtures.chart", version = "1.0.0", side_effects(none), idempotent)]
pub async fn chart(
    /// Bytes of picture to draw.
    #[predicate(max_value = 100000)]
    size: u32,
) -> Result<Vec<Content>> {
    Ok(vec![
        Content::text("Sales by week").for_assistant().with_priority(0.5),
        Content::image(vec![0x89; size as usize], "image/png").for_user(),
        Content::embedded(Embedded::text("data://sales.csv", "text/csv", "week,sales\n1,3\n")),
    ])
}

/// Fails in every way a handler can besides bad input, to pin the error codes and the domain
/// errors' results.
#[capability(id = "fixtures.fail", version = "1.0.0", side_effects(none))]
pub async fn fail(
    /// `policy`, `budget`, `internal`, `panic`, or a domain error: `not_found`, `conflict`,
    /// `precondition_failed`, `unavailable`.
    #[predicate(one_of = ["policy", "budget", "internal", "panic", "not_found", "conflict", "precondition_failed", "unavailable"])]
    how: String,
) -> Result<String> {
    use std::time::Duration;
    match how.as_str() {
        "policy" => Err(trails::Error::policy_denied("fixtures may not be touched on Sundays")),
        "budget" => Err(trails::Error::budget_exceeded("token budget of 0 exhausted")),
        "internal" => Err(trails::Error::internal("database password is hunter2")),
        "not_found" => Err(trails::Error::not_found("no fixture named sunday")),
        "conflict" => Err(trails::Error::conflict("the fixture is already assigned")),
        "precondition_failed" => Err(trails::Error::precondition_failed("the fixture must be reviewed first")),
        "unavailable" => {
            Err(trails::Error::unavailable("the mail relay refused").retry_after(Duration::from_millis(29_001)))
        }
        _ => panic!("handler bug: index out of range"),
    }
}

/// A dev-only tool, to exercise scope gating.
#[meta_capability(
    namespace = "fixture",
    op = "inspect",
    scope = "dev",
    version = "0.1.0",
    side_effects(none),
    idempotent
)]
pub async fn inspect(ctx: &Ctx) -> Result<String> {
    let tenant = ctx.extension::<Tenant>().map(|tenant| tenant.0.as_str());
    Ok(format!("caller {:?} with scopes {:?} for tenant {tenant:?}", ctx.caller(), ctx.scopes()))
}

/// What a guard in `tests/tests/it/guards.rs` attaches to a call, and `inspect` reports.
#[derive(Debug, Clone)]
pub struct Tenant(pub String);

/// A long text, for the windowed reads of `trails.kg.read_field`.
#[node_type(label = "Note", iri = "https://example.org/notes#Note", key = "slug")]
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    #[predicate(pattern = r"^[a-z0-9-]{1,64}$")]
    pub slug: String,
    #[predicate(max_length = 2_000_000, role = "body")]
    pub body: String,
}

/// Store a note.
#[capability(id = "fixtures.note.create", version = "1.0.0", side_effects(writes = [Note]))]
pub async fn create_note(ctx: &Ctx, note: Note) -> Result<String> {
    Ok(ctx.kg()?.create(note).await?.iri)
}

/// Declared read-only, yet stores a note — what the knowledge graph refuses: a capability writes
/// only what it declared.
#[capability(id = "fixtures.note.sneak", version = "1.0.0", side_effects(none))]
pub async fn sneak_note(ctx: &Ctx, note: Note) -> Result<String> {
    Ok(ctx.kg()?.create(note).await?.iri)
}

/// Declared to write notes only, and to change none: updating one, or storing an attachment, is
/// refused. The note must be stored (a precondition), and a call costs 30 tokens.
#[capability(id = "fixtures.note.touch", version = "1.0.0", side_effects(writes = [Note]),
             preconditions(instance_exists(node_type = "Note", key = "slug")), cost(tokens = 30))]
pub async fn touch_note(
    ctx: &Ctx,
    /// The note to change.
    #[predicate(min_length = 1, max_length = 80)]
    slug: String,
    /// Store an attachment of this name instead.
    #[predicate(pattern = r"^[a-z0-9-]{1,64}$")]
    attachment: Option<String>,
) -> Result<String> {
    let kg = ctx.kg()?;
    if let Some(name) = attachment {
        let file = Blob::new("text/plain", b"hi".to_vec()).map_err(Error::internal)?;
        return Ok(kg.create(Attachment { name, file, previews: Vec::new() }).await?.iri);
    }
    Ok(kg.update::<Note>(&slug, |note| note.body.push('!')).await?.iri)
}

/// A file and its previews: binary fields, stored content-addressed.
#[node_type(label = "Attachment", iri = "https://example.org/files#Attachment", key = "name")]
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    #[predicate(pattern = r"^[a-z0-9-]{1,64}$")]
    pub name: String,
    /// The file itself.
    pub file: Blob,
    #[predicate(max_count = 4)]
    pub previews: Vec<Blob>,
}

/// Store an attachment; the result shows its blobs' metadata, never their bytes.
#[capability(
    id = "fixtures.attachment.create",
    version = "1.0.0",
    side_effects(writes = [Attachment])
)]
pub async fn create_attachment(ctx: &Ctx, attachment: Attachment) -> Result<Attachment> {
    Ok(ctx.kg()?.create(attachment).await?.value)
}

/// Who asks (an elicitation's form).
#[shape(iri = "https://example.org/fixtures#Name")]
pub struct Name {
    /// What to call them.
    #[predicate(min_length = 1, max_length = 40)]
    pub name: String,
}

/// The `greeting` of each call whose `fixtures.ask` handler began (tests running side by side
/// tell their own apart by it).
pub static ASKED: std::sync::Mutex<Vec<Option<String>>> = std::sync::Mutex::new(Vec::new());
/// How many times `fixtures.purge` ran.
pub static PURGED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Greets the user by the name they give, and the client's model's idea of a greeting.
#[capability(id = "fixtures.ask", version = "1.0.0", side_effects(none), idempotent)]
pub async fn ask(ctx: &Ctx, greeting: Option<String>) -> Result<String> {
    ASKED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(greeting.clone());
    let name = match ctx.elicit::<Name>("name", "What is your name?").await? {
        Elicited::Accepted(name) => name.name,
        Elicited::Declined => return Err(Error::precondition_failed("the user would not say")),
        Elicited::Cancelled => return Err(Error::precondition_failed("the user dismissed the question")),
    };
    let greeting = match greeting {
        Some(greeting) => greeting,
        None => ctx.sample("greeting", Sample::user("A one-word greeting", 10)).await?.text(),
    };
    Ok(format!("{greeting}, {name}!"))
}

/// Forgets everything the fixture counted, once the user confirms.
#[capability(id = "fixtures.purge", version = "1.0.0", side_effects(deletes), confirm = "Forget every count?")]
pub async fn purge() -> Result<String> {
    PURGED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Ok("purged".to_owned())
}

/// Each `fixtures.crunch` run that began, by its label, and how it ended when cancelled (tests
/// running side by side tell their own apart by the label).
pub static CRUNCHED: std::sync::Mutex<Vec<(String, Option<String>)>> = std::sync::Mutex::new(Vec::new());

/// Works `steps` steps of `step_ms` each, reporting each as progress: a task when it outlasts the
/// inline bound, or at once (`now`); with `ask`, it asks the user's name once it is a task. Each
/// run that begins is counted (`CRUNCHED`), and written to the file `TRAILS_TESTS_RUNS` names (a
/// test counts runs across a restart).
#[capability(id = "fixtures.crunch", version = "1.0.0", side_effects(none), idempotent, task)]
pub async fn crunch(
    ctx: &Ctx,
    /// How many steps.
    #[predicate(min_value = 1, max_value = 10000)]
    steps: u32,
    /// Milliseconds each takes.
    #[predicate(max_value = 5000)]
    step_ms: u32,
    /// What the test calls this run.
    #[predicate(max_length = 40)]
    label: String,
    /// Become a task at once.
    now: Option<bool>,
    /// Ask the user's name (once a task).
    ask: Option<bool>,
) -> Result<String> {
    CRUNCHED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((label.clone(), None));
    if let Some(path) = std::env::var_os("TRAILS_TESTS_RUNS") {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(Error::internal)?;
        writeln!(file, "{label}").and_then(|()| file.sync_all()).map_err(Error::internal)?;
    }
    let asks = ask == Some(true);
    if now == Some(true) || asks {
        ctx.become_task().await;
    }
    let name = match asks {
        true => match ctx.elicit::<Name>("name", "Who is it for?").await? {
            Elicited::Accepted(name) => Some(name.name),
            _ => return Err(Error::precondition_failed("the user would not say")),
        },
        false => None,
    };
    for step in 1..=steps {
        tokio::select! {
            () = ctx.cancelled() => {
                let mut crunched = CRUNCHED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                if let Some(run) = crunched.iter_mut().rev().find(|(began, _)| *began == label) {
                    run.1 = Some(format!("cancelled after {}", step - 1));
                }
                return Ok(format!("{label}: stopped"));
            }
            () = tokio::time::sleep(std::time::Duration::from_millis(step_ms.into())) => {}
        }
        ctx.progress(step.into(), Some(steps.into()), Some("crunched")).await;
    }
    Ok(match name {
        Some(name) => format!("{label}: {steps} steps, for {name}"),
        None => format!("{label}: {steps} steps"),
    })
}

/// Names of every tool this fixture app declares (plus the runtime's built-ins).
pub const FIXTURE_TOOLS: &[&str] = &[
    "fixtures_ask",
    "fixtures_assign",
    "fixtures_assign_v1",
    "fixtures_attachment_create",
    "fixtures_chart",
    "fixtures_constraints",
    "fixtures_count",
    "fixtures_crunch",
    "fixtures_even",
    "fixtures_fail",
    "fixtures_note_create",
    "fixtures_note_sneak",
    "fixtures_note_touch",
    "fixtures_person_create",
    "fixtures_purge",
    "fixtures_request",
    "research_search",
    "trails_dry_run",
    "trails_kg_get",
    "trails_kg_list",
    "trails_kg_read_field",
    "trails_meta_fixture_inspect",
    "trails_meta_fixture_people",
    "trails_meta_fixture_reset",
    "trails_meta_gen_capability",
    "trails_meta_gen_nodetype",
    "trails_meta_gen_shape",
    "trails_meta_kg_validate",
    "trails_meta_ping",
    "trails_meta_schema_snapshot",
    "trails_meta_tools_enable",
    "trails_resources_read",
    "trails_result_read",
];

/// The fixture app's Cedar policies: `fixtures.constraints` requires `fixtures.write`.
pub const FIXTURE_POLICIES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/policies/fixtures.cedar");

/// `config` with the fixture app's policies, for servers the tests build in their own process
/// (the fixture binaries serve them unless `TRAILS_POLICY_FILES` names others).
pub fn with_fixture_policies(mut config: trails::config::Config) -> trails::config::Config {
    config.policy.files = vec![FIXTURE_POLICIES.into()];
    config
}

/// Serve the fixture policies unless the environment names others: the fixture binaries call this
/// first, before any thread starts.
pub fn default_fixture_policies() {
    if std::env::var_os("TRAILS_POLICY_FILES").is_none() {
        std::env::set_var("TRAILS_POLICY_FILES", FIXTURE_POLICIES);
    }
}

/// Referencing this from a binary or test makes the linker keep this crate's tables (and the
/// example app's): items collected by `linkme` in a crate nothing references are dropped.
pub fn link() {
    requirements::link();
}

/// A record of the crash-durability test: `a`, `b` and `parts` all derive from `seq`, so a write
/// applied in part would be visible after a restart.
#[node_type(label = "CrashEntry", iri = "https://example.org/crash#Entry", key = "seq")]
#[derive(Debug, Clone, PartialEq)]
pub struct CrashEntry {
    pub seq: i64,
    pub a: i64,
    pub b: i64,
    pub parts: Vec<String>,
}

impl CrashEntry {
    /// The only valid content for `seq`.
    pub fn new(seq: i64) -> CrashEntry {
        CrashEntry { seq, a: seq, b: seq * 2, parts: (0..3).map(|i| format!("{seq}-{i}")).collect() }
    }
}
