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
//! - A second GET for a stream with `Last-Event-ID` takes it over (see
//!   below), and an `Acp-Connection-Id` the server closed lately for a
//!   reason of its own (the agent exited, the keep time ran out, a limit) is
//!   `410 Gone` with the reason as the body; an unknown one stays `404`.
//!
//! # Surviving the network: keep, resume, reconnect
//! A server with [`keep_sessions`](server::ServerOptions::keep_sessions)
//! (default 5 minutes) keeps a connection, agent and all, when its client
//! goes without closing it (a broken socket, a WebSocket that went quiet or
//! stopped reading, an HTTP client with no stream open). The agent does not
//! notice: what it says waits for the client, up to
//! [`max_buffered_bytes`](server::ServerOptions::max_buffered_bytes)
//! (past it the connection closes, and says why to a client that comes
//! back); if nobody resumes the connection within the keep time, it closes
//! and the agent goes. Every message to the client is numbered per stream,
//! from 1, and what was sent lately is kept
//! ([`max_replay_bytes`](server::ServerOptions::max_replay_bytes)) to be sent
//! again, so a client that comes back gets everything after the last message
//! it had, once, in order. Zero turns all of this off (a connection ends
//! with its client, as before).
//!
//! - **Streamable HTTP**, as the RFD's follow-up "Durable & Resumable
//!   HTTP/WS Transport" proposes: each SSE event carries its number as `id`;
//!   a GET with `Last-Event-ID: n` (and the connection's, and the session's,
//!   ids) goes on after event `n`. The `initialize` answer says the server
//!   keeps connections with `Acp-Resumable: <seconds>`.
//! - **WebSocket**, an extension of ours: the upgrade's answer carries
//!   `Acp-Connection-Id` and `Acp-Resumable: <seconds>`; both sides count the
//!   text frames they send. A resume is a new upgrade with `Acp-Connection-Id`
//!   and `Last-Event-ID: n`, the number of frames the client got; the server
//!   sends frames `n+1`… again and answers `101` with `Acp-Received: m`, the
//!   number of the client's frames it got, and the client sends its frames
//!   `m+1`… again. When the server drops a socket but keeps the connection
//!   it closes it with code `4000` (come back).
//! - Refusals, distinguishable: `404` (the server does not know the
//!   connection: it restarted, or forgot it), `410` (it closed it; the body
//!   says why), `409` (it no longer has what the client lacks, or the
//!   number is past what it sent), `401` (a resume needs the token the
//!   connection needs; anyone with the token and the id may resume it).
//! - **Two clients resuming one connection**: the later one takes over (so
//!   that a client whose old socket is half-open is not locked out). The
//!   socket it replaces is closed with code `4409`; a stream it replaces
//!   ends with the SSE event `acp-taken-over` (an event without data, which
//!   SSE clients do not dispatch). A client told so must not resume again.
//! - **Copies**: what a client sends again after a break (a POST whose
//!   answer was lost, marked `Acp-Resent: 1`) is dropped by its JSON-RPC id
//!   when the agent has it already: a request in flight or answered lately,
//!   an answer to a request already answered.
//!
//! Our client resumes when asked ([`ClientOptions::reconnect`]) and the
//! server says it keeps connections: it reconnects with bounded backoff
//! ([`Reconnect`]), tells a UI what happens ([`ClientOptions::on_event`],
//! [`LinkEvent`]), and the engine above sees one unbroken transport. It also
//! notices a link that went silent (a network gone without a word, which
//! TCP takes many minutes to notice): it pings a WebSocket server, counts an
//! HTTP server's keep-alives, and resumes after three periods of silence
//! ([`Reconnect::ping_every`]). When it
//! gives up, the engine's I/O error carries a [`LinkLost`] saying why
//! ([`LinkLost::Gone`]: the server no longer has the connection; the agent's
//! session may still be had with `session/load`). A server that shuts down
//! says so (WebSocket close `1001`) and is not resumed.
//!
//! # For operators
//! With the token (or, without one, from loopback), `GET /connections`
//! lists the connections (id, profile, peer, agent, age, state `attached` or
//! `detached`, messages each way, bytes held, watchers), and
//! `GET /connections/{id}/watch[?from=start]` streams a connection's
//! traffic both ways, read-only, in the format of `acp record` (what `acp
//! trace` reads), from now or from the oldest message kept
//! ([`watch_history_bytes`](server::ServerOptions::watch_history_bytes)).
//! `/healthz` says only that the server is up and how many connections it
//! has. With feature `http`, [`list_connections`] and [`watch`] are their
//! client side.
//!
//! Limits: the buffers are in memory: a server that restarts has no
//! connection to resume (`404`), and a client resumes only what the server
//! still holds. A detached connection keeps its place in
//! [`max_connections`](server::ServerOptions::max_connections). An SSE stream
//! whose client vanished without a word is noticed when the server next
//! writes to it (a keep-alive every 15 s at most), so its keep time starts
//! that much later.

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
pub use client::{
    ClientOptions, LinkEvent, LinkEventHandler, LinkLost, Reconnect, connect, is_url,
};
#[cfg(feature = "http")]
pub use client::{ConnectionSummary, Watch, list_connections, watch};

/// The HTTP header naming the connection (returned by `initialize`).
pub const HEADER_CONNECTION_ID: &str = "acp-connection-id";

/// The HTTP header naming the session a request or stream belongs to.
pub const HEADER_SESSION_ID: &str = "acp-session-id";

/// The header of a resume: the number of the last message the client has
/// of the stream it resumes (the SSE standard's; our WebSocket resume uses
/// it too).
pub const HEADER_LAST_EVENT_ID: &str = "last-event-id";

/// Our extension: the server keeps connections for a resume, for this many
/// seconds after their client goes (on the WebSocket upgrade's answer and
/// the `initialize` answer over HTTP).
pub const HEADER_RESUMABLE: &str = "acp-resumable";

/// Our extension: on the answer to a WebSocket resume, how many of the
/// client's messages the server has; the client sends the rest again.
pub const HEADER_RECEIVED: &str = "acp-received";

/// Our extension: on a POST the client sends again after a broken
/// connection, not knowing whether the server had it (`1`).
pub const HEADER_RESENT: &str = "acp-resent";

/// Our extension: the WebSocket close code of a socket the server closes
/// while it keeps the connection (the client went quiet, or stopped
/// reading): the client may resume it.
pub const CLOSE_RESUMABLE: u16 = 4000;

/// Our extension: the WebSocket close code of a socket whose connection
/// another client resumed. The client it closes must not resume again.
pub const CLOSE_TAKEN_OVER: u16 = 4409;

/// Our extension: the SSE event type (an event without data, which SSE
/// clients do not dispatch) that ends a stream another client resumed.
pub const SSE_EVENT_TAKEN_OVER: &str = "acp-taken-over";

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
