//! A `pattern` that the macro accepted but this binary's `regex` cannot compile (a crate-version
//! mismatch) must stop start-up with a message naming it, never validate with a different rule.
//! The macro cannot produce such a pattern, so this test links one by hand through the private
//! path generated code uses.

use trails::__private::{linkme, Pattern, PATTERNS};
use trails::config::Settings;
use trails::registry::{Registry, RegistryError};
use trails::{App, BuildError};

static BROKEN: Pattern = Pattern::new("(unclosed");

#[linkme::distributed_slice(PATTERNS)]
#[linkme(crate = linkme)]
static BROKEN_LISTED: &Pattern = &BROKEN;

#[test]
fn a_pattern_that_does_not_compile_stops_start_up() {
    let error = Registry::collect().unwrap_err();
    assert!(matches!(&error, RegistryError::Pattern(e) if e.source_text == "(unclosed"), "{error}");
    assert!(error.to_string().starts_with("pattern `(unclosed` does not compile at run time"), "{error}");
    let built = App::new().build(Settings::default());
    assert!(matches!(built, Err(BuildError::Registry(RegistryError::Pattern(_)))));
}
