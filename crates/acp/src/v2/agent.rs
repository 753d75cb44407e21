//! The agent side of v2: the v2 [`Agent`] trait, its dispatch, and the typed
//! calls a v2 client makes to it, expanded from `acp_schema::v2`'s agent table
//! by the expansion v1 uses.

use super::{AgentSideConnection, ClientSideConnection};
use crate::agent::PromptTurns;
use crate::connection::{NotificationContext, RequestContext};
use crate::engine::{Handler, HandlerFuture, RequestState};
use crate::engine::{declined, logged, object, respond};
use crate::error::ConnectionError;
use acp_schema::v2::*;
use acp_schema::{Notification, ParamsError, Request, decode_params};
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use std::future::Future;
use std::sync::Arc;

/// Expands v2's agent table with v2's docs (see `crate::agent`).
macro_rules! v2_agent_side {
    ($($table:tt)*) => {
        crate::agent::agent_side_with_docs! {
            docs {
                /// What a v2 agent does when the client calls it.
                ///
                /// Every method has a default body: requests answer "method not
                /// found" (-32601) and notifications are ignored; an agent that
                /// advertises `capabilities.session` implements the baseline
                /// (`session/new`, `session/list`, `session/resume`,
                /// `session/close`, `session/prompt`, `session/cancel`). Each
                /// handler gets its [`RequestContext`]; requests run
                /// concurrently.
                ///
                /// [`prompt`](Agent::prompt) answers as soon as the prompt is
                /// accepted, with the user message's id, and does the work in
                /// [`RequestContext::after_response`]: there it reports the user
                /// message, `running`, the output and finally `idle` with the
                /// stop reason. The context stays the turn's while that work
                /// runs: it is cancelled by `session/cancel` and `session/close`
                /// for the session, and the work then ends with `idle` and
                /// [`StopReason::Cancelled`]:
                ///
                /// ```
                /// use acp::RequestContext;
                /// use acp::schema::v2::*;
                ///
                /// struct Echo;
                ///
                /// impl acp::v2::Agent for Echo {
                ///     async fn prompt(
                ///         &self,
                ///         req: PromptRequest,
                ///         cx: RequestContext<AgentSide>,
                ///     ) -> Result<PromptResponse, Error> {
                ///         let id = MessageId::new("user-1");
                ///         let (turn, ack) = (cx.clone(), id.clone());
                ///         cx.after_response(async move {
                ///             let session = req.session_id.clone();
                ///             let send = |u: SessionUpdate| {
                ///                 turn.peer().session_update(UpdateSessionNotification::new(session.clone(), u))
                ///             };
                ///             let _ = send(SessionUpdate::user_message(id, req.prompt.clone())).await;
                ///             let _ = send(SessionUpdate::running()).await;
                ///             for block in req.prompt {
                ///                 if turn.is_cancelled() {
                ///                     break;
                ///                 }
                ///                 let _ = send(SessionUpdate::agent_message_chunk("reply-1", block)).await;
                ///             }
                ///             let stop = if turn.is_cancelled() { StopReason::Cancelled } else { StopReason::EndTurn };
                ///             let _ = send(SessionUpdate::idle(stop)).await;
                ///         });
                ///         Ok(PromptResponse::new(ack))
                ///     }
                /// }
                /// ```
            }
            $($table)*
        }
    };
}

acp_schema::v2_agent_methods!(v2_agent_side);

/// The v2 agent's side of a connection: decodes v2 methods and runs the
/// [`Agent`]'s handlers.
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

/// v2 request ids are strings or integers.
fn check_id(request: &RequestState) -> Result<(), Error> {
    if *request.id() == RequestId::Null {
        return Err(
            Error::invalid_request().data("v2 request ids are strings or integers, not null")
        );
    }
    Ok(())
}

impl<A: Agent> AgentHandler<A> {
    /// A prompt's work: recorded outside the future (so `session/cancel`
    /// finds it at once, and it is forgotten even if the future is dropped
    /// unpolled), and kept until the handler's `after_response` work is done.
    fn prompt(
        &self,
        args: PromptRequest,
        cx: RequestContext<AgentSide>,
        request: &Arc<RequestState>,
    ) -> HandlerFuture {
        let end = self.turns.begin(args.session_id.clone(), request);
        let agent = self.agent.clone();
        respond(async move {
            let result = agent.prompt(args, cx.clone()).await;
            // Registered last: it runs after the work the handler registered,
            // so the turn stays cancellable until that work is done. (Dropped
            // with the follow-ups if the handler failed or was dropped.)
            cx.after_response(async move { drop(end) });
            result
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
        // Checks and decode-time effects (initialize, close): the slow way.
        if *request.id() == RequestId::Null
            || method == InitializeRequest::METHOD
            || method == CloseSessionRequest::METHOD
        {
            return Err(declined());
        }
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
        if method == CancelSessionNotification::METHOD {
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
        check_id(request)?;
        let cx = RequestContext::new(self.conn.clone(), request.clone());
        if method == InitializeRequest::METHOD
            && let Some(asked) = crate::map::asked_version(params)
            && asked < ProtocolVersion::V2
        {
            // The first `initialize` chose v2 (the router saw to it); a
            // repeat must ask for the version the connection speaks.
            return Err(Error::invalid_request().data(format!(
                "this connection speaks protocol version 2; a repeated `initialize` \
                 cannot ask for version {asked}"
            )));
        }
        if method == PromptRequest::METHOD {
            return Ok(self.prompt(decode_params(params)?, cx, request));
        }
        if method == CloseSessionRequest::METHOD {
            // Closing a session cancels its work as `session/cancel` does, at
            // once.
            let args: CloseSessionRequest = decode_params(params)?;
            self.turns.cancel(&args.session_id);
            let agent = self.agent.clone();
            return Ok(respond(async move { agent.close_session(args, cx).await }));
        }
        self.dispatch_request(method, params, cx)
    }

    fn notification(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, ()>, Error> {
        if method == CancelSessionNotification::METHOD {
            // Cancel at once, not when the lane reaches this notification.
            let args: CancelSessionNotification = decode_params(params)?;
            self.turns.cancel(&args.session_id);
            let agent = self.agent.clone();
            let cx = NotificationContext::new(self.conn.clone());
            return Ok(logged!(agent.cancel(args, cx)));
        }
        self.dispatch_notification(method, params)
    }
}
