//! The client side of v2: the v2 [`Client`] trait, its dispatch, and the
//! typed calls a v2 agent makes to it, expanded from `acp_schema::v2`'s
//! client table by the expansion v1 uses.

use super::{AgentSideConnection, ClientSideConnection};
use crate::IoFuture;
use crate::agent::ext_params;
use crate::connection::{Connection, NotificationContext, RequestContext};
use crate::engine::{ConnectionOptions, Engine, Handler, HandlerFuture, RequestState};
use crate::engine::{declined, logged, object, respond};
use crate::error::ConnectionError;
use crate::transport::Transport;
use acp_schema::v2::*;
use acp_schema::{ParamsError, decode_params};
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use std::future::Future;
use std::sync::Arc;

/// Expands v2's client table with v2's docs (see `crate::client`).
macro_rules! v2_client_side {
    ($($table:tt)*) => {
        crate::client::client_side_with_docs! {
            docs {
                /// What a v2 client does when the agent calls it.
                ///
                /// Every method has a default body: requests answer "method not
                /// found" (-32601) and notifications are ignored. Requests run
                /// concurrently; notifications (`session/update`) are handled one
                /// at a time, in arrival order, and a request from the agent
                /// starts only after the notifications that arrived before it
                /// were handled. A v2 client has no `fs/*` or `terminal/*`
                /// methods: the agent reads, writes and runs commands itself, and
                /// shows terminals as `terminal_update`s.
                ///
                /// A v2 turn ends with an idle `state_update`, not with the
                /// `session/prompt` response (which only acknowledges the
                /// prompt); after `session/cancel`, the agent still sends it, with
                /// the stop reason `cancelled`.
            }
            $($table)*
        }
    };
}

acp_schema::v2_client_methods!(v2_client_side);

impl ClientSideConnection {
    /// Connects a v2 client to an agent over `transport`. Its `initialize`
    /// asks for version 2 only; to fall back on v1 with an agent that does not
    /// speak v2, see [`crate::negotiate::ClientRouter`].
    ///
    /// `make_client` receives a clone of the connection. Returns the
    /// connection and the I/O future, which must be spawned or awaited.
    pub fn new<C: Client>(
        transport: Transport,
        options: ConnectionOptions,
        make_client: impl FnOnce(ClientSideConnection) -> C,
    ) -> (ClientSideConnection, IoFuture) {
        let (engine, unstarted) = Engine::new(options);
        let conn = Connection::from_engine(engine);
        let handler = ClientHandler::new(make_client(conn.clone()), conn.clone());
        let io = unstarted.run(transport, Arc::new(handler));
        (conn, io)
    }
}

/// The v2 client's side of a connection: decodes v2 methods and runs the
/// [`Client`]'s handlers.
pub(crate) struct ClientHandler<C> {
    client: Arc<C>,
    conn: ClientSideConnection,
}

impl<C> ClientHandler<C> {
    /// The handler of `client` on `conn`.
    pub(crate) fn new(client: C, conn: ClientSideConnection) -> Self {
        ClientHandler {
            client: Arc::new(client),
            conn,
        }
    }
}
