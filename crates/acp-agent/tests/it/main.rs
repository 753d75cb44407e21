//! The integration tests of `acp-agent`: one binary, a module per concern
//! (`cancel::…`, `store_durability::…`), each running the built agent
//! against a scripted mock model server on 127.0.0.1. A new test goes into
//! the module of its concern, or a new `tests/it/<concern>.rs` listed here.
//! `support` holds what they share (and crate acp-e2e's tests use too): the
//! mock model server, a recording ACP client, an MCP server, and starting
//! the agent. Data the tests read is in `tests/fixtures/`.

mod support;

mod big_files;
mod cancel;
mod commands;
mod compaction;
mod config;
mod context;
mod failures;
mod head_of_line;
mod local_tools;
mod mcp;
mod misbehaving_client;
mod models;
mod modes;
mod providers;
mod registry;
mod sessions;
mod store_damage;
mod store_durability;
mod turn;
mod v2;
