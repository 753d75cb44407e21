//! The integration tests of `acp-host`: one binary, a module per concern.
//! A new test goes into the module of its concern, or a new
//! `tests/it/<concern>.rs` listed here.
//!
//! - `resolve_props`: path resolution against the kernel's, on random trees
//!   (a property test).
//! - `terminals`: `Terminals` as a client uses it, and processes that try
//!   to outlive their terminal.

mod resolve_props;
mod terminals;
