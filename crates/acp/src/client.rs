//! The client side: the [`Client`] trait an editor implements, how it is
//! connected, and the typed calls an agent makes to it.
//!
//! All three are generated from the client's method table in `acp_schema`
//! ([`acp_schema::CLIENT_METHODS`]), so each method is declared once there.

use crate::IoFuture;
use crate::agent::ext_params;
use crate::connection::{
    AgentSideConnection, ClientSideConnection, Connection, NotificationContext, RequestContext,
};
use crate::engine::{ConnectionOptions, Engine, Handler, HandlerFuture, RequestState};
use crate::engine::{declined, logged, object, respond};
use crate::error::ConnectionError;
use crate::transport::Transport;
use acp_schema::*;
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use std::future::Future;
use std::sync::Arc;

/// Expands the client's method table into the [`Client`] trait, the agent's
/// typed calls and the client's dispatch.
macro_rules! client_side {
    ($($table:tt)*) => {
        client_side_with_docs! {
            docs {
                /// What a client does when the agent calls it.
                ///
                /// Every method has a default body: requests answer "method not found"
                /// (-32601) and notifications are ignored. Each handler gets the
                /// request and its [`RequestContext`] (the connection, the request's
                /// cancellation, `after_response`). Requests run concurrently;
                /// notifications (`session/update`) are handled one at a time, in
                /// arrival order, and a request from the agent starts only after the
                /// notifications that arrived before it were handled.
            }
            $($table)*
        }
    };
}

/// [`client_side!`] with the docs of the trait given (v2 expands it too).
macro_rules! client_side_with_docs {
    (
        docs { $(#[$cdoc:meta])* }
        $(#[$tdoc:meta])*
        table $table:ident handled_by $role:ident $side:ident;
        $(#[$rdoc:meta])*
        requests $req:ident;
        $(#[$sdoc:meta])*
        responses $resp:ident {
            $( $(#[$vdoc:meta])* $variant:ident $fname:ident = $method:literal : $params:ident => $response:ident, )*
        }
        $(#[$ndoc:meta])*
        notifications $notif:ident {
            $( $(#[$nvdoc:meta])* $nvariant:ident $nfname:ident = $nmethod:literal : $nparams:ident, )*
        }
    ) => {
        $(#[$cdoc])*
        pub trait Client: Send + Sync + 'static {
            $(
                $(#[$vdoc])*
                fn $fname(
                    &self,
                    args: $params,
                    cx: RequestContext<ClientSide>,
                ) -> impl Future<Output = Result<$response, Error>> + Send {
                    let _ = (args, cx);
                    async { Err(Error::method_not_found()) }
                }
            )*
            $(
                $(#[$nvdoc])*
                fn $nfname(
                    &self,
                    args: $nparams,
                    cx: NotificationContext<ClientSide>,
                ) -> impl Future<Output = Result<(), Error>> + Send {
                    let _ = (args, cx);
                    async { Ok(()) }
                }
            )*
            /// An `_`-prefixed extension request from the agent.
            fn ext_method(
                &self,
                args: ExtRequest,
                cx: RequestContext<ClientSide>,
            ) -> impl Future<Output = Result<ExtResponse, Error>> + Send {
                let _ = (args, cx);
                async { Err(Error::method_not_found()) }
            }
            /// An `_`-prefixed extension notification from the agent.
            fn ext_notification(
                &self,
                args: ExtNotification,
                cx: NotificationContext<ClientSide>,
            ) -> impl Future<Output = Result<(), Error>> + Send {
                let _ = (args, cx);
                async { Ok(()) }
            }
        }

        impl AgentSideConnection {
            $(
                $(#[$vdoc])*
                pub fn $fname(
                    &self,
                    request: $params,
                ) -> impl Future<Output = Result<$response, ConnectionError>> + Send + '_ {
                    self.request(request)
                }
            )*
            $(
                $(#[$nvdoc])*
                pub async fn $nfname(&self, notification: $nparams) -> Result<(), ConnectionError> {
                    self.notify(notification).await
                }
            )*
        }

        impl<C: Client> Handler for ClientHandler<C> {
            fn prepare_request<'de, D: serde::Deserializer<'de>>(
                &self,
                method: &str,
                params: D,
                request: &Arc<RequestState>,
            ) -> Result<HandlerFuture, D::Error> {
                let client = self.client.clone();
                let cx = RequestContext::new(self.conn.clone(), request.clone());
                match method {
                    $( $method => {
                        let args: $params = object(params)?;
                        Ok(respond(async move { client.$fname(args, cx).await }))
                    } )*
                    m if m.starts_with('_') => {
                        let raw: Box<RawValue> = serde::Deserialize::deserialize(params)?;
                        let args = ExtRequest::from_raw(m, raw);
                        Ok(Box::pin(async move { Ok(client.ext_method(args, cx).await?.0) }))
                    }
                    _ => Err(declined()),
                }
            }

            fn prepare_notification<'de, D: serde::Deserializer<'de>>(
                &self,
                method: &str,
                params: D,
            ) -> Result<BoxFuture<'static, ()>, D::Error> {
                let client = self.client.clone();
                let cx = NotificationContext::new(self.conn.clone());
                match method {
                    $( $nmethod => {
                        let args: $nparams = object(params)?;
                        Ok(logged!(client.$nfname(args, cx)))
                    } )*
                    m if m.starts_with('_') => {
                        let raw: Box<RawValue> = serde::Deserialize::deserialize(params)?;
                        let args = ExtNotification::from_raw(m, raw);
                        Ok(logged!(client.ext_notification(args, cx)))
                    }
                    _ => Err(declined()),
                }
            }

            fn request(
                &self,
                method: &str,
                params: Option<&RawValue>,
                request: &Arc<RequestState>,
            ) -> Result<HandlerFuture, Error> {
                let client = self.client.clone();
                let cx = RequestContext::new(self.conn.clone(), request.clone());
                match method {
                    $( $method => {
                        let args: $params = decode_params(params)?;
                        Ok(respond(async move { client.$fname(args, cx).await }))
                    } )*
                    m if m.starts_with('_') => {
                        let args = ExtRequest::from_raw(m, ext_params(params));
                        Ok(Box::pin(async move { Ok(client.ext_method(args, cx).await?.0) }))
                    }
                    m => Err(ParamsError::UnknownMethod(m.to_owned()).into()),
                }
            }

            fn notification(
                &self,
                method: &str,
                params: Option<&RawValue>,
            ) -> Result<BoxFuture<'static, ()>, Error> {
                let client = self.client.clone();
                let cx = NotificationContext::new(self.conn.clone());
                match method {
                    $( $nmethod => {
                        let args: $nparams = decode_params(params)?;
                        Ok(logged!(client.$nfname(args, cx)))
                    } )*
                    m if m.starts_with('_') => {
                        let args = ExtNotification::from_raw(m, ext_params(params));
                        Ok(logged!(client.ext_notification(args, cx)))
                    }
                    m => Err(ParamsError::UnknownMethod(m.to_owned()).into()),
                }
            }
        }
    };
}

#[cfg(feature = "v2")]
pub(crate) use client_side_with_docs;

acp_schema::client_methods!(client_side);

impl ClientSideConnection {
    /// Connects a client to an agent over `transport` (for an agent in a
    /// child process, see [`AgentCommand::connect`](crate::AgentCommand::connect)).
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
