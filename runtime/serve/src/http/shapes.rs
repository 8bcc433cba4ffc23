//! `GET /shapes.ttl` (every shape, one graph) and `GET /shapes/{name}` (the shapes of one Rust
//! type name, or the shape of one IRI): the SHACL behind the manifest's `input_shape` and
//! `output_shape`, in the RDF syntax the `Accept` header prefers (Turtle by default; N-Triples,
//! RDF/XML and JSON-LD with the `rdf-formats` feature). A capability's parameter shape is served
//! only to callers who may see the capability.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use axum::Extension;

use crate::projection::shacl::Shapes;
use crate::state::Shared;
use trails_core::auth::Caller;

/// Whether `caller` may see tool `name` (as `tools/list` would show it): the input shape of a
/// capability is part of its contract, which a caller without its scope does not learn.
fn visible<'a>(shared: &'a Shared, caller: &'a Caller) -> impl Fn(&str) -> bool + 'a {
    let view = shared.view(caller);
    move |tool| shared.sees(view, tool)
}

/// The shapes of the declarations, built once when the routes are (and only if they are served).
pub(crate) fn of(shared: &Shared) -> Arc<Shapes> {
    let tools: Vec<_> = shared.pipeline.catalog.entries().collect();
    Arc::new(Shapes::new(&shared.resources.shape_entries, &tools))
}

pub(crate) async fn graph(
    State(shared): State<Arc<Shared>>,
    Extension(shapes): Extension<Arc<Shapes>>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
) -> Response {
    answer(&shapes.graph(visible(&shared, &caller)), &headers)
}

pub(crate) async fn one(
    State(shared): State<Arc<Shared>>,
    Extension(shapes): Extension<Arc<Shapes>>,
    Extension(caller): Extension<Caller>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    let Ok(Path(name)) = name else {
        return error(StatusCode::BAD_REQUEST, "the shape name in the path is not UTF-8".into());
    };
    match shapes.named(&name, visible(&shared, &caller)) {
        Some(turtle) => answer(&turtle, &headers),
        None => {
            let name = trails_core::validate::echo_name(&name);
            error(StatusCode::NOT_FOUND, format!("no shape named `{name}`: GET /shapes.ttl lists every shape"))
        }
    }
}

fn answer(turtle: &str, headers: &HeaderMap) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let Some((media_type, format)) = negotiate(accept) else {
        let offered = media_types().join(", ");
        let more = if cfg!(feature = "rdf-formats") {
            ""
        } else {
            " (N-Triples, RDF/XML and JSON-LD need trails-mcp's `rdf-formats` feature, which this server was built without)"
        };
        return error(StatusCode::NOT_ACCEPTABLE, format!("shapes are served as {offered}{more}"));
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

/// An RDF syntax a shape is served in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Syntax {
    Turtle,
    Other(converted::Format),
}

/// The syntaxes a shape is served in, the first the default: Turtle, which the macros write, then
/// those converted from it.
fn formats() -> impl Iterator<Item = (&'static str, Syntax)> {
    let others = converted::OTHERS.iter().map(|&(media_type, format)| (media_type, Syntax::Other(format)));
    std::iter::once(("text/turtle", Syntax::Turtle)).chain(others)
}

/// The syntaxes converted from Turtle by `oxrdfio` (the `rdf-formats` feature).
#[cfg(feature = "rdf-formats")]
mod converted {
    pub(super) use oxrdfio::RdfFormat as Format;
    use oxrdfio::{JsonLdProfileSet, RdfParser, RdfSerializer};

    pub(super) const OTHERS: &[(&str, Format)] = &[
        ("application/n-triples", Format::NTriples),
        ("application/rdf+xml", Format::RdfXml),
        ("application/ld+json", Format::JsonLd { profile: JsonLdProfileSet::empty() }),
    ];

    pub(super) fn convert(turtle: &str, format: Format) -> Result<Vec<u8>, String> {
        let mut serializer = RdfSerializer::from_format(format).for_writer(Vec::new());
        for quad in RdfParser::from_format(Format::Turtle).for_slice(turtle.as_bytes()) {
            let quad = quad.map_err(|e| e.to_string())?;
            serializer.serialize_quad(&quad).map_err(|e| e.to_string())?;
        }
        serializer.finish().map_err(|e| e.to_string())
    }
}

