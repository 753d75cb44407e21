//! The v1 ↔ v2 bridge (feature `v2`): sits between a client and an agent,
//! answers the client in the version it asks for and speaks to the agent in
//! the version the agent answers, translating when they differ. A v2 client
//! can use any v1 agent, and a v1 client (today's editors) any v2 agent.
//!
//! ```no_run
//! # async fn run() -> Result<(), acp::ConnectionError> {
//! let agent = acp::AgentCommand::parse("my-v1-agent --stdio").unwrap();
//! let route = acp::bridge::Bridge::new(agent).serve_stdio().await?;
//! eprintln!("client spoke v{}, agent v{}", route.client, route.agent);
//! # Ok(())
//! # }
//! ```
//!
//! # How it runs
//! The bridge reads the client's first `initialize` and sends the agent an
//! `initialize` of the *client's* version (unless it prefers v2, below): a
//! v1 client's own line; a v2 client's params with v1's `clientInfo` and
//! `clientCapabilities` added (the first row of the table below), which a v1
//! agent reads and a v2 agent ignores. Then:
//!
//! - the agent answers that version: the bridge passes the answer on, and
//!   from there every byte both ways, unread (so nothing is lost, unknown and
//!   unstable methods included; memory stays bounded by the copy buffers);
//! - a v2 client, and the agent answers 1 (a v1 agent): the bridge translates
//!   from there on (a v2 agent to the client, a v1 client to the agent);
//! - a v1 client, and the agent refuses with -32022 (a v2-only agent): the
//!   bridge sends it v2's `initialize` (the client's, translated) and
//!   translates from there on.
//!
//! With [`BridgeOptions::prefer_v2`] (or [`Bridge::prefer_v2`]) a v1
//! client's `initialize` goes to the agent as v2's instead: the v1 params
//! translated (`clientInfo` → `info`, the second column's first row), with
//! the client's `clientInfo` and `clientCapabilities` (as v1 encodes them)
//! added, under the client's id. Then:
//!
//! - the agent answers 2 (it speaks v2, perhaps v1 too): the client gets the
//!   answer translated to v1's, and the bridge translates from there on;
//! - the agent answers 1 (a v1 agent, which read the v1 members): the
//!   answer goes to the client as it is, and every byte passes on unread;
//! - the agent refuses version 2 with -32022: it is sent the client's own
//!   line, as without the option;
//! - another error: passed on, and the client may send another `initialize`.
//!
//! (A v1 `initialize` that does not decode, or has a `null` id, which v2
//! does not allow, goes as the client's own line.) A v2 client is asked for
//! as without the option. [`BridgeOptions::on_route`] hears the [`Route`]
//! once both sides agreed.
//!
//! Before the client's `initialize`, the bridge answers a request -32600 and
//! drops a notification, as an agent does. An `initialize` the agent refuses
//! otherwise is passed on, and the client may send another. When either side
//! goes away, the bridge closes the other. Each translating side is a
//! connection of this crate's runtime, with its guarantees (ordering,
//! bounded queues, errors): a message that does not decode is answered as the
//! runtime answers it.
//!
//! # The mapping, and what it loses
//!
//! | | v2 client → v1 agent | v1 client → v2 agent |
//! |---|---|---|
//! | `initialize` | `info` → `clientInfo`; no `fs`/`terminal`; boolean config options, notices and compaction on; answered with the agent's capabilities as v2 markers (`loadSession` and the `list`/`resume`/`close` markers are v2's baseline); no `agentInfo` → `info` `unknown` | `clientInfo` → `info` (`unknown` if absent); `fs`/`terminal` dropped (a v2 agent uses its own); answered with `loadSession`, `list`, `resume`, `close` when the agent has `session`; `auth.logout` when it has auth methods |
//! | auth | `auth/login` → `authenticate`, `auth/logout` → `logout`; `methodId` ↔ `id`, `type` added | the reverse |
//! | prompt | answered at once with `bridge-user-N`; the bridge sends `user_message`, `running`, forwards the turn, and sends `idle` with the v1 stop reason (a v1 error answer becomes stop reason `error` with that error) | waits for the idle `state_update` and answers with its stop reason (`error` becomes a JSON-RPC error answer; no stop reason: `end_turn`); the acknowledging user message is dropped |
//! | cancel | `session/cancel` forwarded; the v1 answer `cancelled` becomes idle/`cancelled` | forwarded; idle/`cancelled` ends the v1 prompt; a v1 prompt dropped by `$/cancel_request` sends `session/cancel` |
//! | message ids | kept; chunks without one get `bridge-msg-N`, one per run of chunks of the same kind (a tool call starts a new run) | kept |
//! | whole messages | — | one chunk per block (a replacement shows after earlier chunks; a clear is lost) |
//! | tool calls | `tool_call` → creating `tool_call_update` | first upsert → `tool_call`; later → `tool_call_update`; content chunks → the whole content list; clearing title/kind/status/raw input or output lost; `paused` → `in_progress`, `cancelled` → `failed`; `capabilities` lost |
//! | file changes | `oldText`/`newText` → `add`/`modify` with a Git patch made from them | each file of the patch → a v1 diff holding the hunks (changed regions with context, not whole files); no patch → a line of text |
//! | terminals | (v1 client terminals are refused, below) | agent-owned output shown as a text block in the tool call (command, output as UTF-8, last 64 KiB, exit status) |
//! | permission | subject = the tool call; question = its title (or "Allow this tool call?"); `requires_action` while it waits, then `running` | question → the v1 tool call's title; description lost; command subject → an `execute` call with `rawInput` `{command, cwd}`; no subject → call `bridge-permission-N` |
//! | outcomes | unknown → `cancelled` (never an approval) | same |
//! | plans | `plan` → `plan_update` of plan `plan` | `items` → `plan` (several plans: the last wins); `cancelled` entries shown `completed`; file/Markdown plans dropped |
//! | modes | v1 modes → config option `mode` (category `mode`), set through `session/set_mode` | the category-`mode` option → v1 modes; `session/set_mode` → `session/set_config_option` |
//! | sessions | `session/resume` with `replayFrom` → `session/load`; without → `session/resume` (or `session/load` with the replay hidden); idle snapshot before the answer; `session/list` without v1 support → empty; `session/close` without it → `session/cancel` | `session/load` → `session/resume` with `replayFrom: start`; the rest as is |
//! | MCP servers | `type` dropped for stdio | `stdio` gets `type`; SSE servers dropped (v2 has none) |
//! | client `fs/*`, `terminal/*` | refused: the agent is told the client has none; a call gets -32601 saying why | not used (a v2 agent has its own) |
//! | `tool_call/cancel`, `terminal/cancel` | -32601 (v1 has no form) | — |
//! | elicitation | same modes; an answer value v1 cannot hold (`null`, an object) dropped | same |
//! | extensions (`_…`) | forwarded both ways | forwarded both ways |
//! | unknown update kinds, `_` values | kept | kept |
//! | unstable methods | forwarded only when both speak the same version | same |
//!
//! The details of each row are in the translating modules (`crate::map`).

