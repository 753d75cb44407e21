//! The agent side: the [`Agent`] trait an agent implements, how it is
//! connected, and the typed calls a client makes to it.
//!
//! All three are generated from the agent's method table in `acp_schema`
//! ([`acp_schema::AGENT_METHODS`]), so each method is declared once there.

use crate::IoFuture;
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
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

/// The raw params of an extension method (`{}` when absent).
pub(crate) fn ext_params(params: Option<&RawValue>) -> Box<RawValue> {
    match params {
        Some(raw) => raw.to_owned(),
        None => RawValue::from_string("{}".to_owned()).expect("`{}` is valid JSON"),
    }
}

/// Expands the agent's method table into the [`Agent`] trait, the client's
/// typed calls and the agent's dispatch.
macro_rules! agent_side {
    ($($table:tt)*) => {
        agent_side_with_docs! {
            docs {
                /// What an agent does when the client calls it.
                ///
                /// Every method has a default body: requests answer "method not found"
                /// (-32601) and notifications are ignored, so an agent implements what
                /// it supports. Each handler gets the request and its
                /// [`RequestContext`]: the connection (to call the client), the
                /// request's cancellation, and `after_response`. Futures must be
                /// `Send`; requests run concurrently, so `&self` methods may be
                /// called while others are in progress.
                ///
                /// In [`prompt`](Agent::prompt), every `session/update` sent (and
                /// awaited) before returning is on the wire before the response, and
                /// the context is cancelled when the client sends `session/cancel` for
                /// the session (before [`cancel`](Agent::cancel) runs): stop, and
                /// answer [`StopReason::Cancelled`].
            }
            $($table)*
        }
    };
}

