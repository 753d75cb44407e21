//! The running agent and the v1 connection the session speaks to it:
//! [`AgentLink`].
//!
//! With protocol 1 (the default) it is the agent process with the
//! connection to it. With `--protocol 2` the session still speaks v1, to
//! crate `acp`'s v1 ↔ v2 bridge ([`acp::bridge`]) run in this process, and
//! the agent is asked for v2:
//!
//! ```text
//! session (v1) ⇄ bridge ⇄ ask-v2 ⇄ agent (v2, or v1)
//! ```
//!
//! The bridge asks an agent in its client's version and translates only
//! when the agent refuses that version, so a v1 `initialize` would get an
//! agent that speaks both versions in v1. The small `ask-v2` step in front
//! of the agent sends the agent the session's `initialize` as a v2 one
//! (v2's members, and v1's for a v1 agent to read, `protocolVersion` 2):
//!
//! - the agent answers 2: `ask-v2` refuses the bridge's v1 `initialize`
//!   (-32022) and answers the v2 one the bridge then sends with the agent's
//!   result; the bridge translates from there on;
//! - the agent answers 1 (a v1 agent): its answer goes to the bridge, which
//!   passes the connection on untouched; the session says so once;
//! - an error: passed on as it is.
//!
//! After that, `ask-v2` passes every byte on unread.
//!
//! What a session loses through the bridge is what the bridge loses (its
//! module docs list it): a v2 message replaced as a whole shows after its
//! earlier text (a clear is lost), a permission question's description is
//! not shown, and v2 agent-owned terminals show as text in their tool call.

use acp::schema::{ErrorCode, ProtocolVersion, v2};
use acp::{
    AgentChild, AgentCommand, AgentProcess, ClientSideConnection, ConnectionError, Transport,
};
use serde_json::Value;
use std::io;
use std::process::ExitStatus;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::task::JoinHandle;

/// How long [`AgentLink::shutdown`] waits for a bridged agent before each
/// signal.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// Why `ask-v2` refuses the bridge's v1 `initialize` (the `reason` of the
/// -32022's data): the agent answered the v2 one.
const REFUSED: &str = "the agent was asked for protocol v2";

/// A running agent and the session's v1 connection to it; dereferences to
/// the connection. Dropping it closes the connection and stops the agent's
/// process group.
pub(crate) enum AgentLink {
    /// Protocol 1: the connection is the agent's own.
    Direct(AgentProcess),
    /// `--protocol 2`: through the bridge.
    Bridged(Bridged),
}

/// The parts of a bridged link.
pub(crate) struct Bridged {
    conn: ClientSideConnection,
    /// The session connection's I/O task.
    io: Option<JoinHandle<Result<(), ConnectionError>>>,
    /// The bridge's task (with `ask-v2` in it).
    bridge: JoinHandle<()>,
    child: AgentChild,
}

impl std::ops::Deref for AgentLink {
    type Target = ClientSideConnection;

    fn deref(&self) -> &ClientSideConnection {
        self.connection()
    }
}

