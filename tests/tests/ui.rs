//! Compile errors are part of the product: every declaration fault the macros refuse has a case
//! here with a reviewed `.stderr`. Regenerate with `TRYBUILD=overwrite cargo test -p trails-tests --test ui`
//! and read the diff before committing.

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
