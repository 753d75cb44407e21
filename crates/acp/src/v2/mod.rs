//! Protocol v2 (a draft; feature `v2`): the v2 [`Agent`] and [`Client`]
//! traits, and the connections that speak v2.
//!
//! Everything is generated from `acp_schema::v2`'s method tables, as v1's
//! traits are from v1's, by the same expansion; the engine underneath is the
//! same one, so v2 connections have v1's guarantees, word for word (framing,
//! ordering, backpressure and bounded memory, errors, cancellation and close:
//! see the crate's README and `src/engine/mod.rs`). What differs:
//!
//! - **Which methods.** A [`Connection<AgentSide>`](crate::Connection) of this
//!   module's side types (`acp_schema::v2::AgentSide`) sends and handles v2
//!   methods only: a v2 request cannot be sent on a v1 connection or the
//!   reverse (the request's type names its side). A method of the other
//!   version arriving on a negotiated connection is answered -32601 with the
//!   reason in `data` (see [`crate::negotiate`]).
//! - **The prompt.** `session/prompt` only acknowledges the prompt (with the
//!   user message's id); the work it starts goes on after the response and
//!   ends with an idle `state_update`. So the turn of [`Agent::prompt`] is the
//!   handler *and* the work it registers with
//!   [`RequestContext::after_response`](crate::RequestContext::after_response)
//!   while it runs: the context's cancellation fires, throughout, when the
//!   client sends `session/cancel` for the session or closes it with
//!   `session/close`, and the agent then ends the work with
//!   `idle`/`cancelled`. Everything the handler sends before returning
//!   precedes the acknowledgement; what its `after_response` work sends
//!   follows it, in order.
//! - **`initialize`.** A v2 agent is always served behind the version check of
//!   [`crate::negotiate::AgentRouter`] ([`AgentSideConnection::new`] puts one
//!   in front): a client asking for version 1 (or 0) gets -32022 with the
//!   versions the agent speaks, and its handler never runs. Request ids must
//!   be strings or integers (`null` is refused with -32600).
//! - **No batches.** A JSON array is answered with one -32600 under the
//!   `null` id, as on v1; its entries are not run.

mod agent;
mod client;

pub use agent::Agent;
pub(crate) use agent::AgentHandler;
pub use client::Client;
pub(crate) use client::ClientHandler;

use crate::connection::Connection;

/// The agent's end of a v2 connection: calls the client with v2 methods.
pub type AgentSideConnection = Connection<acp_schema::v2::AgentSide>;

/// The client's end of a v2 connection: calls the agent with v2 methods.
pub type ClientSideConnection = Connection<acp_schema::v2::ClientSide>;
