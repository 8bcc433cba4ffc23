//! trails-codegen's tests, in one binary: the projections snapshotted with `insta`, and the
//! renaming and schema generation held to serde's and schemars' own output.

mod projections;
mod rename_oracle;
mod schemars_oracle;
