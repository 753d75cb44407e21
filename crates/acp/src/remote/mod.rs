//! ACP over the network: the two profiles of the RFD "Streamable HTTP &
//! WebSocket transport", on one `/acp` endpoint.
//!
//! - **WebSocket** (`ws://`, `wss://`): `GET /acp` with `Upgrade: websocket`;
//!   every JSON-RPC message is one text frame, in both directions.
//! - **Streamable HTTP** (`http://`, `https://`): the client POSTs each
//!   message. `initialize` is answered `200` with the response as JSON and an
//!   `Acp-Connection-Id` header; everything else is answered `202` and its
//!   reply arrives on a long-lived SSE stream (`GET` with `Accept:
//!   text/event-stream`): one for the connection, one per session (the
//!   `Acp-Session-Id` header). `DELETE` ends the connection.
//!
//! Both sides work on the same byte streams as stdio: [`connect`] returns a
//! [`Transport`](crate::Transport) for a
//! [`ClientSideConnection`](crate::ClientSideConnection), and the
//! [`server`] (feature `server`) hands each network connection to an agent of
//! its own, an in-process [`Agent`](crate::Agent) or a child process
//! speaking stdio (what `acp serve` does). The engine does not know the
//! difference.
//!
//! Cargo features: `websocket` and `http` are the client sides, `server` the
//! server; none is on by default, so a stdio agent builds none of it.
//!
//! # Where this follows the official TypeScript SDK rather than the RFD
//! The RFD is a draft; the SDK (`@agentclientprotocol/sdk` 2.4.0) is what
//! clients and servers run, so where the two disagree this module does what
//! the SDK does:
//! - HTTP/1.1 is accepted (the RFD requires HTTP/2; the SDK's Node adapter
//!   and its `fetch` client speak HTTP/1.1). The server speaks both, the
//!   client HTTP/1.1.
//! - A JSON array (a batch) POSTed is answered `400` with a JSON-RPC -32600
//!   error (the RFD says `501`).
//! - A GET for a session stream the server has not seen yet opens it (the
//!   RFD says `404`): the SDK client opens a session's stream as soon as it
//!   learns the session id, which can be before the agent said anything on it.
//! - A second GET for a stream that already has a reader is refused with
//!   `409`.
//! - The response to `session/load` goes to the connection's stream, as the
//!   SDK does, and a request whose params name a session needs the
//!   `Acp-Session-Id` header even when its method is not session-scoped.
//! - `DELETE` is answered `202`.
//!
//! Not done: `Last-Event-ID` resumption and replay (deferred to v2 by the
//! RFD), reconnection (a dropped connection is an error; the caller
//! reconnects and uses `session/load`).

#[cfg(any(feature = "websocket", feature = "http"))]
mod client;
// Each feature uses a part of it.
#[cfg_attr(
    not(all(feature = "websocket", feature = "http", feature = "server")),
    allow(dead_code)
)]
mod message;
#[cfg(feature = "server")]
pub mod server;
pub mod tls;

#[cfg(any(feature = "websocket", feature = "http"))]
pub use client::{ClientOptions, connect, is_url};

/// The HTTP header naming the connection (returned by `initialize`).
pub const HEADER_CONNECTION_ID: &str = "acp-connection-id";

/// The HTTP header naming the session a request or stream belongs to.
pub const HEADER_SESSION_ID: &str = "acp-session-id";

/// The endpoint's path.
pub const ENDPOINT_PATH: &str = "/acp";

/// The default limit on one message, in bytes (as the engine's).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = crate::codec::DEFAULT_MAX_MESSAGE_SIZE;

/// Replaces line breaks in a message by spaces. A JSON text may have them
/// only as whitespace between tokens (inside strings they must be escaped),
/// so the message means the same and fits on one line of the engine's
/// newline-delimited stream.
pub(crate) fn one_line(mut text: Vec<u8>) -> Vec<u8> {
    for byte in &mut text {
        if *byte == b'\n' || *byte == b'\r' {
            *byte = b' ';
        }
    }
    text
}
