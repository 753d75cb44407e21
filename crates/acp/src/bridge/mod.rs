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

mod to_v1_agent;
mod to_v2_agent;

pub use to_v2_agent::V1Adapter;
pub(crate) use to_v2_agent::v1_adapter;

use crate::connection::Connection;
use crate::engine::{ConnectionOptions, Engine};
use crate::error::ConnectionError;
use crate::process::AgentCommand;
use crate::transport::{BoxedReader, BoxedWriter, Transport};
use acp_schema::{ErrorCode, ProtocolVersion, RequestId, v2};
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

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

/// How the `initialize` exchange ended.
enum Handshake {
    /// One side went away (the route is what was known).
    Gone(Route),
    /// Both speak this version: pass bytes on.
    Same(Route),
    /// Translate; the v1 agent's `initialize` result.
    ClientV2AgentV1(acp_schema::InitializeResponse),
    /// Translate; the v2 agent's `initialize` result.
    ClientV1AgentV2(v2::InitializeResponse),
}

/// How asking the agent for v2 first ended.
enum Asked {
    /// The handshake is over.
    Done(Box<Handshake>),
    /// The agent's error was passed on; the client may send another
    /// `initialize`.
    Again,
    /// Ask the agent in the client's version instead.
    AsTheClient,
}

struct Ends {
    client_reader: BufReader<BoxedReader>,
    client_writer: BoxedWriter,
    agent_reader: BufReader<BoxedReader>,
    agent_writer: BoxedWriter,
    limit: usize,
    /// Ask the agent for v2 first ([`BridgeOptions::prefer_v2`]).
    prefer_v2: bool,
}

/// The members of a message the handshake reads.
#[derive(serde::Deserialize)]
struct Message<'a> {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default, borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<acp_schema::Error>,
}

/// A message the bridge writes, members in the usual order.
#[derive(serde::Serialize)]
struct Outgoing<'a, T: serde::Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<acp_schema::Error>,
}

