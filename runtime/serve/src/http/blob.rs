//! `GET /blobs/{sha256}`: a stored blob's bytes over HTTP, for a client that fetches rather than
//! reads MCP resources (`trails://blob/<sha256>` is the same bytes, and `trails_resources_read`
//! pages them as a tool). The caller needs the `runtime` scope, as reading the resource does.
//! The bytes go out as an attachment no browser renders on this origin (`nosniff`, a sandboxing
//! CSP): a blob's media type is what a client stored, not something this server vouches for.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde_json::json;

use crate::state::Shared;
use trails_core::auth::{Caller, Scope};

pub(crate) async fn blob(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    sha256: Result<Path<String>, PathRejection>,
) -> Response {
    if !caller.scopes.contains(Scope::Runtime) {
        return error(StatusCode::FORBIDDEN, "reading a blob needs the `runtime` scope".into());
    }
    let Ok(Path(sha256)) = sha256 else {
        return error(StatusCode::BAD_REQUEST, "the blob's SHA-256 in the path is not UTF-8".into());
    };
    if !trails_core::declare::blob::is_sha256(&sha256) {
        let shown = trails_core::validate::echo_name(&sha256);
        return error(StatusCode::BAD_REQUEST, format!("`{shown}` is not a SHA-256: 64 lowercase hex digits"));
    }
    let Some(kg) = &shared.resources.kg else {
        return error(StatusCode::NOT_FOUND, "this server has no knowledge graph, so no blobs".into());
    };
    match kg.store().blob(sha256.clone()).await {
        Ok(Some(blob)) => {
            let headers = [
                (header::CONTENT_TYPE, blob.media_type().to_owned()),
                (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{sha256}\"")),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
                (header::CONTENT_SECURITY_POLICY, "sandbox; default-src 'none'".to_owned()),
                // Content-addressed: these bytes are what this URL means, for good.
                (header::ETAG, format!("\"{sha256}\"")),
                (header::CACHE_CONTROL, "private, max-age=31536000, immutable".to_owned()),
            ];
            (StatusCode::OK, headers, blob.bytes().to_vec()).into_response()
        }
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no blob {sha256} is stored")),
        Err(failure) => {
            tracing::error!(%failure, "reading a blob failed");
            error(StatusCode::INTERNAL_SERVER_ERROR, "the store failed to read the blob".into())
        }
    }
}

fn error(status: StatusCode, message: String) -> Response {
    let body = json!({ "error": { "code": status.as_u16(), "message": message } }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