/// [`agent_side!`] with the docs of the trait given: the same expansion serves
/// v2 (`crate::v2`), whose names it finds where it is expanded.
macro_rules! agent_side_with_docs {
    (
        docs { $(#[$adoc:meta])* }
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
        $(#[$adoc])*
        pub trait Agent: Send + Sync + 'static {
            $(
                $(#[$vdoc])*
                fn $fname(
                    &self,
                    args: $params,
                    cx: RequestContext<AgentSide>,
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
                    cx: NotificationContext<AgentSide>,
                ) -> impl Future<Output = Result<(), Error>> + Send {
                    let _ = (args, cx);
                    async { Ok(()) }
                }
            )*
            /// An `_`-prefixed extension request from the client.
            fn ext_method(
                &self,
                args: ExtRequest,
                cx: RequestContext<AgentSide>,
            ) -> impl Future<Output = Result<ExtResponse, Error>> + Send {
                let _ = (args, cx);
                async { Err(Error::method_not_found()) }
            }
            /// An `_`-prefixed extension notification from the client.
            fn ext_notification(
                &self,
                args: ExtNotification,
                cx: NotificationContext<AgentSide>,
            ) -> impl Future<Output = Result<(), Error>> + Send {
                let _ = (args, cx);
                async { Ok(()) }
            }
        }

        impl ClientSideConnection {
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

        impl<A: Agent> AgentHandler<A> {
            fn prepare_dispatch<'de, D: serde::Deserializer<'de>>(
                &self,
                method: &str,
                params: D,
                cx: RequestContext<AgentSide>,
            ) -> Result<HandlerFuture, D::Error> {
                let agent = self.agent.clone();
                match method {
                    $( $method => {
                        let args: $params = object(params)?;
                        Ok(respond(async move { agent.$fname(args, cx).await }))
                    } )*
                    m if m.starts_with('_') => {
                        let raw: Box<RawValue> = serde::Deserialize::deserialize(params)?;
                        let args = ExtRequest::from_raw(m, raw);
                        Ok(Box::pin(async move { Ok(agent.ext_method(args, cx).await?.0) }))
                    }
                    _ => Err(declined()),
                }
            }

            fn prepare_notification_dispatch<'de, D: serde::Deserializer<'de>>(
                &self,
                method: &str,
                params: D,
            ) -> Result<BoxFuture<'static, ()>, D::Error> {
                let agent = self.agent.clone();
                let cx = NotificationContext::new(self.conn.clone());
                match method {
                    $( $nmethod => {
                        let args: $nparams = object(params)?;
                        Ok(logged!(agent.$nfname(args, cx)))
                    } )*
                    m if m.starts_with('_') => {
                        let raw: Box<RawValue> = serde::Deserialize::deserialize(params)?;
                        let args = ExtNotification::from_raw(m, raw);
                        Ok(logged!(agent.ext_notification(args, cx)))
                    }
                    _ => Err(declined()),
                }
            }

            fn dispatch_request(
                &self,
                method: &str,
                params: Option<&RawValue>,
                cx: RequestContext<AgentSide>,
            ) -> Result<HandlerFuture, Error> {
                let agent = self.agent.clone();
                match method {
                    $( $method => {
                        let args: $params = decode_params(params)?;
                        Ok(respond(async move { agent.$fname(args, cx).await }))
                    } )*
                    m if m.starts_with('_') => {
                        let args = ExtRequest::from_raw(m, crate::agent::ext_params(params));
                        Ok(Box::pin(async move { Ok(agent.ext_method(args, cx).await?.0) }))
                    }
                    m => Err(ParamsError::UnknownMethod(m.to_owned()).into()),
                }
            }

            fn dispatch_notification(
                &self,
                method: &str,
                params: Option<&RawValue>,
            ) -> Result<BoxFuture<'static, ()>, Error> {
                let agent = self.agent.clone();
                let cx = NotificationContext::new(self.conn.clone());
                match method {
                    $( $nmethod => {
                        let args: $nparams = decode_params(params)?;
                        Ok(logged!(agent.$nfname(args, cx)))
                    } )*
                    m if m.starts_with('_') => {
                        let args = ExtNotification::from_raw(m, crate::agent::ext_params(params));
                        Ok(logged!(agent.ext_notification(args, cx)))
                    }
                    m => Err(ParamsError::UnknownMethod(m.to_owned()).into()),
                }
            }
        }
    };
}

#[cfg(feature = "v2")]
pub(crate) use agent_side_with_docs;

acp_schema::agent_methods!(agent_side);

impl AgentSideConnection {
    /// Connects an agent to a client over `transport`.
    ///
    /// `make_agent` receives a clone of the connection, for an agent that
    /// calls the client outside its handlers (every handler also gets it in
    /// its context). Returns the connection and the I/O future, which must be
    /// spawned or awaited; it ends when the client goes away.
    pub fn new<A: Agent>(
        transport: Transport,
        options: ConnectionOptions,
        make_agent: impl FnOnce(AgentSideConnection) -> A,
    ) -> (AgentSideConnection, IoFuture) {
        let (engine, unstarted) = Engine::new(options);
        let conn = Connection::from_engine(engine);
        let handler = AgentHandler::new(make_agent(conn.clone()), conn.clone());
        let io = unstarted.run(transport, Arc::new(handler));
        (conn, io)
    }

    /// Serves an agent over `transport` with default options until the
    /// client goes away.
    pub async fn serve<A: Agent>(
        transport: Transport,
        make_agent: impl FnOnce(AgentSideConnection) -> A,
    ) -> Result<(), ConnectionError> {
        let (_conn, io) = Self::new(transport, ConnectionOptions::default(), make_agent);
        io.await
    }
}

/// The prompt turns in flight, by session, so that `session/cancel`
/// reaches their contexts.
type Turns = Arc<Mutex<HashMap<SessionId, Vec<Arc<RequestState>>>>>;

#[derive(Default)]
pub(crate) struct PromptTurns {
    turns: Turns,
}

impl PromptTurns {
    /// Records the turn of `request` in `session`; the guard forgets it when
    /// the turn ends, however it ends (dropped before its first poll too).
    pub(crate) fn begin(&self, session: SessionId, request: &Arc<RequestState>) -> TurnEnd {
        crate::engine::lock(&self.turns)
            .entry(session.clone())
            .or_default()
            .push(request.clone());
        TurnEnd {
            turns: self.turns.clone(),
            session,
            request: request.clone(),
        }
    }

    /// Cancels every turn running in `session`.
    pub(crate) fn cancel(&self, session: &SessionId) {
        if let Some(turns) = crate::engine::lock(&self.turns).get(session) {
            for turn in turns {
                turn.cancel();
            }
        }
    }
}

/// Forgets a prompt turn when it ends, however it ends.
pub(crate) struct TurnEnd {
    turns: Turns,
    session: SessionId,
    request: Arc<RequestState>,
}

impl Drop for TurnEnd {
    fn drop(&mut self) {
        let mut turns = crate::engine::lock(&self.turns);
        if let Some(running) = turns.get_mut(&self.session) {
            running.retain(|turn| !Arc::ptr_eq(turn, &self.request));
            if running.is_empty() {
                turns.remove(&self.session);
            }
        }
    }
}

pub(crate) struct AgentHandler<A> {
    agent: Arc<A>,
    conn: AgentSideConnection,
    turns: PromptTurns,
}

impl<A> AgentHandler<A> {
    /// The handler of `agent` on `conn`.
    pub(crate) fn new(agent: A, conn: AgentSideConnection) -> Self {
        AgentHandler {
            agent: Arc::new(agent),
            conn,
            turns: PromptTurns::default(),
        }
    }
}

impl<A: Agent> AgentHandler<A> {
    /// A prompt turn's work: recorded outside the future, so that
    /// `session/cancel` finds it at once and it is forgotten even if the
    /// future is dropped before its first poll.
    fn prompt(
        &self,
        args: PromptRequest,
        cx: RequestContext<AgentSide>,
        request: &Arc<RequestState>,
    ) -> HandlerFuture {
        let end = self.turns.begin(args.session_id.clone(), request);
        let agent = self.agent.clone();
        respond(async move {
            let _end = end;
            agent.prompt(args, cx).await
        })
    }
}

impl<A: Agent> Handler for AgentHandler<A> {
    fn prepare_request<'de, D: serde::Deserializer<'de>>(
        &self,
        method: &str,
        params: D,
        request: &Arc<RequestState>,
    ) -> Result<HandlerFuture, D::Error> {
        let cx = RequestContext::new(self.conn.clone(), request.clone());
        if method == PromptRequest::METHOD {
            return Ok(self.prompt(object(params)?, cx, request));
        }
        self.prepare_dispatch(method, params, cx)
    }

    fn prepare_notification<'de, D: serde::Deserializer<'de>>(
        &self,
        method: &str,
        params: D,
    ) -> Result<BoxFuture<'static, ()>, D::Error> {
        if method == CancelNotification::METHOD {
            // Its effect (the cancel) is at decode time: the slow way only.
            return Err(declined());
        }
        self.prepare_notification_dispatch(method, params)
    }

    fn request(
        &self,
        method: &str,
        params: Option<&RawValue>,
        request: &Arc<RequestState>,
    ) -> Result<HandlerFuture, Error> {
        let cx = RequestContext::new(self.conn.clone(), request.clone());
        if method == PromptRequest::METHOD {
            return Ok(self.prompt(decode_params(params)?, cx, request));
        }
        self.dispatch_request(method, params, cx)
    }

    fn notification(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, ()>, Error> {
        if method == CancelNotification::METHOD {
            // Cancel at once, not when the lane reaches this notification.
            let args: CancelNotification = decode_params(params)?;
            self.turns.cancel(&args.session_id);
            let agent = self.agent.clone();
            let cx = NotificationContext::new(self.conn.clone());
            return Ok(logged!(agent.cancel(args, cx)));
        }
        self.dispatch_notification(method, params)
    }
}
