//! The client side: the [`Client`] trait an editor implements, and the
//! [`ClientSideConnection`] it uses to call the agent.

use crate::IoFuture;
use crate::engine::{ConnectionOptions, Handler, HandlerFuture, RpcConnection, logged, respond};
use crate::error::ConnectionError;
use crate::transport::Transport;
use acp_schema::*;
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use std::future::Future;
use std::sync::Arc;

/// What a client does when the agent calls it.
///
/// Every method has a default body: requests answer "method not found"
/// (-32601) and notifications are ignored. Requests run concurrently;
/// notifications (`session/update`) are handled one at a time, in order.
pub trait Client: Send + Sync + 'static {
    /// `session/request_permission`: ask the user to allow a tool call. After a `session/cancel`, answer pending ones with the cancelled outcome.
    fn request_permission(
        &self,
        args: RequestPermissionRequest,
    ) -> impl Future<Output = Result<RequestPermissionResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `fs/read_text_file`: read a text file (1-based `line`, `limit` lines).
    fn read_text_file(
        &self,
        args: ReadTextFileRequest,
    ) -> impl Future<Output = Result<ReadTextFileResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `fs/write_text_file`: write a text file.
    fn write_text_file(
        &self,
        args: WriteTextFileRequest,
    ) -> impl Future<Output = Result<WriteTextFileResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `terminal/create`: start a command in a new terminal.
    fn create_terminal(
        &self,
        args: CreateTerminalRequest,
    ) -> impl Future<Output = Result<CreateTerminalResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `terminal/output`: the terminal's output so far.
    fn terminal_output(
        &self,
        args: TerminalOutputRequest,
    ) -> impl Future<Output = Result<TerminalOutputResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `terminal/wait_for_exit`: wait until the terminal's command exits.
    fn wait_for_terminal_exit(
        &self,
        args: WaitForTerminalExitRequest,
    ) -> impl Future<Output = Result<WaitForTerminalExitResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `terminal/kill`: kill the command, keeping the terminal and its output.
    fn kill_terminal(
        &self,
        args: KillTerminalRequest,
    ) -> impl Future<Output = Result<KillTerminalResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `terminal/release`: kill the command if running and forget the terminal.
    fn release_terminal(
        &self,
        args: ReleaseTerminalRequest,
    ) -> impl Future<Output = Result<ReleaseTerminalResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `elicitation/create`: ask the user for structured input.
    fn create_elicitation(
        &self,
        args: CreateElicitationRequest,
    ) -> impl Future<Output = Result<CreateElicitationResponse, Error>> + Send {
        let _ = args;
        async { Err(Error::method_not_found()) }
    }

    /// `session/update`: progress of a session (message chunks, tool calls, plans, …).
    fn session_notification(
        &self,
        args: SessionNotification,
    ) -> impl Future<Output = Result<(), Error>> + Send {
        let _ = args;
        async { Ok(()) }
    }

    /// `elicitation/complete`: a URL elicitation finished.
    fn complete_elicitation(
        &self,
        args: CompleteElicitationNotification,
    ) -> impl Future<Output = Result<(), Error>> + Send {
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

/// The client's end of a connection: cheap to clone, used to call the agent.
#[derive(Clone, Debug)]
pub struct ClientSideConnection {
    rpc: RpcConnection,
}

impl ClientSideConnection {
    /// Connects a client to an agent over `transport` (for a subprocess, see
    /// [`AgentCommand`](crate::AgentCommand)).
    ///
    /// `make_client` receives a clone of the connection. Returns the connection
    /// and the I/O future, which must be spawned or awaited.
    pub fn new<C: Client>(
        transport: Transport,
        options: ConnectionOptions,
        make_client: impl FnOnce(ClientSideConnection) -> C,
    ) -> (ClientSideConnection, IoFuture) {
        let (rpc, unstarted) = RpcConnection::new(options);
        let conn = ClientSideConnection { rpc };
        let client = Arc::new(make_client(conn.clone()));
        let io = unstarted.run(transport, Arc::new(ClientHandler { client }));
        (conn, io)
    }

    /// The underlying JSON-RPC connection (generic `request`/`notify`).
    pub fn rpc(&self) -> &RpcConnection {
        &self.rpc
    }

    /// `initialize`: negotiate the protocol version and capabilities.
    pub fn initialize(
        &self,
        request: InitializeRequest,
    ) -> impl Future<Output = Result<InitializeResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `authenticate`: authenticate with one of the agent's methods.
    pub fn authenticate(
        &self,
        request: AuthenticateRequest,
    ) -> impl Future<Output = Result<AuthenticateResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `logout`: end the authenticated state.
    pub fn logout(
        &self,
        request: LogoutRequest,
    ) -> impl Future<Output = Result<LogoutResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `session/new`: create a session.
    pub fn new_session(
        &self,
        request: NewSessionRequest,
    ) -> impl Future<Output = Result<NewSessionResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `session/load`: load a session; its history arrives as `session/update`s before this returns.
    pub fn load_session(
        &self,
        request: LoadSessionRequest,
    ) -> impl Future<Output = Result<LoadSessionResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `session/list`: list the agent's sessions.
    pub fn list_sessions(
        &self,
        request: ListSessionsRequest,
    ) -> impl Future<Output = Result<ListSessionsResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `session/resume`: resume a session without replaying history.
    pub fn resume_session(
        &self,
        request: ResumeSessionRequest,
    ) -> impl Future<Output = Result<ResumeSessionResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `session/close`: close a session.
    pub fn close_session(
        &self,
        request: CloseSessionRequest,
    ) -> impl Future<Output = Result<CloseSessionResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `session/delete`: delete a session.
    pub fn delete_session(
        &self,
        request: DeleteSessionRequest,
    ) -> impl Future<Output = Result<DeleteSessionResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `session/set_mode`: switch the session's mode.
    pub fn set_session_mode(
        &self,
        request: SetSessionModeRequest,
    ) -> impl Future<Output = Result<SetSessionModeResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `session/set_config_option`: change a config option.
    pub fn set_session_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
    ) -> impl Future<Output = Result<SetSessionConfigOptionResponse, ConnectionError>> + Send + '_
    {
        self.rpc.request(request)
    }

    /// `session/prompt`: run one prompt turn. When this returns, every `session/update` the agent sent before its response has been handled.
    pub fn prompt(
        &self,
        request: PromptRequest,
    ) -> impl Future<Output = Result<PromptResponse, ConnectionError>> + Send + '_ {
        self.rpc.request(request)
    }

    /// `session/cancel`: cancel the session's prompt turn. The turn still ends
    /// with a prompt response (stop reason `cancelled`).
    pub async fn cancel(&self, notification: CancelNotification) -> Result<(), ConnectionError> {
        self.rpc.notify(notification).await
    }

    /// Sends an `_`-prefixed extension request to the agent.
    pub async fn ext_method(&self, request: ExtRequest) -> Result<ExtResponse, ConnectionError> {
        self.rpc.ext_request(request).await
    }

    /// Sends an `_`-prefixed extension notification to the agent.
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

