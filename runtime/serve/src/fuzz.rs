//! Entry points for the fuzz targets in `fuzz/`, and the replay of their corpora on the stable
//! toolchain: every input the fuzzer kept — seeds and anything it found — still runs without a
//! panic.

use trails_core::declare::{Datatype, NodeTypeInfo, PredicateInfo};

const fn field(field: &'static str, datatype: Datatype) -> PredicateInfo {
    PredicateInfo { field, iri: field, datatype, required: false, many: false, target: None, role: None }
}

static FIELDS: [PredicateInfo; 8] = [
    field("req_id", Datatype::String),
    field("priority", Datatype::Integer),
    field("score", Datatype::Double),
    field("done", Datatype::Boolean),
    field("due", Datatype::DateTime),
    field("owner", Datatype::Iri),
    field("details", Datatype::Json),
    field("attachment", Datatype::Blob),
];
/// A node type with a field of every datatype (also the URI parser's unit-test fixture).
pub(crate) static REQUIREMENT: NodeTypeInfo = NodeTypeInfo {
    label: "Requirement",
    iri: "urn:t#Requirement",
    parent: None,
    unique: &[],
    key: Some("req_id"),
    predicates: &FIELDS,
    validate: |_, _, _| {},
};

/// The resource-URI and `where` parser (what `resources/read` runs first) on `text` as a
/// whole URI, as a list query and as a `where` value, against a node type with a field of
/// every datatype. Must never panic, whatever `text` is.
pub fn resource_uri(text: &str) {
    let types: &[&'static NodeTypeInfo] = &[&REQUIREMENT];
    crate::resources::parse_uri(text, types);
    crate::resources::parse_uri(&format!("trails://kg/Requirement?{text}"), types);
    crate::resources::parse_uri(&format!("trails://kg/Requirement?where={text}"), types);
}

/// `trails.kg.read_field`'s windowing on `data`: three little-endian `u16`s — the offset,
/// `limit_chars` and the window (brought into 1–16384 and 1024–65536) — then the text (UTF-8,
/// lossily). The text is read from the offset to its end by following `next_offset`; panics
/// if an answer overflows the window, fails to advance, or the pieces are not the text.
pub fn read_field_window(data: &[u8]) {
    let Some((numbers, text)) = data.split_at_checked(6) else { return };
    let number = |at: usize| usize::from(u16::from_le_bytes([numbers[at], numbers[at + 1]]));
    let text = String::from_utf8_lossy(text);
    let (limit, window) = (1 + number(2) % 16_384, 1024 + number(4) % (65_536 - 1024 + 1));
    crate::builtin::read_through(&text, number(0), limit, window);
}

/// The HTTP hot path's request parsing and decision on `data`: header lines, a blank line,
/// the body. Never panics; what it takes is what it may answer (see `http/hot`).
#[cfg(feature = "http")]
pub fn hot_path(data: &[u8]) {
    crate::http::fuzz_hot_path(data);
}

/// A blob as a client sends it, on `data` read as JSON (anything else is skipped): the
/// validator (what answers the client) and the deserialiser (what the handler gets) must
/// agree — a value one accepts and the other refuses would be an internal error or a blob
/// that skipped its checks — and an accepted blob must serialise back to itself with its
/// bytes stripped from what models see. Panics otherwise.
pub fn blob_value(data: &[u8]) {
    use trails_core::declare::Schema as _;
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let errors = trails_core::validate::run(trails_core::Blob::validate_at, &value);
    let parsed = serde_json::from_value::<trails_core::Blob>(value.clone());
    match (errors.is_empty(), parsed) {
        (true, Ok(blob)) => {
            let mut shown = serde_json::to_value(&blob).expect("a blob serialises");
            let back: trails_core::Blob = serde_json::from_value(shown.clone()).expect("a blob reads back");
            assert_eq!(back, blob);
            trails_core::declare::blob::strip_bytes(&mut shown);
            assert_eq!(shown, blob.metadata(), "a result shows the metadata only");
        }
        (false, Err(_)) => {}
        (valid, parsed) => panic!("validator says {valid}, deserialiser says {parsed:?} for {value}"),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Run `target` on every input of `fuzz/corpus/<name>/`, and check the seeds are there.
    fn replay(name: &str, seeds: usize, target: fn(&[u8])) {
        let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
        if !fuzz.exists() {
            return; // the published crate's tests: the corpora stay in the repository
        }
        let corpus = fuzz.join("corpus").join(name);
        let mut replayed = 0;
        for entry in std::fs::read_dir(&corpus).expect("the corpus directory is in the repository") {
            target(&std::fs::read(entry.unwrap().path()).unwrap());
            replayed += 1;
        }
        assert!(replayed >= seeds, "the {name} corpus holds at least its {seeds} seeds ({replayed} replayed)");
    }

    #[test]
    fn the_resource_uri_corpus_replays_without_a_panic() {
        // The target takes text, as the fuzz target does (it skips inputs that are not UTF-8).
        replay("resource_uri", 6, |bytes| {
            if let Ok(text) = std::str::from_utf8(bytes) {
                super::resource_uri(text);
            }
        });
    }

    #[test]
    fn the_read_field_window_corpus_replays_without_a_panic() {
        replay("read_field_window", 6, super::read_field_window);
    }

    #[test]
    fn the_blob_value_corpus_replays_and_validator_and_deserialiser_agree() {
        replay("blob_value", 8, super::blob_value);
    }

    #[test]
    #[cfg(feature = "http")]
    fn the_hot_path_corpus_replays_without_a_panic() {
        replay("hot_path", 9, super::hot_path);
    }
}
