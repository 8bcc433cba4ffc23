//! `skills/list` and `skills/get` (the MCP Skills extension, SEP-2640): the skills generated
//! from the declarations (`projection/skills.rs`); their files are read with `resources/read`.

use rmcp::model::{ErrorData, GetSkillRequestParams, GetSkillResult, ListSkillsResult};
use serde_json::json;

use crate::state::Shared;
use trails_core::validate::echo_name;

/// What a server without skills answers their methods with: it does not serve them.
fn not_served(method: &'static str) -> ErrorData {
    ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, format!("{method}: this server serves no skills"), None)
}

pub(crate) fn list_skills(shared: &Shared) -> Result<ListSkillsResult, ErrorData> {
    let skills = shared.skills.as_ref().ok_or_else(|| not_served("skills/list"))?;
    Ok(ListSkillsResult::with_all_items(skills.list()))
}

pub(crate) fn get_skill(shared: &Shared, params: &GetSkillRequestParams) -> Result<GetSkillResult, ErrorData> {
    let skills = shared.skills.as_ref().ok_or_else(|| not_served("skills/get"))?;
    skills.get(&params.uri).map(GetSkillResult::new).ok_or_else(|| {
        let uri = echo_name(&params.uri);
        ErrorData::invalid_params(format!("unknown skill: {uri} (skills/list names them)"), Some(json!({ "uri": uri })))
    })
}
