//! The fuzz targets' corpora (`fuzz/corpus/<target>/`), replayed on the stable toolchain: every
//! input the fuzzer kept — seeds and anything it found — still runs without a panic.

use std::path::Path;

/// Run `target` on every input of `fuzz/corpus/<name>/`, and check the seeds are there.
fn replay(name: &str, seeds: usize, target: fn(&[u8])) {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(name);
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
            trails::__fuzz::resource_uri(text);
        }
    });
}

#[test]
fn the_read_field_window_corpus_replays_without_a_panic() {
    replay("read_field_window", 6, trails::__fuzz::read_field_window);
}

#[test]
fn the_blob_value_corpus_replays_and_validator_and_deserialiser_agree() {
    replay("blob_value", 8, trails::__fuzz::blob_value);
}

#[test]
fn the_hot_path_corpus_replays_without_a_panic() {
    replay("hot_path", 8, trails::__fuzz::hot_path);
}
