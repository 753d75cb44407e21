//! The Agent Client Protocol runtime that agents and clients build on.
//!
//! This crate turns a byte stream into an ACP connection: newline-delimited JSON
//! framing ([`codec`]), one JSON-RPC engine for both sides, the [`Agent`] and
//! [`Client`] traits, the [`Connection`] handle each side calls its peer with,
//! request contexts with cancellation ([`RequestContext`]), and transports:
//! stdio for agents, a child process for clients ([`AgentCommand::connect`]),
//! and an in-memory pair for tests ([`Transport::memory_pair`]). The wire types
//! come from [`acp_schema`], re-exported here as [`schema`].
//!
//! Each method is declared once, in `acp_schema`'s method tables; the traits,
//! their dispatch and the typed calls on [`Connection`] are generated from
//! them. A request can only be sent toward the side that handles it.
//!
//! It does not decide policy: what an agent does with a prompt, or whether a
//! client lets an agent read a file, is up to the trait implementations.
//!
//! With feature `v2`, the draft protocol v2 runs beside v1 on the same engine:
//! `v2` (its `Agent` and `Client` traits and connections), `negotiate`
//! (serving and asking for either version on one transport: `AgentRouter`,
//! `ClientRouter`), `bridge` (a client of one version in front of an agent of
//! the other: the mapping and what it loses) and `map` (the translations, one
//! file per protocol area; public are the stateless v1 → v2 ones, for a
//! program that works in v1's types and answers a v2 client, so that it
//! writes v2 as the bridge does). v1 is the same with the feature on or off.
//!
//! # Example
//! An agent and a client talking over an in-memory pair:
//! ```
//! use acp::{Agent, Client, ClientSideConnection, AgentSideConnection, ConnectionOptions};
//! use acp::{NotificationContext, RequestContext, Transport};
//! use acp::schema::*;
//!
//! struct Echo;
//!
//! impl Agent for Echo {
//!     async fn initialize(
//!         &self,
//!         _: InitializeRequest,
//!         _: RequestContext<AgentSide>,
//!     ) -> Result<InitializeResponse, Error> {
//!         Ok(InitializeResponse::new(ProtocolVersion::LATEST))
//!     }
//!     async fn prompt(
//!         &self,
//!         req: PromptRequest,
//!         cx: RequestContext<AgentSide>,
//!     ) -> Result<PromptResponse, Error> {
//!         for block in req.prompt {
//!             let update = SessionUpdate::agent_message(block);
//!             cx.peer().session_notification(SessionNotification::new(req.session_id.clone(), update)).await?;
//!         }
//!         Ok(PromptResponse::new(StopReason::EndTurn))
//!     }
//! }
//!
//! struct Printer;
//!
//! impl Client for Printer {
//!     async fn session_notification(
//!         &self,
//!         n: SessionNotification,
//!         _: NotificationContext<ClientSide>,
//!     ) -> Result<(), Error> {
//!         if let SessionUpdate::AgentMessageChunk(chunk) = n.update {
//!             println!("{}", chunk.content.as_text().unwrap_or_default());
//!         }
//!         Ok(())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (agent_end, client_end) = Transport::memory_pair();
//! let (_agent, agent_io) = AgentSideConnection::new(agent_end, ConnectionOptions::default(), |_| Echo);
//! tokio::spawn(agent_io);
//! let (client, client_io) = ClientSideConnection::new(client_end, ConnectionOptions::default(), |_| Printer);
//! tokio::spawn(client_io);
//!
//! client.initialize(InitializeRequest::new(ProtocolVersion::LATEST)).await?;
//! let reply = client
//!     .prompt(PromptRequest::new(SessionId::new("s1"), vec!["Hello".into()]))
//!     .await?;
//! assert_eq!(reply.stop_reason, StopReason::EndTurn);
//! # Ok(())
//! # }
//! ```
//!
#![deny(missing_docs)]

mod agent;
#[cfg(feature = "v2")]
pub mod bridge;
mod client;
pub mod codec;
mod connection;
mod engine;
mod error;
#[cfg(feature = "v2")]
pub mod map;
#[cfg(feature = "v2")]
pub mod negotiate;
pub mod process;
#[cfg(any(feature = "websocket", feature = "http", feature = "server"))]
pub mod remote;
pub mod tap;
pub mod transport;
#[cfg(feature = "v2")]
pub mod v2;

pub use acp_schema as schema;
pub use acp_schema::{AgentSide, ClientSide};
pub use agent::Agent;
pub use client::Client;
pub use connection::{
    AgentSideConnection, ClientSideConnection, Connection, NotificationContext, RequestContext,
};
pub use engine::{ConnectionOptions, Dropped, OnDropped};
pub use error::ConnectionError;
pub use process::{AgentChild, AgentCommand, AgentProcess};
pub use tap::{Direction, Tap, TapEvent};
pub use tokio_util::sync::CancellationToken;
pub use transport::Transport;

/// The I/O future of a connection: spawn or await it; it ends when the
/// connection closes, with the I/O error that closed it, if any.
pub type IoFuture = futures::future::BoxFuture<'static, Result<(), ConnectionError>>;
