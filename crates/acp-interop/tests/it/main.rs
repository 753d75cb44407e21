//! The interop tests of this crate: one binary, a module per peer-facing
//! concern. A peer whose runtime is missing is skipped, unless
//! `ACP_INTEROP=require`. A new test goes into the module of its concern,
//! or a new `tests/it/<concern>.rs` listed here.
//!
//! - `echo_agent`: each peer's client against the `echo_agent` example of
//!   crate `acp`.
//! - `runtime`: our runtime's `ClientSideConnection` against each peer's
//!   agent.
//! - `remote`: our network client transports against the TypeScript SDK's
//!   server.

mod echo_agent;
mod remote;
mod runtime;
#[cfg(feature = "v2")]
mod v2;