impl AgentLink {
    /// Starts `command` and connects the client `make_client` builds:
    /// directly with protocol 1, through the bridge with 2 (see the module
    /// docs). `on_v1` runs once when the agent, asked for 2, answers 1.
    pub fn start<C: acp::Client + 'static>(
        command: AgentCommand,
        protocol: u8,
        options: acp::ConnectionOptions,
        make_client: impl FnOnce(ClientSideConnection) -> C,
        on_v1: impl FnOnce() + Send + 'static,
    ) -> io::Result<AgentLink> {
        if protocol < 2 {
            return command.connect(options, make_client).map(AgentLink::Direct);
        }
        let (child, agent) = command.spawn_stdio()?;
        let (session_end, bridge_client) = Transport::memory_pair();
        let (bridge_agent, ask_end) = Transport::memory_pair();
        let bridge_options = options.clone();
        let bridge = tokio::spawn(async move {
            let ask = tokio::spawn(ask_v2(ask_end, agent, on_v1));
            let _ = acp::bridge::bridge(bridge_client, bridge_agent, bridge_options).await;
            let _ = ask.await;
        });
        let (conn, io) = ClientSideConnection::new(session_end, options, make_client);
        Ok(AgentLink::Bridged(Bridged {
            conn,
            io: Some(tokio::spawn(io)),
            bridge,
            child,
        }))
    }

    /// The connection to the agent (also reached through `Deref`).
    pub fn connection(&self) -> &ClientSideConnection {
        match self {
            AgentLink::Direct(p) => p.connection(),
            AgentLink::Bridged(b) => &b.conn,
        }
    }

    /// Waits for the agent to exit.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            AgentLink::Direct(p) => p.wait().await,
            AgentLink::Bridged(b) => b.child.wait().await,
        }
    }

    /// SIGKILL to the agent's process group now.
    pub fn kill(&mut self) -> io::Result<()> {
        match self {
            AgentLink::Direct(p) => p.kill(),
            AgentLink::Bridged(b) => b.child.kill(),
        }
    }

    /// The last lines the agent wrote to standard error.
    pub fn stderr_tail(&self) -> Vec<String> {
        match self {
            AgentLink::Direct(p) => p.stderr_tail(),
            AgentLink::Bridged(b) => b.child.stderr_tail(),
        }
    }

    /// Closes the connection, gives the agent a grace period to exit, then
    /// stops its group; returns its status.
    pub async fn shutdown(&mut self) -> io::Result<ExitStatus> {
        match self {
            AgentLink::Direct(p) => p.shutdown().await,
            AgentLink::Bridged(b) => {
                b.conn.close();
                if let Some(io) = b.io.take() {
                    let _ = io.await;
                }
                // The bridge closes the agent's input once the session's
                // connection is gone.
                let _ = tokio::time::timeout(KILL_GRACE, &mut b.bridge).await;
                match tokio::time::timeout(KILL_GRACE, b.child.wait()).await {
                    Ok(status) => status,
                    Err(_) => {
                        b.child.kill()?;
                        b.child.wait().await
                    }
                }
            }
        }
    }
}

impl Drop for Bridged {
    fn drop(&mut self) {
        // The child's own drop stops its group after the grace period.
        self.conn.close();
    }
}

/// One line of `reader` (without its end), `None` at the end; a line
/// longer than the connection's message limit is an error.
async fn read_line(
    reader: &mut BufReader<acp::transport::BoxedReader>,
) -> io::Result<Option<Vec<u8>>> {
    let limit = super::message_limit();
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
            return Err(io::Error::other(format!(
                "a line over the limit of {limit} bytes before `initialize` was answered"
            )));
        }
        while line.last().is_some_and(|b| b.is_ascii_whitespace()) {
            line.pop();
        }
        if !line.is_empty() {
            return Ok(Some(line));
        }
    }
}

async fn write_line(writer: &mut acp::transport::BoxedWriter, line: &[u8]) -> io::Result<()> {
    writer.write_all(line).await?;
    writer.write_all(b"\n").await?;
    writer.flush().await
}

/// The step in front of the agent that asks it for v2 (see the module
/// docs): `bridge` is the bridge's end, `agent` the agent's.
async fn ask_v2(bridge: Transport, agent: Transport, on_v1: impl FnOnce() + Send) {
    let (bridge_reader, mut bridge_writer) = bridge.into_parts();
    let (agent_reader, mut agent_writer) = agent.into_parts();
    let mut bridge_reader = BufReader::new(bridge_reader);
    let mut agent_reader = BufReader::new(agent_reader);
    let agreed = handshake(
        &mut bridge_reader,
        &mut bridge_writer,
        &mut agent_reader,
        &mut agent_writer,
        on_v1,
    )
    .await;
    if agreed.is_err() {
        // A side went away, or the agent sent a line too long to read:
        // both ends are closed (the session then reports the agent gone).
        return;
    }
    let up = async move {
        let _ = tokio::io::copy_buf(&mut bridge_reader, &mut agent_writer).await;
        let _ = agent_writer.shutdown().await;
        drop(agent_writer);
    };
    let down = async move {
        let _ = tokio::io::copy_buf(&mut agent_reader, &mut bridge_writer).await;
        let _ = bridge_writer.shutdown().await;
        drop(bridge_writer);
    };
    tokio::join!(up, down);
}

