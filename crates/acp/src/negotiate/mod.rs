//! Serving and asking for protocol v1 and v2 on one transport (feature `v2`).
//!
//! A connection speaks one protocol version, chosen at `initialize`:
//!
//! - The client asks for the newest version it speaks ([`ClientRouter`] asks
//!   for 2, with v2's `initialize`; given a v1 fallback, it adds v1's
//!   `clientInfo` and `clientCapabilities` members, no file system and no
//!   terminal, which a v1 agent reads and a v2 agent ignores).
//! - The agent answers the newest version it speaks at or below the one asked
//!   for ([`AgentRouter`]): an agent with a v2 implementation answers 2 to a
//!   client asking for 2 or more; with a v1 implementation it answers 1 to a
//!   client asking for 1 (and, with no v2 implementation, to any client: v1's
//!   rule). An agent with only a v2 implementation refuses a client asking for
//!   1 (or 0) with -32022 "Unsupported protocol version", whose `data` is
//!   `{"requested": 1, "supported": [2]}`, and waits for another
//!   `initialize`. So does an agent asked for 0 when it speaks v1 and v2.
//! - A v1 client may ask for more than 1 (v1 lets a client ask for the newest
//!   version it knows, and be answered with the newest at or below it). So an
//!   agent with both implementations answers 1 to an `initialize` asking for
//!   2 or more that is a v1 client's: one that is not a valid v2
//!   `initialize`, has no `info` (or a `null` one), and is a valid v1
//!   `initialize` (`{"protocolVersion": 65535, "clientCapabilities": {}}`,
//!   say). Any other `initialize` asking for 2 or more is v2's: one with a
//!   broken `info` is a v2 client's mistake and gets v2's -32602 naming it.
//!   An agent with only a v2 implementation answers every `initialize` asking
//!   for 2 or more as v2 (a v1 client's gets -32602, `missing field `info``).
//! - The client learns the version from the answer: [`Negotiated::V1`] or
//!   [`Negotiated::V2`], each with that version's connection and `initialize`
//!   result. A client that cannot speak the answered version gets
//!   [`ConnectionError::UnsupportedVersion`](crate::ConnectionError::UnsupportedVersion)
//!   and the connection closes.
//!
//! The choice is made on the reader, when it reads the `initialize` request
//! (agent) or its result (client), so every later line is handled by the
//! chosen version: nothing is read under the wrong one. Each side builds only
//! the implementation it chose (the `make` closures run then).
//!
//! Before the choice, a message other than `initialize` chooses v1 when the
//! agent has a v1 implementation (v1's runtime serves a client that skips
//! `initialize`, and so the same agent behind a router still does); with v2
//! only, such a request is answered -32600 ("the first request must be
//! `initialize`"), and such a notification is dropped and reported
//! ([`Dropped`](crate::Dropped), and a warning in the log). A malformed
//! `initialize` (no `protocolVersion`) gets -32602 and the agent waits for
//! another. After it, a method of the *other* version (a v2
//! `auth/login` on a v1 connection, a v1 `fs/read_text_file` asked of a v2
//! client) is answered -32601 with `data` saying so:
//! `{"method":"auth/login","protocolVersion":1,"reason":"…"}`; such a
//! notification is dropped and reported. A JSON array (a JSON-RPC batch) is
//! answered with one -32600 under the `null` id on either version.
//!
//! When a client asks for more than the chosen version, the agent's handler
//! sees the `initialize` it would have got from a client of its own version:
//! `protocolVersion` is the chosen one (a v1 client's `initialize` asking
//! for more keeps its other members as sent), and a v2 `initialize` handed
//! to a v1 implementation is turned into v1's (`info` becomes `clientInfo`; the
//! capabilities map as the v1 ↔ v2 bridge maps them: a v2 client has no file
//! system or terminal, handles boolean config options, notices and
//! compaction, and keeps its elicitation and terminal-auth support).
//!
//! # Example: an agent of both versions
//!
//! (The README's, which `tests/it/v2_readme.rs` holds to this one.)
//!
//! ```no_run
//! use acp::RequestContext;
//! use acp::negotiate::AgentRouter;
//! use acp::schema::v2::*;
//!
//! struct EchoV2;
//!
//! impl acp::v2::Agent for EchoV2 {
//!     async fn prompt(&self, req: PromptRequest, cx: RequestContext<AgentSide>) -> Result<PromptResponse, Error> {
//!         // Insert the user message, answer with its id, and run the turn after the answer.
//!         let id = MessageId::new("user-1");
//!         let inserted = SessionUpdate::user_message(id.clone(), req.prompt.clone());
//!         cx.peer().session_update(UpdateSessionNotification::new(req.session_id.clone(), inserted)).await?;
//!         let turn = cx.clone();
//!         cx.after_response(async move {
//!             let send = |u: SessionUpdate| turn.peer().session_update(UpdateSessionNotification::new(req.session_id.clone(), u));
//!             let _ = send(SessionUpdate::running()).await;
//!             for block in req.prompt.clone() {
//!                 if turn.is_cancelled() {
//!                     break; // session/cancel or session/close
//!                 }
//!                 let _ = send(SessionUpdate::agent_message_chunk("reply-1", block)).await;
//!             }
//!             let stop = if turn.is_cancelled() { StopReason::Cancelled } else { StopReason::EndTurn };
//!             let _ = send(SessionUpdate::idle(stop)).await;
//!         });
//!         Ok(PromptResponse::new(id))
//!     }
//! }
//!
//! struct EchoV1; // implements `acp::Agent`, as before
//! impl acp::Agent for EchoV1 {}
//!
//! #[tokio::main]
//! async fn main() {
//!     // Each connection speaks the version its client asks for.
//!     let _ = AgentRouter::new().v1(|_| EchoV1).v2(|_| EchoV2).serve(acp::Transport::stdio()).await;
//!     // Or one v2 implementation for both (v1 clients through the bridge's
//!     // translation): AgentRouter::v2_with_v1_adapter(|_| EchoV2).
//! }
//! ```
//!
//! # Example: a client asking for v2
//!
//! ```no_run
//! use acp::negotiate::{ClientRouter, Negotiated};
//! use acp::schema::{Implementation, v2};
//!
//! struct MyV2Client; // handles session/update, permission requests, …
//! impl acp::v2::Client for MyV2Client {}
//! struct MyV1Client;
//! impl acp::Client for MyV1Client {}
//!
//! async fn run() -> Result<(), Box<dyn std::error::Error>> {
//!     let (_child, transport) = acp::AgentCommand::parse("my-agent --stdio")?.spawn_stdio()?;
//!     let (negotiating, io) = ClientRouter::new(|_| MyV2Client)
//!         .v1(|_| MyV1Client) // optional: without it, a v1 agent is an error
//!         .connect(transport, acp::ConnectionOptions::default());
//!     tokio::spawn(io);
//!     let hello = v2::InitializeRequest::new(Implementation::new("my-editor", "1.0.0"));
//!     match negotiating.initialize(hello).await? {
//!         Negotiated::V2 { connection, .. } => {
//!             let session = connection.new_session(v2::NewSessionRequest::new("/work")).await?.session_id;
//!             let ack = connection.prompt(v2::PromptRequest::new(session, vec!["hi".into()])).await?;
//!             println!("inserted as {}; the turn comes as updates, up to idle", ack.message_id);
//!         }
//!         Negotiated::V1 { .. } => { /* v1 calls, as before */ }
//!     }
//!     Ok(())
//! }
//! ```

