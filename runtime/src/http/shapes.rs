//! `GET /shapes.ttl` (every shape, one graph) and `GET /shapes/{name}` (the shapes of one Rust
//! type name, or the shape of one IRI): the SHACL behind the manifest's `input_shape` and
//! `output_shape`, in the RDF syntax the `Accept` header prefers (Turtle by default). A
//! capability's parameter shape is served only to callers who may see the capability.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use axum::Extension;

use crate::auth::Caller;
use crate::projection::shacl::{media_types, negotiate, render};
use crate::server::{Lookup, Shared};

/// Whether `caller` may see tool `name` (as `tools/list` would show it): the input shape of a
/// capability is part of its contract, which a caller without its scope does not learn.
fn visible<'a>(shared: &'a Shared, caller: &'a Caller) -> impl Fn(&str) -> bool + 'a {
    move |tool| matches!(shared.catalog.lookup(tool, caller.scopes), Lookup::Found(_))
}

pub(crate) async fn graph(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
) -> Response {
    answer(&shared.shapes.graph(visible(&shared, &caller)), &headers)
}

pub(crate) async fn one(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    let Ok(Path(name)) = name else {
        return error(StatusCode::BAD_REQUEST, "the shape name in the path is not UTF-8".into());
    };
    match shared.shapes.named(&name, visible(&shared, &caller)) {
        Some(turtle) => answer(&turtle, &headers),
        None => {
            let name = crate::validate::echo_name(&name);
            error(StatusCode::NOT_FOUND, format!("no shape named `{name}`: GET /shapes.ttl lists every shape"))
        }
    }
}

fn answer(turtle: &str, headers: &HeaderMap) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let Some((media_type, format)) = negotiate(accept) else {
        let offered = media_types().join(", ");
        return error(StatusCode::NOT_ACCEPTABLE, format!("shapes are served as {offered}"));
    };
    match render(turtle, format) {
        Ok(body) => ([(header::CONTENT_TYPE, media_type), (header::VARY, "accept")], body).into_response(),
        Err(cause) => {
            // The Turtle is the macros' own output, read by tests in every syntax: a bug here.
            tracing::error!(%cause, "a SHACL shape did not convert");
            error(StatusCode::INTERNAL_SERVER_ERROR, "the shape could not be converted".into())
        }
    }
}

fn error(status: StatusCode, message: String) -> Response {
    let body = json!({ "error": { "code": status.as_u16(), "message": message } }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