/// The `initialize` exchange of [`ask_v2`]; returns once the bridge and
/// the agent agree (or either went away: the copying then ends too).
async fn handshake(
    bridge_reader: &mut BufReader<acp::transport::BoxedReader>,
    bridge_writer: &mut acp::transport::BoxedWriter,
    agent_reader: &mut BufReader<acp::transport::BoxedReader>,
    agent_writer: &mut acp::transport::BoxedWriter,
    on_v1: impl FnOnce() + Send,
) -> io::Result<()> {
    // The bridge sends nothing before its `initialize` (the session's).
    let Some(line) = read_line(bridge_reader).await? else {
        return Ok(());
    };
    let message: Value = serde_json::from_slice(&line).unwrap_or_default();
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    if message.get("method").and_then(Value::as_str) != Some("initialize") {
        return write_line(agent_writer, &line).await;
    }
    let params = message.get("params").cloned().unwrap_or_default();
    let asked = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": initialize_for_either(&params),
    });
    write_line(agent_writer, &serde_json::to_vec(&asked)?).await?;
    // The agent's answer; what it sends before it goes to the bridge.
    let (answer, reply) = loop {
        let Some(answer) = read_line(agent_reader).await? else {
            return Ok(());
        };
        let reply: Value = serde_json::from_slice(&answer).unwrap_or_default();
        if reply.get("method").is_none() && reply.get("id") == Some(&id) {
            break (answer, reply);
        }
        write_line(bridge_writer, &answer).await?;
    };
    let version = reply
        .pointer("/result/protocolVersion")
        .and_then(Value::as_u64);
    if version != Some(2) {
        if version.is_some() {
            on_v1();
        }
        return write_line(bridge_writer, &answer).await;
    }
    // A v2 agent: the bridge is told v1 is refused, and sent the result
    // when it asks in v2.
    let refusal = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0,
            "message": "Unsupported protocol version",
            "data": {"requested": 1, "supported": [2], "reason": REFUSED},
        },
    });
    write_line(bridge_writer, &serde_json::to_vec(&refusal)?).await?;
    loop {
        let Some(line) = read_line(bridge_reader).await? else {
            return Ok(());
        };
        let message: Value = serde_json::from_slice(&line).unwrap_or_default();
        if message.get("method").and_then(Value::as_str) == Some("initialize") {
            let mut answered = reply.clone();
            answered["id"] = message.get("id").cloned().unwrap_or(Value::Null);
            return write_line(bridge_writer, &serde_json::to_vec(&answered)?).await;
        }
        write_line(agent_writer, &line).await?;
    }
}

