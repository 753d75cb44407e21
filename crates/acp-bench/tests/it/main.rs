//! The integration tests of `acp-bench`: one binary, a module per concern
//! (`tests/it/<concern>.rs`, listed here).
//!
//! - `runs`: every workload, small, through both implementations.

mod runs;
