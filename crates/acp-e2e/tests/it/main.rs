//! The end-to-end tests: our programs together, one binary, a module per
//! concern. A new test goes into the module of its concern, or a new
//! `tests/it/<concern>.rs` listed here.
//!
//! - `acp_exec`: `acp exec` driving `acp-agent` against a mock model server.
//! - `acp_chat`: `acp chat` with `acp-agent`, through a pseudo-terminal.
//! - `agent_v2`: `acp-agent` speaking protocol v2 with the official
//!   TypeScript SDK's v2 client.
//! - `check_agents`: `acp check agent` judging our agents and agents
//!   written on the official SDKs (baselines in `tests/check_baselines/`).
//! - `check_agents_v2`: `acp check agent --protocol 2` judging `acp-agent`
//!   and the official TypeScript SDK's v2 agent.

// acp-agent's test support (the mock model server, starting the agent),
// shared, not copied.
#[path = "../../../acp-agent/tests/it/support/mod.rs"]
mod support;

mod acp_chat;
mod acp_exec;
mod agent_v2;
mod check_agents;
mod check_agents_v2;
