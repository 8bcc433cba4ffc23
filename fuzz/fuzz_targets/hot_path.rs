//! The HTTP hot path's request parsing and decision: header lines, a blank line, the body.
//! Trails' JSON-RPC check and the hot path's "may I answer this?" must never panic, and what it
//! takes must be one of the method table's methods with the headers rmcp requires.
//! `cargo +nightly fuzz run hot_path` (from the repository root); seeds in `corpus/`, replayed by
//! the runtime's unit tests (`runtime/serve/src/fuzz.rs`) in the normal suite.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trails::__fuzz::hot_path(data);
});