mod agent;
mod client;

pub use agent::{AgentRouter, NoAgent, RoutedAgent};
pub use client::{ClientRouter, Negotiated, Negotiating, NoClient};

use acp_schema::{Error, ErrorCode, ProtocolVersion};

/// The other version that has `method`, when the negotiated one does not.
fn other_version_of(method: &str, negotiated: ProtocolVersion) -> Option<ProtocolVersion> {
    let in_v1 = acp_schema::method_info(method).is_some();
    let in_v2 = acp_schema::v2::method_info(method).is_some();
    match negotiated {
        ProtocolVersion::V1 if in_v2 && !in_v1 => Some(ProtocolVersion::V2),
        ProtocolVersion::V2 if in_v1 && !in_v2 => Some(ProtocolVersion::V1),
        _ => None,
    }
}

/// Says in a -32601 for `method` that it belongs to the other version.
pub(crate) fn explain_unknown(err: Error, method: &str, negotiated: ProtocolVersion) -> Error {
    if err.code != ErrorCode::METHOD_NOT_FOUND {
        return err;
    }
    match other_version_of(method, negotiated) {
        Some(other) => Error::method_not_found().data(serde_json::json!({
            "method": method,
            "protocolVersion": negotiated.get(),
            "reason": format!(
                "`{method}` is a method of protocol version {other}; this connection \
                 speaks version {negotiated}"
            ),
        })),
        None => err,
    }
}

/// A notification of the other version: reported as dropped (not silently
/// ignored like an unknown one).
pub(crate) fn explain_unknown_notification(
    err: Error,
    method: &str,
    negotiated: ProtocolVersion,
) -> Error {
    if err.code != ErrorCode::METHOD_NOT_FOUND {
        return err;
    }
    match other_version_of(method, negotiated) {
        Some(other) => Error::invalid_request().data(format!(
            "`{method}` is a notification of protocol version {other}; this connection \
             speaks version {negotiated}"
        )),
        None => err,
    }
}
