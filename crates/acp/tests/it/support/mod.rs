//! Shared helpers of the runtime's integration tests: connected pairs over an
//! in-memory transport, a raw-bytes peer for exact wire checks, bounded waits
//! and small agents.
#![allow(dead_code)]

use acp::schema::*;
use acp::transport::{BoxedReader, BoxedWriter};
use acp::{
    Agent, AgentSideConnection, Client, ClientSideConnection, ConnectionError, ConnectionOptions,
    Transport,
};
#[allow(unused_imports)]
pub use acp::{NotificationContext, RequestContext};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::task::JoinHandle;

/// The longest any test waits for something that should happen soon. Generous,
/// because test machines are noisy; a healthy run never comes close.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// Awaits `fut`, failing the test (naming `what`) if it takes longer than [`PATIENCE`].
pub async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    match tokio::time::timeout(PATIENCE, fut).await {
        Ok(out) => out,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// Decodes a typed value from JSON, panicking with the field path on failure.
pub fn typed<T: DeserializeOwned>(value: Value) -> T {
    match decode_value(value.clone()) {
        Ok(t) => t,
        Err(e) => panic!("fixture {value} does not decode: {e}"),
    }
}

/// The JSON value of a typed value.
pub fn json_of<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serialise")
}

/// The I/O tasks of a connected pair; their results tell how each side ended.
pub type IoTask = JoinHandle<Result<(), ConnectionError>>;

/// An agent and a client connected over [`Transport::memory_pair`], both running.
pub struct Pair {
    /// The client's handle (calls the agent).
    pub client: ClientSideConnection,
    /// The agent's handle (calls the client).
    pub agent: AgentSideConnection,
    /// The client's I/O task.
    pub client_io: IoTask,
    /// The agent's I/O task.
    pub agent_io: IoTask,
}

/// Connects `make_agent`'s agent and `make_client`'s client with default options.
pub fn connect<A: Agent, C: Client>(
    make_agent: impl FnOnce(AgentSideConnection) -> A,
    make_client: impl FnOnce(ClientSideConnection) -> C,
) -> Pair {
    connect_with(
        ConnectionOptions::default(),
        ConnectionOptions::default(),
        make_agent,
        make_client,
    )
}

/// Like [`connect`], with options for each side.
pub fn connect_with<A: Agent, C: Client>(
    agent_options: ConnectionOptions,
    client_options: ConnectionOptions,
    make_agent: impl FnOnce(AgentSideConnection) -> A,
    make_client: impl FnOnce(ClientSideConnection) -> C,
) -> Pair {
    let (agent_end, client_end) = Transport::memory_pair();
    let (agent, agent_io) = AgentSideConnection::new(agent_end, agent_options, make_agent);
    let (client, client_io) = ClientSideConnection::new(client_end, client_options, make_client);
    Pair {
        client,
        agent,
        client_io: tokio::spawn(client_io),
        agent_io: tokio::spawn(agent_io),
    }
}

/// The far end of a connection, driven byte by byte by the test: writes exact
/// lines and reads back exactly what the connection wrote.
pub struct RawPeer {
    reader: Option<BufReader<BoxedReader>>,
    writer: Option<BoxedWriter>,
}

impl RawPeer {
    pub fn new(end: Transport) -> Self {
        let (reader, writer) = end.into_parts();
        RawPeer {
            reader: Some(BufReader::new(reader)),
            writer: Some(writer),
        }
    }

    /// Writes `line` followed by `\n`.
    pub async fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes()).await;
    }

    /// Writes raw bytes as they are (no newline added).
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        let writer = self.writer.as_mut().expect("writer still open");
        within("a write to the connection", async {
            writer.write_all(bytes).await.expect("write");
            writer.flush().await.expect("flush");
        })
        .await;
    }

    /// Reads the next line the connection wrote (without its `\n`); `None` at
    /// end of output.
    pub async fn next_line(&mut self) -> Option<String> {
        let reader = self.reader.as_mut().expect("reader still open");
        let mut buf = Vec::new();
        let n = within(
            "a line from the connection",
            reader.read_until(b'\n', &mut buf),
        )
        .await
        .expect("read");
        if n == 0 {
            return None;
        }
        assert_eq!(buf.pop(), Some(b'\n'), "every line ends with a newline");
        Some(String::from_utf8(buf).expect("the connection writes UTF-8"))
    }

    /// Reads the next line, which must exist.
    pub async fn recv(&mut self) -> String {
        self.next_line()
            .await
            .expect("the connection closed its output")
    }

    /// Reads the next line as JSON.
    pub async fn recv_json(&mut self) -> Value {
        let line = self.recv().await;
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends `line` and returns the next line written back.
    pub async fn call(&mut self, line: &str) -> String {
        self.send(line).await;
        self.recv().await
    }

    /// Closes our writing half: the connection reads end of input.
    pub fn close_write(&mut self) {
        self.writer = None;
    }

    /// Closes both halves.
    pub fn close(&mut self) {
        self.writer = None;
        self.reader = None;
    }
}