mod ends;
mod to_v1_agent;
mod to_v2_agent;

use ends::{Ends, Handshake};

pub use to_v2_agent::V1Adapter;
pub(crate) use to_v2_agent::v1_adapter;

use crate::engine::ConnectionOptions;
use crate::error::ConnectionError;
use crate::process::AgentCommand;
use crate::transport::Transport;
use acp_schema::ProtocolVersion;
use std::sync::Arc;
use tokio::io::BufReader;

/// Which version each side spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The client's version.
    pub client: ProtocolVersion,
    /// The agent's version.
    pub agent: ProtocolVersion,
}

impl Route {
    /// Whether the bridge translated (the versions differ).
    pub fn translated(&self) -> bool {
        self.client != self.agent
    }
}

/// A bridge to one agent program; see the [module docs](self).
#[derive(Debug)]
pub struct Bridge {
    agent: AgentCommand,
    options: BridgeOptions,
}

impl Bridge {
    /// A bridge to the agent `agent` starts.
    pub fn new(agent: AgentCommand) -> Self {
        Bridge {
            agent,
            options: BridgeOptions::default(),
        }
    }

    /// The options of both translating connections (the message size limit
    /// applies to the first lines too).
    #[must_use]
    pub fn options(mut self, options: ConnectionOptions) -> Self {
        self.options.connection = options;
        self
    }

    /// Asks the agent for v2 whatever the client's version (see
    /// [`BridgeOptions::prefer_v2`]).
    #[must_use]
    pub fn prefer_v2(mut self) -> Self {
        self.options = self.options.prefer_v2();
        self
    }

    /// Runs `on_route` once the client and the agent agreed on their
    /// versions (see [`BridgeOptions::on_route`]).
    #[must_use]
    pub fn on_route(mut self, on_route: impl FnOnce(Route) + Send + 'static) -> Self {
        self.options = self.options.on_route(on_route);
        self
    }

