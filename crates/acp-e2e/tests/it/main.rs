//! The end-to-end tests: our programs together, one binary, a module per
//! concern. A new test goes into the module of its concern, or a new
//! `tests/it/<concern>.rs` listed here.
//!
//! - `acp_exec`: `acp exec` driving `acp-agent` against a mock model server.
//! - `acp_chat`: `acp chat` with `acp-agent`, through a pseudo-terminal.
//! - `check_agents`: `acp check agent` judging our agents and agents
//!   written on the official SDKs (baselines in `tests/check_baselines/`).

// acp-agent's test support (the mock model server, starting the agent),
// shared, not copied.
#[path = "../../../acp-agent/tests/it/support/mod.rs"]
mod support;

mod acp_chat;
mod acp_exec;
mod check_agents;