/// An agent whose client is a [`RawPeer`].
pub fn raw_agent<A: Agent>(
    options: ConnectionOptions,
    make_agent: impl FnOnce(AgentSideConnection) -> A,
) -> (AgentSideConnection, RawPeer, IoTask) {
    let (agent_end, peer_end) = Transport::memory_pair();
    let (conn, io) = AgentSideConnection::new(agent_end, options, make_agent);
    (conn, RawPeer::new(peer_end), tokio::spawn(io))
}

/// A client whose agent is a [`RawPeer`].
pub fn raw_client<C: Client>(
    options: ConnectionOptions,
    make_client: impl FnOnce(ClientSideConnection) -> C,
) -> (ClientSideConnection, RawPeer, IoTask) {
    let (client_end, peer_end) = Transport::memory_pair();
    let (conn, io) = ClientSideConnection::new(client_end, options, make_client);
    (conn, RawPeer::new(peer_end), tokio::spawn(io))
}

/// Asserts that `line` is one well-formed JSON-RPC 2.0 response object: exactly
/// the members `jsonrpc: "2.0"`, `id` (null, integer or string) and one of
/// `result` or `error` (with an integer `code`, a string `message` and maybe
/// `data`). Returns the parsed value.
pub fn assert_response_shape(line: &str) -> Value {
    let value: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    let obj = value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {line}"));
    assert_eq!(obj.get("jsonrpc"), Some(&Value::from("2.0")), "{line}");
    let id = obj.get("id").unwrap_or_else(|| panic!("no id: {line}"));
    assert!(
        id.is_null() || id.is_i64() || id.is_u64() || id.is_string(),
        "bad id: {line}"
    );
    assert!(
        obj.contains_key("result") != obj.contains_key("error"),
        "exactly one of result/error: {line}"
    );
    for key in obj.keys() {
        assert!(
            ["jsonrpc", "id", "result", "error"].contains(&key.as_str()),
            "stray member `{key}`: {line}"
        );
    }
    if let Some(err) = obj.get("error") {
        let err = err
            .as_object()
            .unwrap_or_else(|| panic!("error is not an object: {line}"));
        assert!(err.get("code").is_some_and(Value::is_i64), "{line}");
        assert!(err.get("message").is_some_and(Value::is_string), "{line}");
        for key in err.keys() {
            assert!(
                ["code", "message", "data"].contains(&key.as_str()),
                "stray error member `{key}`: {line}"
            );
        }
    }
    value
}

/// An agent that answers `initialize`, `logout` and `session/prompt` at once
/// and leaves everything else to the defaults.
pub struct Trivial;

impl Agent for Trivial {
    async fn initialize(
        &self,
        _: InitializeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<InitializeResponse, Error> {
        Ok(InitializeResponse::new(ProtocolVersion::LATEST))
    }
    async fn logout(
        &self,
        _: LogoutRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<LogoutResponse, Error> {
        Ok(LogoutResponse::new())
    }
    async fn prompt(
        &self,
        _: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

/// A client with every method left to its default body.
pub struct Bare;

impl Client for Bare {}

/// A `session/prompt` request for `session` with one text block.
pub fn prompt(session: &str, text: &str) -> PromptRequest {
    PromptRequest::new(SessionId::new(session), vec![ContentBlock::from(text)])
}

/// A `session/update` carrying an agent message chunk of `text`.
pub fn message(session: &SessionId, text: impl Into<String>) -> SessionNotification {
    SessionNotification::new(
        session.clone(),
        SessionUpdate::agent_message(ContentBlock::from(text.into().as_str())),
    )
}

/// The text of an agent message chunk.
pub fn message_text(n: &SessionNotification) -> Option<String> {
    match &n.update {
        SessionUpdate::AgentMessageChunk(chunk) => chunk.content.as_text().map(str::to_string),
        _ => None,
    }
}
