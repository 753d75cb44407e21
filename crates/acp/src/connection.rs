//! A connection's handle, typed by the side that holds it, and the context
//! every handler receives.
//!
//! [`Connection<S>`] is one handle for both sides: `S` is the side holding
//! it ([`AgentSide`] for an agent, [`ClientSide`] for a client), and it can
//! only send what the other side handles. The typed calls (`prompt`,
//! `read_text_file`, …) are generated from the method tables of
//! [`acp_schema`], like the [`Agent`](crate::Agent) and
//! [`Client`](crate::Client) traits.

use crate::engine::{Engine, RequestState};
use crate::error::ConnectionError;
use acp_schema::{
    AgentSide, ClientSide, ConnectionSide, ExtNotification, ExtRequest, ExtResponse, Notification,
    Request, RequestId,
};
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// One end of an ACP connection, held by side `S`: sends requests and
/// notifications to the peer, and watches the connection close.
///
/// Cheap to clone; all clones share the connection. Made by
/// [`AgentSideConnection::new`] or [`ClientSideConnection::new`] (or
/// [`AgentCommand::connect`](crate::AgentCommand::connect) for an agent in a
/// child process), and handed to every handler in its context.
///
/// Requests go only toward the side that handles them. A client sends
/// `session/prompt`:
/// ```
/// # async fn f(client: acp::ClientSideConnection) {
/// use acp::schema::*;
/// let _ = client.request(PromptRequest::new(SessionId::new("s"), vec![])).await;
/// # }
/// ```
/// but an agent cannot, since the agent handles it:
/// ```compile_fail
/// # async fn f(agent: acp::AgentSideConnection) {
/// use acp::schema::*;
/// let _ = agent.request(PromptRequest::new(SessionId::new("s"), vec![])).await;
/// # }
/// ```
pub struct Connection<S: ConnectionSide> {
    pub(crate) engine: Engine,
    side: PhantomData<fn() -> S>,
}

/// The agent's end of a connection: calls the client.
pub type AgentSideConnection = Connection<AgentSide>;

/// The client's end of a connection: calls the agent.
pub type ClientSideConnection = Connection<ClientSide>;

impl<S: ConnectionSide> Clone for Connection<S> {
    fn clone(&self) -> Self {
        Connection {
            engine: self.engine.clone(),
            side: PhantomData,
        }
    }
}

impl<S: ConnectionSide> fmt::Debug for Connection<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("side", &S::SIDE)
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl<S: ConnectionSide> Connection<S> {
    pub(crate) fn from_engine(engine: Engine) -> Self {
        Connection {
            engine,
            side: PhantomData,
        }
    }

    /// Sends a request the peer handles and waits for its response.
    ///
    /// The request gets its id and is queued for the writer when this is
    /// called, not when the future is first polled, so requests made one
    /// after another are written in that order and the peer can work on one
    /// while the caller prepares the next. It never waits for room in the
    /// outgoing queue. Dropping the future before the response arrives sends
    /// `$/cancel_request`.
    pub fn request<R>(
        &self,
        request: R,
    ) -> impl Future<Output = Result<R::Response, ConnectionError>> + Send + '_
    where
        R: Request<HandledBy = S::Peer>,
    {
        self.engine.request(request)
    }

    /// Sends a notification the peer handles. Returns once it is queued for
    /// the writer (waiting while the outgoing queue is full), so
    /// notifications sent one after another are written in that order.
    pub async fn notify<N>(&self, notification: N) -> Result<(), ConnectionError>
    where
        N: Notification<HandledBy = S::Peer>,
    {
        self.engine.notify(notification).await
    }

    /// Sends an `_`-prefixed extension request; its result is raw JSON.
    /// Queued when called, like [`request`](Self::request).
    pub fn ext_method(
        &self,
        request: ExtRequest,
    ) -> impl Future<Output = Result<ExtResponse, ConnectionError>> + Send + '_ {
        self.engine.ext_request(request)
    }

    /// Sends an `_`-prefixed extension notification.
    pub async fn ext_notification(
        &self,
        notification: ExtNotification,
    ) -> Result<(), ConnectionError> {
        self.engine.ext_notify(notification).await
    }

    /// Whether the connection has closed.
    pub fn is_closed(&self) -> bool {
        self.engine.is_closed()
    }

    /// Why the connection closed, once it has: [`ConnectionError::Closed`]
    /// for the end of input or [`close`](Self::close), or the I/O error or
    /// stall that closed it.
    pub fn close_reason(&self) -> Option<ConnectionError> {
        self.engine.close_reason()
    }

    /// Resolves when the connection has closed (end of input, an I/O error,
    /// a stalled peer, or [`close`](Self::close)).
    pub async fn closed(&self) {
        self.engine.closed().await
    }

    /// Closes the connection: pending requests fail with
    /// [`ConnectionError::Closed`], running handlers are cancelled and
    /// dropped, queued output is flushed and the I/O future ends.
    pub fn close(&self) {
        self.engine.close()
    }
}