/// The session's v1 `initialize` params as a v2 `initialize` that keeps v1's
/// members (`clientInfo`, `clientCapabilities`) for a v1 agent to read.
fn initialize_for_either(v1_params: &Value) -> Value {
    let v1: acp::schema::InitializeRequest = serde_json::from_value(v1_params.clone())
        .unwrap_or_else(|_| acp::schema::InitializeRequest::new(ProtocolVersion::V1));
    let info = v1
        .client_info
        .clone()
        .unwrap_or_else(|| acp::schema::Implementation::new("acp", env!("CARGO_PKG_VERSION")));
    let mut caps = v2::ClientCapabilities::new();
    if v1.client_capabilities.auth.terminal {
        caps = caps
            .auth(v2::ClientAuthCapabilities::new().terminal(v2::TerminalAuthCapabilities::new()));
    }
    caps.elicitation = v1.client_capabilities.elicitation.clone();
    let request = v2::InitializeRequest::new(info).capabilities(caps);
    let mut out = serde_json::to_value(request).unwrap_or_default();
    if let (Some(out), Some(v1)) = (out.as_object_mut(), v1_params.as_object()) {
        for key in ["clientInfo", "clientCapabilities"] {
            if let Some(value) = v1.get(key) {
                out.insert(key.to_owned(), value.clone());
            }
        }
        out.insert("protocolVersion".to_owned(), Value::from(2));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// `ask_v2` between a fake bridge and a fake agent: returns the bridge's
    /// and the agent's ends, and whether `on_v1` ran.
    fn started() -> (
        BufReader<acp::transport::BoxedReader>,
        acp::transport::BoxedWriter,
        BufReader<acp::transport::BoxedReader>,
        acp::transport::BoxedWriter,
        Arc<AtomicBool>,
    ) {
        let (bridge, ask_bridge) = Transport::memory_pair();
        let (ask_agent, agent) = Transport::memory_pair();
        let v1 = Arc::new(AtomicBool::new(false));
        let said = v1.clone();
        tokio::spawn(ask_v2(ask_bridge, ask_agent, move || {
            said.store(true, Ordering::SeqCst)
        }));
        let (br, bw) = bridge.into_parts();
        let (ar, aw) = agent.into_parts();
        (BufReader::new(br), bw, BufReader::new(ar), aw, v1)
    }

    async fn line(reader: &mut BufReader<acp::transport::BoxedReader>) -> String {
        let bytes = read_line(reader).await.unwrap().expect("a line");
        String::from_utf8(bytes).unwrap()
    }

    const V1_INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"acp","version":"0.1.0"}}}"#;

    /// What the agent is asked: v2's members, then v1's for a v1 agent.
    const ASKED: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"acp","version":"0.1.0"},"capabilities":{},"clientInfo":{"name":"acp","version":"0.1.0"},"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":false}}}"#;

    #[tokio::test]
    async fn a_v2_agent_is_asked_in_v2_and_the_bridge_told_to_translate() {
        let (mut br, mut bw, mut ar, mut aw, v1) = started();
        write_line(&mut bw, V1_INIT.as_bytes()).await.unwrap();
        assert_eq!(line(&mut ar).await, ASKED);
        let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{"session":{}}}}"#;
        write_line(&mut aw, answer.as_bytes()).await.unwrap();
        assert_eq!(
            line(&mut br).await,
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":1,"supported":[2],"reason":"the agent was asked for protocol v2"}}}"#
        );
        // The bridge's own v2 initialize is answered with the agent's result,
        // under its id; the agent is not asked again.
        let own = r#"{"jsonrpc":"2.0","id":"acp-bridge-initialize","method":"initialize","params":{"protocolVersion":2,"info":{"name":"acp","version":"0.1.0"}}}"#;
        write_line(&mut bw, own.as_bytes()).await.unwrap();
        assert_eq!(
            line(&mut br).await,
            r#"{"jsonrpc":"2.0","id":"acp-bridge-initialize","result":{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{"session":{}}}}"#
        );
        // From there on, bytes pass unread, both ways.
        write_line(&mut bw, b"{\"next\":1}").await.unwrap();
        assert_eq!(line(&mut ar).await, r#"{"next":1}"#);
        write_line(&mut aw, b"not json").await.unwrap();
        assert_eq!(line(&mut br).await, "not json");
        assert!(!v1.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn a_v1_agents_answer_goes_to_the_bridge_and_is_noted() {
        let (mut br, mut bw, mut ar, mut aw, v1) = started();
        write_line(&mut bw, V1_INIT.as_bytes()).await.unwrap();
        assert_eq!(line(&mut ar).await, ASKED);
        // What the agent sends before its answer is passed on first.
        let log = r#"{"jsonrpc":"2.0","method":"_log","params":{}}"#;
        let answer =
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}"#;
        write_line(&mut aw, log.as_bytes()).await.unwrap();
        write_line(&mut aw, answer.as_bytes()).await.unwrap();
        assert_eq!(line(&mut br).await, log);
        assert_eq!(line(&mut br).await, answer);
        assert!(v1.load(Ordering::SeqCst));
        write_line(&mut bw, b"{\"next\":1}").await.unwrap();
        assert_eq!(line(&mut ar).await, r#"{"next":1}"#);
    }

    #[tokio::test]
    async fn an_error_answer_is_passed_on_as_it_is() {
        let (mut br, mut bw, mut ar, mut aw, v1) = started();
        write_line(&mut bw, V1_INIT.as_bytes()).await.unwrap();
        assert_eq!(line(&mut ar).await, ASKED);
        let answer = r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"no"}}"#;
        write_line(&mut aw, answer.as_bytes()).await.unwrap();
        assert_eq!(line(&mut br).await, answer);
        assert!(!v1.load(Ordering::SeqCst));
    }
}