struct ClientHandler<C> {
    client: Arc<C>,
}

impl<C: Client> Handler for ClientHandler<C> {
    fn request(&self, method: &str, params: Option<&RawValue>) -> Result<HandlerFuture, Error> {
        let client = self.client.clone();
        Ok(match AgentRequest::decode(method, params)? {
            AgentRequest::RequestPermission(p) => {
                respond(async move { client.request_permission(p).await })
            }
            AgentRequest::ReadTextFile(p) => respond(async move { client.read_text_file(p).await }),
            AgentRequest::WriteTextFile(p) => {
                respond(async move { client.write_text_file(p).await })
            }
            AgentRequest::CreateTerminal(p) => {
                respond(async move { client.create_terminal(p).await })
            }
            AgentRequest::TerminalOutput(p) => {
                respond(async move { client.terminal_output(p).await })
            }
            AgentRequest::WaitForTerminalExit(p) => {
                respond(async move { client.wait_for_terminal_exit(p).await })
            }
            AgentRequest::KillTerminal(p) => respond(async move { client.kill_terminal(p).await }),
            AgentRequest::ReleaseTerminal(p) => {
                respond(async move { client.release_terminal(p).await })
            }
            AgentRequest::CreateElicitation(p) => {
                respond(async move { client.create_elicitation(p).await })
            }
            AgentRequest::Ext(p) => Box::pin(async move { Ok(client.ext_method(p).await?.0) }),
            _ => return Err(Error::method_not_found()),
        })
    }

    fn notification(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, ()>, Error> {
        let client = self.client.clone();
        let work: BoxFuture<'static, Result<(), Error>> =
            match AgentNotification::decode(method, params)? {
                AgentNotification::SessionUpdate(p) => {
                    Box::pin(async move { client.session_notification(p).await })
                }
                AgentNotification::CompleteElicitation(p) => {
                    Box::pin(async move { client.complete_elicitation(p).await })
                }
                AgentNotification::Ext(p) => {
                    Box::pin(async move { client.ext_notification(p).await })
                }
                _ => return Err(Error::method_not_found()),
            };
        Ok(logged(work))
    }
}
