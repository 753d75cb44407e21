//! The integration tests of `acp-bench`: one binary, a module per concern
//! (`tests/it/<concern>.rs`, listed here).
//!
//! - `runs`: every workload, small, through both implementations.
//! - `peers`: every workload, small, through the official SDKs (when ready).

mod peers;
mod runs;