/// What a request handler gets besides the request: the connection, the
/// request's cancellation, and a way to act once the response is on its way.
///
/// The cancellation is cancelled by `session/cancel` for the session's
/// `session/prompt`, by `$/cancel_request` naming this request (which also
/// drops the handler and answers -32800), and by the connection's close
/// (which drops the handler without an answer). A prompt handler watches it
/// and answers [`StopReason::Cancelled`](acp_schema::StopReason::Cancelled).
///
/// Cheap to clone: a task spawned by the handler may keep a clone.
pub struct RequestContext<S: ConnectionSide> {
    peer: Connection<S>,
    request: Arc<RequestState>,
}

impl<S: ConnectionSide> Clone for RequestContext<S> {
    fn clone(&self) -> Self {
        RequestContext {
            peer: self.peer.clone(),
            request: self.request.clone(),
        }
    }
}

impl<S: ConnectionSide> fmt::Debug for RequestContext<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", self.request.id())
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl<S: ConnectionSide> RequestContext<S> {
    pub(crate) fn new(peer: Connection<S>, request: Arc<RequestState>) -> Self {
        RequestContext { peer, request }
    }

    /// The connection the request came in on, to call the peer.
    pub fn peer(&self) -> &Connection<S> {
        &self.peer
    }

    /// The request's id, as the peer sent it.
    pub fn id(&self) -> &RequestId {
        self.request.id()
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.request.is_cancelled()
    }

    /// Resolves once the request is cancelled.
    pub async fn cancelled(&self) {
        if self.is_cancelled() {
            return;
        }
        self.request.token().cancelled_owned().await
    }

    /// The request's cancellation as a token, to hand to code that takes
    /// one (`select!` loops, child tokens). Cancelled with the request.
    pub fn cancellation(&self) -> CancellationToken {
        self.request.token()
    }

    /// Runs `work` right after the response of this request has been
    /// queued, so anything `work` sends reaches the peer after that response
    /// (an agent announcing a new session's commands after answering
    /// `session/new`, which the client can only place once it knows the
    /// session id). It runs only if the handler succeeded; several run one
    /// after another in the order given, in a task of their own. Called once
    /// the handler has returned (from a task that kept the context), `work`
    /// is spawned at once.
    pub fn after_response(&self, work: impl Future<Output = ()> + Send + 'static) {
        self.request.after_response(Box::pin(work));
    }
}

/// What a notification handler gets besides the notification.
pub struct NotificationContext<S: ConnectionSide> {
    peer: Connection<S>,
}

impl<S: ConnectionSide> Clone for NotificationContext<S> {
    fn clone(&self) -> Self {
        NotificationContext {
            peer: self.peer.clone(),
        }
    }
}

impl<S: ConnectionSide> fmt::Debug for NotificationContext<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NotificationContext")
            .finish_non_exhaustive()
    }
}

impl<S: ConnectionSide> NotificationContext<S> {
    pub(crate) fn new(peer: Connection<S>) -> Self {
        NotificationContext { peer }
    }

    /// The connection the notification came in on, to call the peer.
    pub fn peer(&self) -> &Connection<S> {
        &self.peer
    }
}