/// Built without `rdf-formats`, Turtle is the one syntax: there is no other to convert to.
#[cfg(not(feature = "rdf-formats"))]
mod converted {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Format {}

    pub(super) const OTHERS: &[(&str, Format)] = &[];

    pub(super) fn convert(_: &str, format: Format) -> Result<Vec<u8>, String> {
        match format {}
    }
}

/// The media types [`negotiate`] can answer with, for a `406`.
fn media_types() -> Vec<&'static str> {
    formats().map(|(media_type, _)| media_type).collect()
}

/// The served syntax for an `Accept` header: the acceptable one the client prefers most
/// (`q`, then the order of [`formats`]), Turtle when it states no preference, `None` when it
/// accepts none of them.
fn negotiate(accept: Option<&str>) -> Option<(&'static str, Syntax)> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else { return formats().next() };
    let mut best: Option<(f32, usize)> = None;
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media_range = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .filter_map(|q| q.trim().parse::<f32>().ok())
            .next()
            .unwrap_or(1.0);
        if q <= 0.0 {
            continue;
        }
        for (index, (media_type, _)) in formats().enumerate() {
            let (kind, _) = media_type.split_once('/').unwrap_or_default();
            let matches = media_range == media_type
                || media_range == "*/*"
                || media_range.strip_suffix("/*").is_some_and(|k| k == kind);
            let better = best.is_none_or(|(best_q, best_index)| q > best_q || (q == best_q && index < best_index));
            if matches && better {
                best = Some((q, index));
            }
        }
    }
    best.and_then(|(_, index)| formats().nth(index))
}

/// `turtle` in `syntax` (Turtle itself is sent as the macros wrote it).
fn render(turtle: &str, syntax: Syntax) -> Result<Vec<u8>, String> {
    match syntax {
        Syntax::Turtle => Ok(turtle.as_bytes().to_vec()),
        Syntax::Other(format) => converted::convert(turtle, format),
    }
}

fn error(status: StatusCode, message: String) -> Response {
    let body = json!({ "error": { "code": status.as_u16(), "message": message } }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_gets_the_syntax_it_prefers() {
        let chosen = |accept: Option<&str>| negotiate(accept).map(|(media_type, _)| media_type);
        assert_eq!(chosen(None), Some("text/turtle"));
        assert_eq!(chosen(Some("*/*")), Some("text/turtle"));
        assert_eq!(chosen(Some("text/html")), None);
        assert_eq!(chosen(Some("application/json")), None);
        if cfg!(feature = "rdf-formats") {
            assert_eq!(chosen(Some("application/ld+json")), Some("application/ld+json"));
            assert_eq!(chosen(Some("text/turtle;q=0.5, application/n-triples")), Some("application/n-triples"));
            assert_eq!(chosen(Some("application/*")), Some("application/n-triples"));
            assert_eq!(chosen(Some("text/html, */*;q=0.1")), Some("text/turtle"));
            assert_eq!(chosen(Some("text/turtle;q=0, application/rdf+xml")), Some("application/rdf+xml"));
        } else {
            // Built without the feature, Turtle is the one syntax.
            assert_eq!(chosen(Some("application/ld+json, */*;q=0.1")), Some("text/turtle"));
            assert_eq!(chosen(Some("application/ld+json")), None);
        }
    }

    #[test]
    fn turtle_converts_to_every_other_syntax() {
        let turtle = "@prefix sh: <http://www.w3.org/ns/shacl#> .\n\n<https://e.org/S> a sh:NodeShape ; \
                      sh:property [ sh:path <https://e.org/p> ; sh:maxCount 1 ] .\n";
        for (media_type, format) in formats() {
            let text = String::from_utf8(render(turtle, format).unwrap()).unwrap();
            assert!(text.contains("https://e.org/p"), "{media_type}: {text}");
        }
    }
}
