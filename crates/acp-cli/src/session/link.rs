//! The running agent and the v1 connection the session speaks to it:
//! [`AgentLink`].
//!
//! With protocol 1 (the default) it is the agent process with the
//! connection to it. With `--protocol 2` the session still speaks v1, to
//! crate `acp`'s v1 ↔ v2 bridge ([`acp::bridge`]) run in this process,
//! which asks the agent for v2 ([`acp::bridge::BridgeOptions::prefer_v2`]):
//!
//! ```text
//! session (v1) ⇄ bridge ⇄ agent (v2, or v1)
//! ```
//!
//! - the agent answers 2 (even one that speaks v1 too): the bridge
//!   translates from there on;
//! - the agent answers 1 (a v1 agent, which reads the session's v1
//!   capabilities in the v2 `initialize`): the bridge passes the connection
//!   on untouched; the session says so once;
//! - an error: passed on as it is.
//!
//! What a session loses through the bridge is what the bridge loses (its
//! module docs list it): a v2 message replaced as a whole shows after its
//! earlier text (a clear is lost), a permission question's description is
//! not shown, and v2 agent-owned terminals show as text in their tool call.

use acp::bridge::BridgeOptions;
use acp::schema::ProtocolVersion;
use acp::{
    AgentChild, AgentCommand, AgentProcess, ClientSideConnection, ConnectionError, Transport,
};
use std::io;
use std::process::ExitStatus;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How long [`AgentLink::shutdown`] waits for a bridged agent before each
/// signal.
const KILL_GRACE: Duration = Duration::from_secs(2);

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
    /// The bridge's task.
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
        let bridge_options = BridgeOptions::new(options.clone())
            .prefer_v2()
            .on_route(|route| {
                if route.agent != ProtocolVersion::V2 {
                    on_v1();
                }
            });
        let bridge = tokio::spawn(async move {
            let _ = acp::bridge::bridge_with(bridge_client, agent, bridge_options).await;
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
