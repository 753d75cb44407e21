//! `acp-agent`: a coding agent that speaks the Agent Client Protocol (ACP)
//! over stdio.
//!
//! An editor starts the `acp-agent` binary and talks newline-delimited
//! JSON-RPC with it, in protocol v1 or in the draft protocol v2, whichever
//! the editor asks for (see [`output`] for what differs). Each prompt turn streams the model's answer back as
//! `session/update`s and lets the model call tools: read, write and edit files
//! (through the editor's file system when it offers one, so unsaved buffers are
//! seen), list and grep the project (respecting `.gitignore`), run commands
//! (in editor terminals when offered, locally otherwise) and keep a plan.
//!
//! Edits and commands follow the session's mode: `read-only`, `ask` (the
//! default: the user is asked through `session/request_permission`) or
//! `auto`.
//!
//! The editor's MCP servers (stdio and streamable HTTP) are connected per
//! session and their tools offered to the model, see [`mcp`]. The slash
//! commands `/compact` and `/init` are offered through
//! `available_commands_update`.
//!
//! Sessions are stored in SQLite (see [`store`]) as they happen, so that
//! clients can list, load (with the history replayed), resume, close and
//! delete them across restarts and crashes, and two agent processes can
//! share one data directory. A damaged store is reported to the client, not
//! hidden.
//!
//! The system prompt carries the project's instructions (`AGENTS.md`, else
//! `CLAUDE.md`), the environment and a git summary; transient model failures
//! are retried (see [`llm::retry`]) and permanent ones end the prompt with a
//! JSON-RPC error; the conversation is compacted automatically when it
//! fills the context window.
//!
//! The model is configured by environment variables and a TOML config file,
//! see [`config`]. The model client speaks OpenAI-compatible Chat Completions and the Anthropic
//! Messages API, both streamed, see [`llm`].
//!
//! # Use as a library
//! ```no_run
//! # async fn run() -> Result<(), acp::ConnectionError> {
//! let config = acp_agent::config::Config::from_env();
//! let store = acp_agent::store::Store::in_memory();
//! acp_agent::serve(acp::Transport::stdio(), config, store).await
//! # }
//! ```
#![deny(missing_docs)]

pub mod agent;
pub mod config;
pub mod llm;
pub mod mcp;
pub mod output;
pub mod store;
pub mod tools;

pub use agent::{CodingAgent, CodingAgentV2, Mode};

/// Connects the agent to a client over `transport`, keeping sessions in
/// `store`. The client's `initialize` chooses the protocol version: v1
/// ([`CodingAgent`]) or v2 ([`CodingAgentV2`]). Returns the connection, which
/// tells the version once chosen, and its I/O future, which must be awaited
/// or spawned; it ends when the client goes away.
pub fn connect(
    transport: acp::Transport,
    options: acp::ConnectionOptions,
    config: config::Config,
    store: store::Store,
) -> (acp::negotiate::RoutedAgent, acp::IoFuture) {
    let dropped = tools::DroppedAnswers::new(options.max_message_size);
    let seen = dropped.clone();
    let before = options.on_dropped.clone();
    let options = options.on_dropped(move |d| {
        if matches!(d, acp::Dropped::TooLong { id: None, .. }) {
            seen.record();
        }
        if let Some(before) = &before {
            before(d);
        }
    });
    // A v1 client asking for a newer version still gets v1: the router
    // answers a v1 client's `initialize` with v1.
    let (config2, store2, dropped2) = (config.clone(), store.clone(), dropped.clone());
    acp::negotiate::AgentRouter::new()
        .v1(move |conn| CodingAgent::new(output::Output::V1(conn), config, store, dropped))
        .v2(move |conn| CodingAgentV2::new(conn, config2, store2, dropped2))
        .connect(transport, options)
}

/// Serves the agent over `transport` until the client goes away, keeping
/// sessions in `store`.
pub async fn serve(
    transport: acp::Transport,
    config: config::Config,
    store: store::Store,
) -> Result<(), acp::ConnectionError> {
    let (_conn, io) = connect(transport, acp::ConnectionOptions::default(), config, store);
    io.await
}
