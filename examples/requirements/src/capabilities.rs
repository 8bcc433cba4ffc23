//! The requirements app's capabilities. Every read and write goes through the knowledge graph:
//! the store validates each instance and checks keys and references atomically with the write.

use trails::prelude::*;

use crate::model::{Person, Requirement, SearchRequirements, Stats, StatusCount, UpdateRequirement};

/// Create a requirement. Fails if `req_id` is already taken or `owner` is not a stored person.
#[capability(id = "requirements.create", version = "1.0.0",
             side_effects(writes = [Requirement]),
             cost(tokens = 120, latency_p50_ms = 1, latency_p95_ms = 5))]
pub async fn create(ctx: &Ctx, requirement: Requirement) -> Result<Requirement> {
    Ok(ctx.kg()?.create(requirement).await?.value)
}

/// Change the title, status or priority of an existing requirement.
#[capability(id = "requirements.update", version = "1.0.0", idempotent,
             preconditions(instance_exists(node_type = "Requirement", key = "req_id")),
             side_effects(writes = [Requirement], overwrites))]
pub async fn update(ctx: &Ctx, change: UpdateRequirement) -> Result<Requirement> {
    let updated = ctx
        .kg()?
        .update::<Requirement>(&change.req_id, |existing| {
            if let Some(title) = &change.title {
                existing.title.clone_from(title);
            }
            if let Some(status) = &change.status {
                existing.status.clone_from(status);
            }
            if let Some(priority) = change.priority {
                existing.priority = priority;
            }
        })
        .await?;
    Ok(updated.value)
}

/// Delete a requirement for good; what was recorded of it stays in provenance. The user is asked
/// first.
#[capability(id = "requirements.delete", version = "1.0.0",
             preconditions(instance_exists(node_type = "Requirement", key = "req_id")),
             side_effects(writes = [Requirement], deletes),
             confirm = "Delete this requirement for good? Its history stays in provenance.")]
pub async fn delete(
    ctx: &Ctx,
    /// The requirement to delete.
    #[predicate(pattern = r"^REQ-\d+$", max_length = 16)]
    req_id: String,
) -> Result<String> {
    ctx.kg()?.delete::<Requirement>(&req_id).await?;
    Ok(format!("{req_id} deleted"))
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
    let f = Requirement::FIELDS;
    let mut query = Requirement::objects(ctx).order_by(f.priority).then_by(f.req_id);
    if let Some(text) = criteria.text {
        query = query.filter(f.title.contains_ignore_case(text));
    }
    if let Some(status) = criteria.status {
        query = query.filter(f.status.eq(status));
    }
    let found = query.limit(criteria.limit.unwrap_or(20) as usize).all().await?;
    Ok(found.into_iter().map(|stored| stored.value).collect())
}

/// Review every requirement against the house rules — an accepted requirement has an owner and
/// a due date — reporting each one checked. On a large backlog this outlasts the inline bound and
/// runs as a task the client polls, rather than a request held open.
#[capability(id = "requirements.review", version = "1.0.0", idempotent, side_effects(none), task)]
pub async fn review(ctx: &Ctx) -> Result<String> {
    let all = Requirement::objects(ctx).order_by(Requirement::FIELDS.req_id).all().await?;
    let total = all.len();
    let mut findings = Vec::new();
    for (done, stored) in all.iter().enumerate() {
        if ctx.is_cancelled() {
            return Ok(format!("stopped after {done} of {total} requirements"));
        }
        let requirement = &stored.value;
        if requirement.status == "accepted" && requirement.owner.is_none() {
            findings.push(format!("{} is accepted without an owner", requirement.req_id));
        }
        if requirement.status == "accepted" && requirement.due.is_none() {
            findings.push(format!("{} is accepted without a due date", requirement.req_id));
        }
        ctx.progress((done + 1) as f64, Some(total as f64), Some("reviewed")).await;
    }
    Ok(match findings.is_empty() {
        true => format!("{total} requirements reviewed; all follow the rules"),
        false => format!("{total} requirements reviewed; {} to fix: {}", findings.len(), findings.join("; ")),
    })
}

/// Make a person the owner of a requirement.
#[capability(id = "requirements.link", version = "1.0.0", idempotent,
             side_effects(writes = [Requirement], overwrites))]
pub async fn link(
    ctx: &Ctx,
    /// The requirement to assign.
    #[predicate(pattern = r"^REQ-\d+$", max_length = 16)]
    req_id: String,
    /// IRI of the new owner, as returned by `people_create`.
    owner: Ref<Person>,
) -> Result<Requirement> {
    let linked = ctx.kg()?.update::<Requirement>(&req_id, |r| r.owner = Some(owner.clone())).await?;
    Ok(linked.value)
}

/// Register a person; returns their IRI for use as an owner. Fails if the e-mail is taken.
#[capability(id = "people.create", version = "1.0.0", side_effects(writes = [Person]))]
pub async fn create_person(ctx: &Ctx, person: Person) -> Result<String> {
    Ok(ctx.kg()?.create(person).await?.iri)
}

/// Count what the store holds.
#[meta_capability(
    namespace = "requirements",
    op = "stats",
    scope = "builder",
    version = "1.0.0",
    side_effects(none),
    idempotent
)]
pub async fn stats(ctx: &Ctx) -> Result<Stats> {
    let requirements = Requirement::objects(ctx).count().await? as u64;
    let people = Person::objects(ctx).count().await? as u64;
    let by_status = Requirement::objects(ctx).count_by(Requirement::FIELDS.status).await?;
    let by_status = by_status.into_iter().map(|(status, count)| StatusCount { status, count: count as u64 }).collect();
    Ok(Stats { requirements, people, by_status })
}

/// Triage the requirements of one status: read them, then accept, reject or link an owner.
#[prompt(name = "triage", title = "Triage requirements")]
pub async fn triage(
    /// Which requirements to go through.
    #[predicate(one_of = ["proposed", "accepted", "rejected"])]
    status: Option<String>,
) -> Result<Vec<PromptMessage>> {
    let status = status.unwrap_or_else(|| "proposed".to_owned());
    Ok(vec![
        PromptMessage::user(format!(
            "Triage the {status} requirements: list them with `requirements_search` (status \"{status}\"), then for \
             each decide whether to accept or reject it (`requirements_update`) and who owns it \
             (`requirements_link`). Say what you changed and why."
        )),
        PromptMessage::user(Content::link(
            format!("trails://kg/Requirement?where=status={status}"),
            format!("{status} requirements"),
        )),
    ])
}
