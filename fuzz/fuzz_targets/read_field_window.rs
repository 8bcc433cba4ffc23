//! `trails.kg.read_field`'s windowing on arbitrary text, offsets, limits and windows: every
//! answer fits its window and advances, and the pieces put together are the text.
//! `cargo +nightly fuzz run read_field_window` (from the repository root); seeds in `corpus/`,
//! replayed by the runtime's unit tests (`runtime/serve/src/fuzz.rs`) in the normal suite.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| trails::__fuzz::read_field_window(data));
