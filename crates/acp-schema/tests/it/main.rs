//! The integration tests of `acp-schema`: one binary, a module per concern
//! (`schema_validation::…`, `malformed::…`). A new test goes into the module
//! of its concern, or a new `tests/it/<concern>.rs` listed here. `common`
//! holds what they share: the official schemas (fetched from pinned npm
//! tarballs, `common/official.rs`), their validators, and the example
//! corpus of `tests/corpus/`.

mod common;

mod fidelity;
mod malformed;
mod method_tables;
mod official_schemas;
mod proptest_schema;
mod readme;
mod roundtrip_example;
mod schema_validation;
#[cfg(feature = "v2")]
mod v2_schema;
