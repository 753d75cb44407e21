//! The agent side: the [`Agent`] trait an agent implements, and the
//! [`AgentSideConnection`] it uses to call the client.

use crate::IoFuture;
use crate::engine::{ConnectionOptions, Handler, HandlerFuture, RpcConnection, logged, respond};
use crate::error::ConnectionError;
use crate::transport::Transport;
use acp_schema::*;
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// What an agent does when the client calls it.
///
/// Every method has a default body: requests answer "method not found"
/// (-32601) and notifications are ignored, so an agent implements what it
/// supports. Futures must be `Send`; the runtime runs requests concurrently, so
/// `&self` methods may be called while others are in progress.
///
/// To call the client from a handler, keep the [`AgentSideConnection`] handed to
/// the constructor closure of [`AgentSideConnection::new`].
pub trait Agent: Send + Sync + 'static {
    /// `initialize`: negotiate the protocol version and exchange capabilities.
    fn initialize(
        &self,
        args: InitializeRequest,
    ) -> impl Future<Output = Result<InitializeResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `authenticate`: authenticate with one of the advertised methods.
    fn authenticate(
        &self,
        args: AuthenticateRequest,
    ) -> impl Future<Output = Result<AuthenticateResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `logout`: forget the current authentication.
    fn logout(
        &self,
        args: LogoutRequest,
    ) -> impl Future<Output = Result<LogoutResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/new`: create a session.
    fn new_session(
        &self,
        args: NewSessionRequest,
    ) -> impl Future<Output = Result<NewSessionResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/load`: load a session, replaying its history as `session/update`s
    /// before answering.
    fn load_session(
        &self,
        args: LoadSessionRequest,
    ) -> impl Future<Output = Result<LoadSessionResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/list`: list known sessions.
    fn list_sessions(
        &self,
        args: ListSessionsRequest,
    ) -> impl Future<Output = Result<ListSessionsResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/resume`: resume a session without replaying its history.
    fn resume_session(
        &self,
        args: ResumeSessionRequest,
    ) -> impl Future<Output = Result<ResumeSessionResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/close`: close a session and free its resources.
    fn close_session(
        &self,
        args: CloseSessionRequest,
    ) -> impl Future<Output = Result<CloseSessionResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/delete`: delete a session for good.
    fn delete_session(
        &self,
        args: DeleteSessionRequest,
    ) -> impl Future<Output = Result<DeleteSessionResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/set_mode`: switch the session's mode.
    fn set_session_mode(
        &self,
        args: SetSessionModeRequest,
    ) -> impl Future<Output = Result<SetSessionModeResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/set_config_option`: change a session config option.
    fn set_session_config_option(
        &self,
        args: SetSessionConfigOptionRequest,
    ) -> impl Future<Output = Result<SetSessionConfigOptionResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/prompt`: run one prompt turn.
    ///
    /// Stream progress with [`AgentSideConnection::session_notification`]; every
    /// update awaited before returning is on the wire before the response. Watch
    /// [`AgentSideConnection::cancellation`] to stop early and answer
    /// [`StopReason::Cancelled`].
    fn prompt(
        &self,
        args: PromptRequest,
    ) -> impl Future<Output = Result<PromptResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/cancel`: the client cancels the session's prompt turn.
    ///
    /// The runtime has already cancelled the turn's token (see
    /// [`AgentSideConnection::cancellation`]) when this runs.
    fn cancel(&self, args: CancelNotification) -> impl Future<Output = Result<(), Error>> + Send {
        let _ = args;
        async { Ok(()) }
    }

    /// An `_`-prefixed extension request.
    fn ext_method(
        &self,
        args: ExtRequest,
    ) -> impl Future<Output = Result<ExtResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// An `_`-prefixed extension notification.
    fn ext_notification(
        &self,
        args: ExtNotification,
    ) -> impl Future<Output = Result<(), Error>> + Send {
        let _ = args;
        async { Ok(()) }
    }
}

/// Cancellation tokens of the prompt turns in flight, by session.
#[derive(Default)]
struct PromptTurns {
    next: AtomicU64,
    turns: Mutex<HashMap<SessionId, (u64, CancellationToken)>>,
}

impl PromptTurns {
    fn begin(&self, session: &SessionId) -> u64 {
        let generation = self.next.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        turns.insert(session.clone(), (generation, token));
        generation
    }

