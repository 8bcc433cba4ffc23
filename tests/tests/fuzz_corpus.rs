//! The fuzz targets' corpora (`fuzz/corpus/<target>/`), replayed on the stable toolchain: every
//! input the fuzzer kept — seeds and anything it found — still runs without a panic.

use std::path::Path;

#[test]
fn the_resource_uri_corpus_replays_without_a_panic() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/resource_uri");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&corpus).expect("the corpus directory is in the repository") {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        if let Ok(text) = std::str::from_utf8(&bytes) {
            trails::__fuzz::resource_uri(text);
            replayed += 1;
        }
    }
    assert!(replayed >= 6, "the corpus holds at least its seeds ({replayed} replayed)");
}

#[test]
fn the_read_field_window_corpus_replays_without_a_panic() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/read_field_window");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&corpus).expect("the corpus directory is in the repository") {
        trails::__fuzz::read_field_window(&std::fs::read(entry.unwrap().path()).unwrap());
        replayed += 1;
    }
    assert!(replayed >= 6, "the corpus holds at least its seeds ({replayed} replayed)");
}

#[test]
fn the_blob_value_corpus_replays_and_validator_and_deserialiser_agree() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/blob_value");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&corpus).expect("the corpus directory is in the repository") {
        trails::__fuzz::blob_value(&std::fs::read(entry.unwrap().path()).unwrap());
        replayed += 1;
    }
    assert!(replayed >= 8, "the corpus holds at least its seeds ({replayed} replayed)");
}

#[test]
fn the_hot_path_corpus_replays_without_a_panic() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/hot_path");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&corpus).expect("the corpus directory is in the repository") {
        trails::__fuzz::hot_path(&std::fs::read(entry.unwrap().path()).unwrap());
        replayed += 1;
    }
    assert!(replayed >= 8, "the corpus holds at least its seeds ({replayed} replayed)");
}
