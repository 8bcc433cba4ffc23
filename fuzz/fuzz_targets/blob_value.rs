//! A blob as a client sends it (JSON): the validator and the deserialiser must agree, and an
//! accepted blob must round-trip. `cargo +nightly fuzz run blob_value` (from the repository
//! root); seeds in `corpus/`, replayed by the runtime's unit tests (`runtime/serve/src/fuzz.rs`) in the normal suite.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trails::__fuzz::blob_value(data);
});
