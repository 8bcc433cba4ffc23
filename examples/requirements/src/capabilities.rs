//! The requirements app's capabilities.

use serde_json::json;
use trails::{capability, meta_capability, Ctx, Error, FieldCode, FieldError, Ref, Result};

use crate::model::{Person, Requirement, SearchRequirements, Stats, UpdateRequirement};
use crate::store::{Store, CAPACITY};

fn not_found(field: &str, value: &str, what: &str) -> Error {
    Error::validation(vec![FieldError {
        field: field.to_owned(),
        code: FieldCode::TypeMismatch,
        message: format!("no {what} with {field} {value}"),
        value: json!(value),
        constraint: json!("must name an existing instance"),
    }])
}

/// Create a requirement. Fails if `req_id` is already taken.
#[capability(id = "requirements.create", version = "1.0.0",
             side_effects(writes = ["https://example.org/graphs/requirements"], provenance),
             cost(tokens = 120, latency_p50_ms = 1, latency_p95_ms = 5))]
pub async fn create(ctx: &Ctx, requirement: Requirement) -> Result<Requirement> {
    let mut data = ctx.state::<Store>()?.lock();
    if data.requirements.contains_key(&requirement.req_id) {
        return Err(Error::validation(vec![FieldError {
            field: "req_id".into(),
            code: FieldCode::TypeMismatch,
            message: format!("req_id {} already exists", requirement.req_id),
            value: json!(requirement.req_id),
            constraint: json!("unique"),
        }]));
    }
    data.ensure_room()?;
    data.requirements.insert(requirement.req_id.clone(), requirement.clone());
    Ok(requirement)
}

/// Change the title, status or priority of an existing requirement.
#[capability(id = "requirements.update", version = "1.0.0", idempotent,
             side_effects(writes = ["https://example.org/graphs/requirements"], overwrites, provenance))]
pub async fn update(ctx: &Ctx, change: UpdateRequirement) -> Result<Requirement> {
    let mut data = ctx.state::<Store>()?.lock();
    let Some(existing) = data.requirements.get_mut(&change.req_id) else {
        return Err(not_found("req_id", &change.req_id, "requirement"));
    };
    if let Some(title) = change.title {
        existing.title = title;
    }
    if let Some(status) = change.status {
        existing.status = status;
    }
    if let Some(priority) = change.priority {
        existing.priority = priority;
    }
    Ok(existing.clone())
}

/// Find requirements by title text and status, highest priority first.
#[capability(
    id = "requirements.search",
    version = "1.0.0",
    idempotent,
    side_effects(none),
    cost(tokens = 40, latency_p50_ms = 1, latency_p95_ms = 3)
)]
pub async fn search(ctx: &Ctx, criteria: SearchRequirements) -> Result<Vec<Requirement>> {
    let data = ctx.state::<Store>()?.lock();
    let text = criteria.text.map(|t| t.to_lowercase());
    let mut found: Vec<Requirement> = data
        .requirements
        .values()
        .filter(|r| text.as_ref().is_none_or(|t| r.title.to_lowercase().contains(t)))
        .filter(|r| criteria.status.as_ref().is_none_or(|s| &r.status == s))
        .cloned()
        .collect();
    found.sort_by(|a, b| a.priority.cmp(&b.priority).then_with(|| a.req_id.cmp(&b.req_id)));
    found.truncate(criteria.limit.unwrap_or(20) as usize);
    Ok(found)
}

/// Make a person the owner of a requirement.
#[capability(id = "requirements.link", version = "1.0.0", idempotent,
             side_effects(writes = ["https://example.org/graphs/requirements"], overwrites, provenance))]
pub async fn link(
    ctx: &Ctx,
    /// The requirement to assign.
    #[predicate(pattern = r"^REQ-\d+$")]
    req_id: String,
    /// IRI of the new owner, as returned by `people.create`.
    owner: Ref<Person>,
) -> Result<Requirement> {
    let mut data = ctx.state::<Store>()?.lock();
    let email = owner.iri().strip_prefix(crate::PERSON_BASE).unwrap_or_default().to_owned();
    if !data.people.contains_key(&email) {
        return Err(not_found("owner", owner.iri(), "person"));
    }
    let Some(requirement) = data.requirements.get_mut(&req_id) else {
        return Err(not_found("req_id", &req_id, "requirement"));
    };
    requirement.owner = Some(owner);
    Ok(requirement.clone())
}

/// Register a person; returns their IRI for use as an owner.
#[capability(id = "people.create", version = "1.0.0",
             side_effects(writes = ["https://example.org/graphs/requirements"], provenance))]
pub async fn create_person(ctx: &Ctx, person: Person) -> Result<String> {
    let mut data = ctx.state::<Store>()?.lock();
    if !data.people.contains_key(&person.email) {
        data.ensure_room()?;
    }
    let iri = format!("{}{}", crate::PERSON_BASE, person.email);
    data.people.insert(person.email.clone(), person);
    Ok(iri)
}

/// Count what the store holds and how much room is left.
#[meta_capability(
    namespace = "requirements",
    op = "stats",
    scope = "builder",
    version = "1.0.0",
    side_effects(none),
    idempotent
)]
pub async fn stats(ctx: &Ctx) -> Result<Stats> {
    let data = ctx.state::<Store>()?.lock();
    Ok(Stats {
        requirements: data.requirements.len() as u64,
        people: data.people.len() as u64,
        capacity_left: (CAPACITY - data.records()) as u64,
    })
}