    /// Starts the agent and bridges `client` to it until one side goes away;
    /// the agent's process group is stopped then.
    pub async fn serve(self, client: Transport) -> Result<Route, ConnectionError> {
        let (child, agent) = self
            .agent
            .spawn_stdio()
            .map_err(|e| ConnectionError::Io(Arc::new(e)))?;
        let route = bridge_with(client, agent, self.options).await;
        drop(child);
        route
    }

    /// [`serve`](Self::serve) on this process's standard input and output.
    pub async fn serve_stdio(self) -> Result<Route, ConnectionError> {
        self.serve(Transport::stdio()).await
    }
}

/// How a bridge runs: its connections' options, the version it asks the
/// agent for, and who hears the route taken. For [`bridge_with`] (and
/// [`Bridge`], which has the same setters).
#[derive(Default)]
#[non_exhaustive]
pub struct BridgeOptions {
    connection: ConnectionOptions,
    prefer_v2: bool,
    on_route: Option<Box<dyn FnOnce(Route) + Send>>,
}

impl std::fmt::Debug for BridgeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BridgeOptions")
            .field("connection", &self.connection)
            .field("prefer_v2", &self.prefer_v2)
            .field("on_route", &self.on_route.is_some())
            .finish()
    }
}

impl BridgeOptions {
    /// The bridge's defaults, with `connection` as the options of both
    /// translating connections (the message size limit applies to the first
    /// lines too).
    pub fn new(connection: ConnectionOptions) -> Self {
        BridgeOptions {
            connection,
            ..BridgeOptions::default()
        }
    }

    /// Asks the agent for v2 even when the client speaks v1 (the default is
    /// the client's version): an agent that speaks both versions is then used
    /// in v2, translated for a v1 client. The agent gets the v1 client's
    /// `initialize` as v2's, with the client's v1 `clientInfo` and
    /// `clientCapabilities` added for a v1 agent to read; an agent that
    /// answers 1 is used in v1 (every byte passed on, as for any v1 agent),
    /// and one that refuses version 2 with -32022 is asked again with the
    /// client's own `initialize`. A v2 client is asked for as without this.
    #[must_use]
    pub fn prefer_v2(mut self) -> Self {
        self.prefer_v2 = true;
        self
    }

    /// Runs `on_route` once, when the client and the agent agreed on their
    /// versions (after the client got its `initialize` answer, before any
    /// other message passes). It does not run when a side goes away first.
    #[must_use]
    pub fn on_route(mut self, on_route: impl FnOnce(Route) + Send + 'static) -> Self {
        self.on_route = Some(Box::new(on_route));
        self
    }
}

/// Bridges a client and an agent that are already connected (an agent in this
/// process over [`Transport::memory_pair`], say) until one side goes away.
pub async fn bridge(
    client: Transport,
    agent: Transport,
    options: ConnectionOptions,
) -> Result<Route, ConnectionError> {
    bridge_with(client, agent, BridgeOptions::new(options)).await
}

/// [`bridge`], with all of the bridge's options.
pub async fn bridge_with(
    client: Transport,
    agent: Transport,
    options: BridgeOptions,
) -> Result<Route, ConnectionError> {
    let BridgeOptions {
        connection: options,
        prefer_v2,
        on_route,
    } = options;
    let (client_reader, client_writer) = client.into_parts();
    let (agent_reader, agent_writer) = agent.into_parts();
    let mut ends = Ends {
        client_reader: BufReader::new(client_reader),
        client_writer,
        agent_reader: BufReader::new(agent_reader),
        agent_writer,
        limit: options.max_message_size,
        prefer_v2,
    };
    let handshake = ends.handshake().await?;
    let route = match &handshake {
        Handshake::Gone(route) => return Ok(*route),
        Handshake::Same(route) => *route,
        Handshake::ClientV2AgentV1(_) => Route {
            client: ProtocolVersion::V2,
            agent: ProtocolVersion::V1,
        },
        Handshake::ClientV1AgentV2(_) => Route {
            client: ProtocolVersion::V1,
            agent: ProtocolVersion::V2,
        },
    };
    if let Some(on_route) = on_route {
        on_route(route);
    }
    match handshake {
        Handshake::Gone(_) => {}
        Handshake::Same(_) => ends.pipe().await?,
        Handshake::ClientV2AgentV1(init) => ends.translate_v2_v1(init, options).await?,
        Handshake::ClientV1AgentV2(init) => ends.translate_v1_v2(init, options).await?,
    }
    Ok(route)
}