    fn end(&self, session: &SessionId, generation: u64) {
        let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        if turns.get(session).is_some_and(|(g, _)| *g == generation) {
            turns.remove(session);
        }
    }

    fn cancel(&self, session: &SessionId) {
        let turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, token)) = turns.get(session) {
            token.cancel();
        }
    }

    fn token(&self, session: &SessionId) -> CancellationToken {
        let turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        turns
            .get(session)
            .map(|(_, t)| t.clone())
            .unwrap_or_default()
    }
}

/// The agent's end of a connection: cheap to clone, used to call the client.
#[derive(Clone, Debug)]
pub struct AgentSideConnection {
    rpc: RpcConnection,
    turns: Arc<PromptTurns>,
}

impl std::fmt::Debug for PromptTurns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PromptTurns")
    }
}

impl AgentSideConnection {
    /// Connects an agent to a client over `transport`.
    ///
    /// `make_agent` receives a clone of the connection, so the agent can keep it
    /// to call the client. Returns the connection and the I/O future, which must
    /// be spawned or awaited; it ends when the client goes away.
    pub fn new<A: Agent>(
        transport: Transport,
        options: ConnectionOptions,
        make_agent: impl FnOnce(AgentSideConnection) -> A,
    ) -> (AgentSideConnection, IoFuture) {
        let (rpc, unstarted) = RpcConnection::new(options);
        let conn = AgentSideConnection {
            rpc,
            turns: Arc::new(PromptTurns::default()),
        };
        let agent = Arc::new(make_agent(conn.clone()));
        let handler = AgentHandler {
            agent,
            turns: conn.turns.clone(),
        };
        let io = unstarted.run(transport, Arc::new(handler));
        (conn, io)
    }

    /// Serves an agent over `transport` until the client goes away.
    pub async fn serve<A: Agent>(
        transport: Transport,
        make_agent: impl FnOnce(AgentSideConnection) -> A,
    ) -> Result<(), ConnectionError> {
        let (_conn, io) = Self::new(transport, ConnectionOptions::default(), make_agent);
        io.await
    }

    /// The underlying JSON-RPC connection (generic `request`/`notify`).
    pub fn rpc(&self) -> &RpcConnection {
        &self.rpc
    }

    /// The cancellation token of the prompt turn running in `session`: cancelled
    /// when the client sends `session/cancel`. Outside a turn, a fresh token that
    /// is never cancelled.
    pub fn cancellation(&self, session: &SessionId) -> CancellationToken {
        self.turns.token(session)
    }

    /// Runs `work` right after the response of the request being handled is
    /// queued (see [`RpcConnection::after_response`]): for example the
    /// `available_commands_update` of a session that `session/new` just created,
    /// which the client can only place once it knows the session id.
    pub fn after_response(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        self.rpc.after_response(work)
    }

    /// `session/update`: streams progress to the client.
    pub async fn session_notification(
        &self,
        notification: SessionNotification,
    ) -> Result<(), ConnectionError> {
        self.rpc.notify(notification).await
    }

    /// `session/request_permission`: asks the user to allow a tool call.
    pub fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> impl Future<Output = Result<RequestPermissionResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `fs/read_text_file`: reads a text file through the client.
    pub fn read_text_file(
        &self,
        request: ReadTextFileRequest,
    ) -> impl Future<Output = Result<ReadTextFileResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `fs/write_text_file`: writes a text file through the client.
    pub fn write_text_file(
        &self,
        request: WriteTextFileRequest,
    ) -> impl Future<Output = Result<WriteTextFileResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `terminal/create`: starts a command in a client terminal.
    pub fn create_terminal(
        &self,
        request: CreateTerminalRequest,
    ) -> impl Future<Output = Result<CreateTerminalResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `terminal/output`: reads a terminal's output so far.
    pub fn terminal_output(
        &self,
        request: TerminalOutputRequest,
    ) -> impl Future<Output = Result<TerminalOutputResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `terminal/wait_for_exit`: waits for a terminal's command to exit.
    pub fn wait_for_terminal_exit(
        &self,
        request: WaitForTerminalExitRequest,
    ) -> impl Future<Output = Result<WaitForTerminalExitResponse, ConnectionError>> + Send + '_
    {
        self.rpc.request(request)
    }

