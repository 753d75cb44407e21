//! The bridge's two ends: the `initialize` exchange that chooses the route
//! ([`Ends::handshake`]), then passing bytes on or translating.

use super::{Route, to_v1_agent, to_v2_agent};
use crate::connection::Connection;
use crate::engine::{ConnectionOptions, Engine};
use crate::error::ConnectionError;
use crate::transport::{BoxedReader, BoxedWriter, Transport};
use acp_schema::{ErrorCode, ProtocolVersion, RequestId, v2};
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// How the `initialize` exchange ended.
pub(super) enum Handshake {
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

pub(super) struct Ends {
    pub(super) client_reader: BufReader<BoxedReader>,
    pub(super) client_writer: BoxedWriter,
    pub(super) agent_reader: BufReader<BoxedReader>,
    pub(super) agent_writer: BoxedWriter,
    pub(super) limit: usize,
    /// Ask the agent for v2 first ([`super::BridgeOptions::prefer_v2`]).
    pub(super) prefer_v2: bool,
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

    pub(super) async fn handshake(&mut self) -> Result<Handshake, ConnectionError> {
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
    /// ([`super::BridgeOptions::prefer_v2`]).
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
    pub(super) async fn pipe(self) -> Result<(), ConnectionError> {
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
    pub(super) async fn translate_v2_v1(
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
    pub(super) async fn translate_v1_v2(
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
