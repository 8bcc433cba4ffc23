//! The resource-URI and `where` parser on arbitrary input: it must answer, never panic.
//! `cargo +nightly fuzz run resource_uri` (from the repository root); seeds in `corpus/`,
//! replayed by the runtime's unit tests (`runtime/serve/src/fuzz.rs`) in the normal suite.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        trails::__fuzz::resource_uri(text);
    }
});