    /// `terminal/kill`: kills a terminal's command, keeping its output.
    pub fn kill_terminal(
        &self,
        request: KillTerminalRequest,
    ) -> impl Future<Output = Result<KillTerminalResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `terminal/release`: kills (if running) and releases a terminal.
    pub fn release_terminal(
        &self,
        request: ReleaseTerminalRequest,
    ) -> impl Future<Output = Result<ReleaseTerminalResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `elicitation/create`: asks the user for structured input.
    pub fn create_elicitation(
        &self,
        request: CreateElicitationRequest,
    ) -> impl Future<Output = Result<CreateElicitationResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `elicitation/complete`: tells the client a URL elicitation finished.
    pub async fn complete_elicitation(
        &self,
        notification: CompleteElicitationNotification,
    ) -> Result<(), ConnectionError> {
        self.rpc.notify(notification).await
    }

    /// Sends an `_`-prefixed extension request to the client.
    pub async fn ext_method(&self, request: ExtRequest) -> Result<ExtResponse, ConnectionError> {
        self.rpc.ext_request(request).await
    }

    /// Sends an `_`-prefixed extension notification to the client.
    pub async fn ext_notification(
        &self,
        notification: ExtNotification,
    ) -> Result<(), ConnectionError> {
        self.rpc.ext_notify(notification).await
    }

    /// Resolves when the connection has closed.
    pub async fn closed(&self) {
        self.rpc.closed().await
    }

    /// Closes the connection.
    pub fn close(&self) {
        self.rpc.close()
    }
}

struct AgentHandler<A> {
    agent: Arc<A>,
    turns: Arc<PromptTurns>,
}

impl<A: Agent> Handler for AgentHandler<A> {
    fn request(&self, method: &str, params: Option<&RawValue>) -> Result<HandlerFuture, Error> {
        let agent = self.agent.clone();
        Ok(match ClientRequest::decode(method, params)? {
            ClientRequest::Initialize(p) => respond(async move { agent.initialize(p).await }),
            ClientRequest::Authenticate(p) => respond(async move { agent.authenticate(p).await }),
            ClientRequest::Logout(p) => respond(async move { agent.logout(p).await }),
            ClientRequest::NewSession(p) => respond(async move { agent.new_session(p).await }),
            ClientRequest::LoadSession(p) => respond(async move { agent.load_session(p).await }),
            ClientRequest::ListSessions(p) => respond(async move { agent.list_sessions(p).await }),
            ClientRequest::DeleteSession(p) => {
                respond(async move { agent.delete_session(p).await })
            }
            ClientRequest::ResumeSession(p) => {
                respond(async move { agent.resume_session(p).await })
            }
            ClientRequest::CloseSession(p) => respond(async move { agent.close_session(p).await }),
            ClientRequest::SetSessionMode(p) => {
                respond(async move { agent.set_session_mode(p).await })
            }
            ClientRequest::SetSessionConfigOption(p) => {
                respond(async move { agent.set_session_config_option(p).await })
            }
            ClientRequest::Prompt(p) => {
                let session = p.session_id.clone();
                let generation = self.turns.begin(&session);
                // Built outside the future, so the turn ends even if the future
                // is dropped before it is first polled (cancelled while queued).
                let end = TurnEnd {
                    turns: self.turns.clone(),
                    session,
                    generation,
                };
                respond(async move {
                    let _end = end;
                    agent.prompt(p).await
                })
            }
            ClientRequest::Ext(p) => Box::pin(async move { Ok(agent.ext_method(p).await?.0) }),
            _ => return Err(Error::method_not_found()),
        })
    }

    fn notification(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, ()>, Error> {
        let agent = self.agent.clone();
        let work: BoxFuture<'static, Result<(), Error>> =
            match ClientNotification::decode(method, params)? {
                ClientNotification::Cancel(p) => {
                    // Cancel at once, not when the lane reaches this notification.
                    self.turns.cancel(&p.session_id);
                    Box::pin(async move { agent.cancel(p).await })
                }
                ClientNotification::Ext(p) => {
                    Box::pin(async move { agent.ext_notification(p).await })
                }
                _ => return Err(Error::method_not_found()),
            };
        Ok(logged(work))
    }
}

/// Forgets a prompt turn's token when the turn ends, however it ends.
struct TurnEnd {
    turns: Arc<PromptTurns>,
    session: SessionId,
    generation: u64,
}

impl Drop for TurnEnd {
    fn drop(&mut self) {
        self.turns.end(&self.session, self.generation);
    }
}