impl<T: serde::Serialize> Outgoing<'_, T> {
    fn request(id: &RequestId, params: T) -> Outgoing<'_, T> {
        Outgoing {
            jsonrpc: "2.0",
            id,
            method: Some("initialize"),
            params: Some(params),
            result: None,
            error: None,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The id the bridge's own v2 `initialize` carries.
const OWN_ID: &str = "acp-bridge-initialize";

impl Ends {
    /// Reads one line (`None` at the end); a line over the limit is an error.
    async fn read(
        reader: &mut BufReader<BoxedReader>,
        limit: usize,
    ) -> std::io::Result<Option<Vec<u8>>> {
        loop {
            let mut line = Vec::new();
            let n = (&mut *reader)
                .take(limit as u64 + 1)
                .read_until(b'\n', &mut line)
                .await?;
            if n == 0 {
                return Ok(None);
            }
            if line.len() > limit && line.last() != Some(&b'\n') {
                return Err(std::io::Error::other(format!(
                    "a message over the limit of {limit} bytes before `initialize` was answered"
                )));
            }
            let text = String::from_utf8_lossy(&line);
            let trimmed = text.trim().trim_start_matches('\u{feff}');
            if !trimmed.is_empty() {
                return Ok(Some(trimmed.as_bytes().to_vec()));
            }
        }
    }

    async fn write(writer: &mut BoxedWriter, line: &[u8]) -> std::io::Result<()> {
        writer.write_all(line).await?;
        writer.write_all(b"\n").await?;
        writer.flush().await
    }

    async fn send_client(&mut self, line: &[u8]) -> Result<(), ConnectionError> {
        Self::write(&mut self.client_writer, line).await.map_err(io)
    }

    async fn send_agent(&mut self, line: &[u8]) -> Result<(), ConnectionError> {
        Self::write(&mut self.agent_writer, line).await.map_err(io)
    }

    async fn reply_error(
        &mut self,
        id: &RequestId,
        error: acp_schema::Error,
    ) -> Result<(), ConnectionError> {
        let line = Outgoing::<()> {
            jsonrpc: "2.0",
            id,
            method: None,
            params: None,
            result: None,
            error: Some(error),
        };
        self.send_client(&line.bytes()).await
    }

    async fn reply_result<R: serde::Serialize>(
        &mut self,
        id: &RequestId,
        result: &R,
    ) -> Result<(), ConnectionError> {
        let line = Outgoing {
            jsonrpc: "2.0",
            id,
            method: None,
            params: None,
            result: Some(result),
            error: None,
        };
        self.send_client(&line.bytes()).await
    }

    /// The agent's answer to `id`; lines before it are passed to the client
    /// when `pass` says so. `None`: the agent went away.
    async fn answer(
        &mut self,
        id: &RequestId,
        pass: bool,
    ) -> Result<Option<Vec<u8>>, ConnectionError> {
        loop {
            let Some(line) = Self::read(&mut self.agent_reader, self.limit)
                .await
                .map_err(io)?
            else {
                return Ok(None);
            };
            let is_answer = serde_json::from_slice::<Message<'_>>(&line)
                .is_ok_and(|m| m.method.is_none() && m.id.as_ref() == Some(id));
            if is_answer {
                return Ok(Some(line));
            }
            if pass {
                self.send_client(&line).await?;
            }
        }
    }

    async fn handshake(&mut self) -> Result<Handshake, ConnectionError> {
        let gone = Handshake::Gone(Route {
            client: ProtocolVersion::V0,
            agent: ProtocolVersion::V0,
        });
        loop {
            let Some(line) = Self::read(&mut self.client_reader, self.limit)
                .await
                .map_err(io)?
            else {
                return Ok(gone);
            };
            let message = match serde_json::from_slice::<Message<'_>>(&line) {
                Ok(m) => m,
                Err(e) if line.first() == Some(&b'{') || line.first() == Some(&b'[') => {
                    let error = match serde_json::from_slice::<serde::de::IgnoredAny>(&line) {
                        Ok(_) => acp_schema::Error::invalid_request()
                            .data("a message must be a JSON object"),
                        Err(_) => acp_schema::Error::parse_error().data(e.to_string()),
                    };
                    self.reply_error(&RequestId::Null, error).await?;
                    continue;
                }
                Err(e) => {
                    self.reply_error(
                        &RequestId::Null,
                        acp_schema::Error::parse_error().data(e.to_string()),
                    )
                    .await?;
                    continue;
                }
            };
            let (Some(id), Some(method)) = (message.id.clone(), message.method.as_deref()) else {
                // A notification (or a stray response) before `initialize`.
                continue;
            };
            if method != "initialize" {
                self.reply_error(
                    &id,
                    acp_schema::Error::invalid_request().data(format!(
                        "the first request must be `initialize`, not `{method}`"
                    )),
                )
                .await?;
                continue;
            }
            let Some(asked) = crate::map::asked_version(message.params) else {
                self.reply_error(
                    &id,
                    acp_schema::Error::invalid_params()
                        .data("`initialize` needs `protocolVersion`, an integer from 0 to 65535"),
                )
                .await?;
                continue;
            };
            let client = if asked >= ProtocolVersion::V2 {
                ProtocolVersion::V2
            } else {
                ProtocolVersion::V1
            };
            if self.prefer_v2 && client == ProtocolVersion::V1 {
                match self.ask_v2_first(&id, message.params).await? {
                    Asked::Done(handshake) => return Ok(*handshake),
                    Asked::Again => continue,
                    Asked::AsTheClient => {}
                }
            }
            // The agent gets the client's own `initialize`, for its version;
            // a v2 one with v1's members added, for a v1 agent to read
            // (`map::initialize_params_for_either`).
            let sent = if asked >= ProtocolVersion::V2 {
                match acp_schema::decode_params::<v2::InitializeRequest>(message.params) {
                    Ok(r) => {
                        let r = r.protocol_version(ProtocolVersion::V2);
                        Outgoing::request(&id, crate::map::initialize_params_for_either(&r, None))
                            .bytes()
                    }
                    Err(_) if asked == ProtocolVersion::V2 => line.clone(),
                    Err(_) => {
                        let mut params: Value =
                            serde_json::from_str(message.params.map_or("{}", RawValue::get))
                                .unwrap_or_default();
                        params["protocolVersion"] = Value::from(2);
                        Outgoing::request(&id, params).bytes()
                    }
                }
            } else {
                line.clone()
            };
            self.send_agent(&sent).await?;
            let Some(answer) = self.answer(&id, true).await? else {
                return Ok(Handshake::Gone(Route {
                    client,
                    agent: ProtocolVersion::V0,
                }));
            };
            let reply: Message<'_> =
                serde_json::from_slice(&answer).map_err(|e| protocol(e.to_string()))?;
            if let Some(error) = reply.error {
                let refused = error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION;
                if refused && client == ProtocolVersion::V1 {
                    // A v2-only agent: ask it in v2, for the client.
                    let v1req: acp_schema::InitializeRequest =
                        match acp_schema::decode_params(message.params) {
                            Ok(r) => r,
                            Err(_) => {
                                self.send_client(&answer).await?;
                                continue;
                            }
                        };
                    let v2req = crate::map::session::initialize_request_to_v2(v1req);
                    let own = RequestId::Str(OWN_ID.into());
                    self.send_agent(&Outgoing::request(&own, v2req).bytes())
                        .await?;
                    let Some(answer) = self.answer(&own, false).await? else {
                        return Ok(Handshake::Gone(Route {
                            client,
                            agent: ProtocolVersion::V2,
                        }));
                    };
                    let reply: Message<'_> =
                        serde_json::from_slice(&answer).map_err(|e| protocol(e.to_string()))?;
                    if let Some(error) = reply.error {
                        self.reply_error(&id, error).await?;
                        continue;
                    }
                    let init: v2::InitializeResponse =
                        acp_schema::decode_params(reply.result).map_err(bad_result)?;
                    self.reply_result(
                        &id,
                        &crate::map::session::initialize_response_to_v1(init.clone()),
                    )
                    .await?;
                    return Ok(Handshake::ClientV1AgentV2(init));
                }
                self.send_client(&answer).await?;
                continue;
            }
            let agent = crate::map::asked_version(reply.result).unwrap_or(ProtocolVersion::V0);
            if client == ProtocolVersion::V2 && agent == ProtocolVersion::V1 {
                let init: acp_schema::InitializeResponse =
                    acp_schema::decode_params(reply.result).map_err(bad_result)?;
                self.reply_result(
                    &id,
                    &crate::map::session::initialize_response_to_v2(init.clone()),
                )
                .await?;
                return Ok(Handshake::ClientV2AgentV1(init));
            }
            self.send_client(&answer).await?;
            return Ok(Handshake::Same(Route { client, agent }));
        }
    }

    /// A v1 client's `initialize` asked of the agent as v2's
    /// ([`BridgeOptions::prefer_v2`]).
    async fn ask_v2_first(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<Asked, ConnectionError> {
        // (v2 has no null ids; what does not decode is for the agent to
        // refuse, in the client's version.)
        let decoded = acp_schema::decode_params::<acp_schema::InitializeRequest>(params);
        let (Ok(v1req), false) = (decoded, *id == RequestId::Null) else {
            return Ok(Asked::AsTheClient);
        };
        let v2req = crate::map::session::initialize_request_to_v2(v1req.clone())
            .protocol_version(ProtocolVersion::V2);
        let params =
            crate::map::initialize_params_for_either(&v2req, Some(&v1req.client_capabilities));
        self.send_agent(&Outgoing::request(id, params).bytes())
            .await?;
        let Some(answer) = self.answer(id, true).await? else {
            return Ok(Asked::Done(Box::new(Handshake::Gone(Route {
                client: ProtocolVersion::V1,
                agent: ProtocolVersion::V0,
            }))));
        };
        let reply: Message<'_> =
            serde_json::from_slice(&answer).map_err(|e| protocol(e.to_string()))?;
        if let Some(error) = reply.error {
            if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
                return Ok(Asked::AsTheClient);
            }
            self.send_client(&answer).await?;
            return Ok(Asked::Again);
        }
        let agent = crate::map::asked_version(reply.result).unwrap_or(ProtocolVersion::V0);
        if agent == ProtocolVersion::V2 {
            let init: v2::InitializeResponse =
                acp_schema::decode_params(reply.result).map_err(bad_result)?;
            self.reply_result(
                id,
                &crate::map::session::initialize_response_to_v1(init.clone()),
            )
            .await?;
            return Ok(Asked::Done(Box::new(Handshake::ClientV1AgentV2(init))));
        }
        // A v1 agent (it read the v1 members): its answer is the client's.
        self.send_client(&answer).await?;
        Ok(Asked::Done(Box::new(Handshake::Same(Route {
            client: ProtocolVersion::V1,
            agent,
        }))))
    }

    /// Passes every byte on, both ways, until the agent's output ends or the
    /// client's does (then the agent's input is closed and its output drained).
    async fn pipe(self) -> Result<(), ConnectionError> {
        let Ends {
            mut client_reader,
            mut client_writer,
            mut agent_reader,
            mut agent_writer,
            ..
        } = self;
        let up = async move {
            let copied = tokio::io::copy_buf(&mut client_reader, &mut agent_writer).await;
            let _ = agent_writer.shutdown().await;
            // Closes the agent's input (a child's stdin closes on drop only).
            drop(agent_writer);
            copied
        };
        let down = async {
            let copied = tokio::io::copy_buf(&mut agent_reader, &mut client_writer).await;
            let _ = client_writer.flush().await;
            copied
        };
        tokio::pin!(up, down);
        tokio::select! {
            result = &mut down => result.map(drop).map_err(io),
            result = &mut up => {
                result.map_err(io)?;
                down.await.map(drop).map_err(io)
            }
        }
    }

    /// A v2 client and a v1 agent, both initialized: translates until one
    /// side goes away.
    async fn translate_v2_v1(
        self,
        init: acp_schema::InitializeResponse,
        options: ConnectionOptions,
    ) -> Result<(), ConnectionError> {
        let (up_engine, up_run) = Engine::new(options.clone());
        let (down_engine, down_run) = Engine::new(options);
        let up: crate::ClientSideConnection = Connection::from_engine(up_engine);
        let down: crate::v2::AgentSideConnection = Connection::from_engine(down_engine);
        let shared = to_v1_agent::Shared::initialized(init);
        let client_side = crate::client::ClientHandler::new(
            to_v1_agent::FromV1Agent {
                down: down.clone(),
                shared: shared.clone(),
            },
            up.clone(),
        );
        let agent_side = crate::v2::AgentHandler::new(
            to_v1_agent::ToV1Agent {
                up: up.clone(),
                down: down.clone(),
                shared,
            },
            down.clone(),
        );
        let up_io = up_run.run(
            Transport::new(self.agent_reader, self.agent_writer),
            Arc::new(client_side),
        );
        let down_io = down_run.run(
            Transport::new(self.client_reader, self.client_writer),
            Arc::new(agent_side),
        );
        run_both(up_io, down_io, || up.close(), || down.close()).await
    }

    /// A v1 client and a v2 agent, both initialized: translates until one
    /// side goes away.
    async fn translate_v1_v2(
        self,
        init: v2::InitializeResponse,
        options: ConnectionOptions,
    ) -> Result<(), ConnectionError> {
        let (up_engine, up_run) = Engine::new(options.clone());
        let (down_engine, down_run) = Engine::new(options);
        let up: crate::v2::ClientSideConnection = Connection::from_engine(up_engine);
        let down: crate::AgentSideConnection = Connection::from_engine(down_engine);
        let shared = to_v2_agent::Shared::initialized(init);
        let client_side = crate::v2::ClientHandler::new(
            to_v2_agent::FromV2Agent {
                down: down.clone(),
                shared: shared.clone(),
            },
            up.clone(),
        );
        let agent_side = crate::agent::AgentHandler::new(
            to_v2_agent::V1Adapter {
                up: up.clone(),
                down: down.clone(),
                shared,
            },
            down.clone(),
        );
        let up_io = up_run.run(
            Transport::new(self.agent_reader, self.agent_writer),
            Arc::new(client_side),
        );
        let down_io = down_run.run(
            Transport::new(self.client_reader, self.client_writer),
            Arc::new(agent_side),
        );
        run_both(up_io, down_io, || up.close(), || down.close()).await
    }
}

/// Runs the agent's and the client's connections; when one ends, closes the
/// other and waits for it. The client's end is the result.
async fn run_both(
    up_io: crate::IoFuture,
    down_io: crate::IoFuture,
    close_up: impl FnOnce(),
    close_down: impl FnOnce(),
) -> Result<(), ConnectionError> {
    let (mut up_io, mut down_io) = (up_io, down_io);
    tokio::select! {
        result = &mut down_io => {
            close_up();
            let _ = up_io.await;
            result
        }
        result = &mut up_io => {
            close_down();
            let down = down_io.await;
            result.and(down)
        }
    }
}

fn io(e: std::io::Error) -> ConnectionError {
    ConnectionError::Io(Arc::new(e))
}

fn bad_result(e: acp_schema::ParamsError) -> ConnectionError {
    match e {
        acp_schema::ParamsError::Invalid(d) => ConnectionError::Protocol(d),
        other => protocol(other.to_string()),
    }
}

fn protocol(message: String) -> ConnectionError {
    ConnectionError::Protocol(acp_schema::DecodeError {
        path: String::new(),
        message,
    })
}
