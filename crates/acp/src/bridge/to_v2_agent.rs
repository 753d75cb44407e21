//! A v1 client in front of a v2 agent: the bridge is a v1 agent to the client
//! ([`V1Adapter`]) and a v2 client to the agent ([`FromV2Agent`]).

use crate::connection::{AgentSideConnection, NotificationContext, RequestContext};
use crate::map::permission::{
    elicitation_response_to_v2, elicitation_to_v1, permission_request_to_v1,
    permission_response_to_v2,
};
use crate::map::session::{
    config_option_to_v1, initialize_request_to_v2, initialize_response_to_v1, modes_to_v1,
    new_session_to_v2, prompt_to_v2, session_info_to_v1,
};
use crate::map::update::UpdatesToV1;
use crate::v2::ClientSideConnection;
use acp_schema::{self as v1, Error, SessionId, ToolCallId, v2};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::oneshot;

/// A v1 prompt waiting for the v2 agent's idle update.
type Waiting = oneshot::Sender<Option<v2::StopReason>>;

/// What both halves share.
#[derive(Default)]
pub(crate) struct Shared {
    /// The agent's `initialize` result, as v2 gave it.
    init: OnceLock<v2::InitializeResponse>,
    updates: Mutex<UpdatesToV1>,
    /// The prompt waiting in each session for its idle update.
    prompts: Mutex<HashMap<SessionId, Waiting>>,
    permissions: AtomicU64,
}

impl Shared {
    /// The agent's answer to an `initialize` the bridge sent for the client.
    pub(crate) fn initialized(init: v2::InitializeResponse) -> Arc<Self> {
        let shared = Shared::default();
        let _ = shared.init.set(init);
        Arc::new(shared)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    crate::engine::lock(m)
}

/// A v1 [`Agent`](crate::Agent) that serves every call through a v2 agent,
/// translating as the bridge does (see the [module docs](super)): what
/// [`AgentRouter::v2_with_v1_adapter`](crate::negotiate::AgentRouter::v2_with_v1_adapter)
/// serves v1 clients with, and the bridge's face toward a v1 client.
pub struct V1Adapter {
    pub(crate) up: ClientSideConnection,
    pub(crate) down: AgentSideConnection,
    pub(crate) shared: Arc<Shared>,
}

/// The bridge as a v2 client, behind a v1 client.
pub(crate) struct FromV2Agent {
    pub(crate) down: AgentSideConnection,
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for V1Adapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("V1Adapter").finish_non_exhaustive()
    }
}

/// A v1 adapter for the v2 agent `make_agent` builds, serving the v1 client
/// at `down`: the v2 agent runs on an in-memory connection of its own, closed
/// when `down` closes.
pub(crate) fn v1_adapter<A: crate::v2::Agent>(
    make_agent: impl FnOnce(crate::v2::AgentSideConnection) -> A + Send + 'static,
    down: AgentSideConnection,
) -> V1Adapter {
    use crate::connection::Connection;
    let (near, far) = crate::Transport::memory_pair();
    let (agent, agent_io) =
        crate::v2::AgentSideConnection::new(far, crate::ConnectionOptions::default(), make_agent);
    let (engine, run) = crate::engine::Engine::new(crate::ConnectionOptions::default());
    let up: ClientSideConnection = Connection::from_engine(engine);
    let shared = Arc::new(Shared::default());
    let handler = crate::v2::ClientHandler::new(
        FromV2Agent {
            down: down.clone(),
            shared: shared.clone(),
        },
        up.clone(),
    );
    let up_io = run.run(near, Arc::new(handler));
    tokio::spawn(agent_io);
    tokio::spawn(up_io);
    let (closer, watched) = (up.clone(), down.clone());
    tokio::spawn(async move {
        watched.closed().await;
        closer.close();
        agent.close();
    });
    V1Adapter { up, down, shared }
}

impl V1Adapter {
    fn remember(&self, session: &SessionId, options: &[v2::SessionConfigOption]) {
        lock(&self.shared.updates).set_config(session, options.to_vec());
    }

    /// Sends the session's commands, as v1 has them, after the response.
    fn commands_after(
        &self,
        cx: &RequestContext<v1::AgentSide>,
        session: &SessionId,
        commands: Vec<v2::AvailableCommand>,
    ) {
        if commands.is_empty() {
            return;
        }
        let updates = lock(&self.shared.updates).translate(
            session,
            v2::SessionUpdate::AvailableCommandsUpdate(v2::AvailableCommandsUpdate::new(commands)),
        );
        let (down, session) = (self.down.clone(), session.clone());
        cx.after_response(async move {
            for u in updates {
                let _ = down
                    .session_notification(v1::SessionNotification::new(session.clone(), u))
                    .await;
            }
        });
    }
}

/// Forgets a waiting prompt however the v1 prompt ends; if its future is
/// dropped (the client's `$/cancel_request`), cancels the v2 work too.
struct PromptGuard {
    shared: Arc<Shared>,
    up: ClientSideConnection,
    session: SessionId,
    done: bool,
}

impl Drop for PromptGuard {
    fn drop(&mut self) {
        lock(&self.shared.prompts).remove(&self.session);
        if !self.done {
            let (up, session) = (self.up.clone(), self.session.clone());
            tokio::spawn(async move {
                let _ = up.cancel(v2::CancelSessionNotification::new(session)).await;
            });
        }
    }
}

impl crate::Agent for V1Adapter {
    async fn initialize(
        &self,
        req: v1::InitializeRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::InitializeResponse, Error> {
        if let Some(init) = self.shared.init.get() {
            return Ok(initialize_response_to_v1(init.clone()));
        }
        let init = self.up.initialize(initialize_request_to_v2(req)).await?;
        let _ = self.shared.init.set(init.clone());
        Ok(initialize_response_to_v1(init))
    }

    async fn authenticate(
        &self,
        req: v1::AuthenticateRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::AuthenticateResponse, Error> {
        let mut v2req = v2::LoginAuthRequest::new(req.method_id);
        v2req.meta = req.meta;
        let r = self.up.login(v2req).await?;
        let mut out = v1::AuthenticateResponse::new();
        out.meta = r.meta;
        Ok(out)
    }

    async fn logout(
        &self,
        _: v1::LogoutRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::LogoutResponse, Error> {
        let r = self.up.logout(v2::LogoutAuthRequest::new()).await?;
        let mut out = v1::LogoutResponse::new();
        out.meta = r.meta;
        Ok(out)
    }

    async fn new_session(
        &self,
        req: v1::NewSessionRequest,
        cx: RequestContext<v1::AgentSide>,
    ) -> Result<v1::NewSessionResponse, Error> {
        let r = self.up.new_session(new_session_to_v2(req)).await?;
        self.remember(&r.session_id, &r.config_options);
        self.commands_after(&cx, &r.session_id, r.available_commands);
        let mut out = v1::NewSessionResponse::new(r.session_id);
        out.modes = modes_to_v1(&r.config_options);
        out.config_options = (!r.config_options.is_empty()).then(|| {
            r.config_options
                .into_iter()
                .map(config_option_to_v1)
                .collect()
        });
        out.meta = r.meta;
        Ok(out)
    }

    async fn load_session(
        &self,
        req: v1::LoadSessionRequest,
        cx: RequestContext<v1::AgentSide>,
    ) -> Result<v1::LoadSessionResponse, Error> {
        let env = new_session_to_v2(
            v1::NewSessionRequest::new(req.cwd.clone()).mcp_servers(req.mcp_servers.clone()),
        );
        let mut v2req = v2::ResumeSessionRequest::new(req.session_id.clone(), req.cwd)
            .additional_directories(req.additional_directories.unwrap_or_default())
            .mcp_servers(env.mcp_servers)
            .replay_from(v2::ReplayFrom::start());
        v2req.meta = req.meta;
        let r = self.up.resume_session(v2req).await?;
        self.remember(&req.session_id, &r.config_options);
        self.commands_after(&cx, &req.session_id, r.available_commands);
        let mut out = v1::LoadSessionResponse::new();
        out.modes = modes_to_v1(&r.config_options);
        out.config_options = (!r.config_options.is_empty()).then(|| {
            r.config_options
                .into_iter()
                .map(config_option_to_v1)
                .collect()
        });
        out.meta = r.meta;
        Ok(out)
    }

    async fn resume_session(
        &self,
        req: v1::ResumeSessionRequest,
        cx: RequestContext<v1::AgentSide>,
    ) -> Result<v1::ResumeSessionResponse, Error> {
        let env = new_session_to_v2(
            v1::NewSessionRequest::new(req.cwd.clone())
                .mcp_servers(req.mcp_servers.clone().unwrap_or_default()),
        );
        let mut v2req = v2::ResumeSessionRequest::new(req.session_id.clone(), req.cwd)
            .additional_directories(req.additional_directories.unwrap_or_default())
            .mcp_servers(env.mcp_servers);
        v2req.meta = req.meta;
        let r = self.up.resume_session(v2req).await?;
        self.remember(&req.session_id, &r.config_options);
        self.commands_after(&cx, &req.session_id, r.available_commands);
        let mut out = v1::ResumeSessionResponse::new();
        out.modes = modes_to_v1(&r.config_options);
        out.config_options = (!r.config_options.is_empty()).then(|| {
            r.config_options
                .into_iter()
                .map(config_option_to_v1)
                .collect()
        });
        out.meta = r.meta;
        Ok(out)
    }

    async fn list_sessions(
        &self,
        req: v1::ListSessionsRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::ListSessionsResponse, Error> {
        let mut v2req = v2::ListSessionsRequest::new();
        v2req.cwd = req.cwd;
        v2req.cursor = req.cursor;
        v2req.meta = req.meta;
        let r = self.up.list_sessions(v2req).await?;
        let mut out = v1::ListSessionsResponse::new(
            r.sessions
                .into_iter()
                .map(session_info_to_v1)
                .collect::<Vec<_>>(),
        );
        out.next_cursor = r.next_cursor;
        out.meta = r.meta;
        Ok(out)
    }

    async fn delete_session(
        &self,
        req: v1::DeleteSessionRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::DeleteSessionResponse, Error> {
        lock(&self.shared.updates).forget(&req.session_id);
        Ok(self.up.delete_session(req.into()).await?)
    }

    async fn close_session(
        &self,
        req: v1::CloseSessionRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::CloseSessionResponse, Error> {
        lock(&self.shared.updates).forget(&req.session_id);
        Ok(self.up.close_session(req.into()).await?)
    }

    async fn set_session_mode(
        &self,
        req: v1::SetSessionModeRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::SetSessionModeResponse, Error> {
        let Some(option) = lock(&self.shared.updates).mode_option(&req.session_id) else {
            return Err(Error::method_not_found().data(
                "the agent speaks protocol version 2 and offers no config option of category `mode`",
            ));
        };
        let r = self
            .up
            .set_session_config_option(v2::SetSessionConfigOptionRequest::new(
                req.session_id.clone(),
                option,
                req.mode_id.as_str(),
            ))
            .await?;
        self.remember(&req.session_id, &r.config_options);
        Ok(v1::SetSessionModeResponse::new())
    }

    async fn set_session_config_option(
        &self,
        req: v1::SetSessionConfigOptionRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::SetSessionConfigOptionResponse, Error> {
        let value = match req.value {
            v1::SessionConfigValue::ValueId(id) => v2::SessionConfigValue::from(id),
            v1::SessionConfigValue::Boolean(b) => v2::SessionConfigValue::from(b),
            _ => return Err(Error::invalid_params().data("a config value of an unknown type")),
        };
        let mut v2req =
            v2::SetSessionConfigOptionRequest::new(req.session_id.clone(), req.config_id, value);
        v2req.meta = req.meta;
        let r = self.up.set_session_config_option(v2req).await?;
        self.remember(&req.session_id, &r.config_options);
        let mut out = v1::SetSessionConfigOptionResponse::new(
            r.config_options
                .into_iter()
                .map(config_option_to_v1)
                .collect::<Vec<_>>(),
        );
        out.meta = r.meta;
        Ok(out)
    }

    async fn prompt(
        &self,
        req: v1::PromptRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::PromptResponse, Error> {
        let session = req.session_id.clone();
        let (tx, rx) = oneshot::channel();
        // Waiting before the prompt goes out: the idle may come before the
        // acknowledgement.
        lock(&self.shared.prompts).insert(session.clone(), tx);
        let mut guard = PromptGuard {
            shared: self.shared.clone(),
            up: self.up.clone(),
            session,
            done: false,
        };
        let acked = self.up.prompt(prompt_to_v2(req)).await;
        if let Err(e) = acked {
            guard.done = true;
            return Err(e.into());
        }
        let stop = rx.await;
        guard.done = true;
        match stop {
            Ok(Some(v2::StopReason::Error(e))) => Err(e.error.unwrap_or_else(|| {
                Error::internal_error().data("the agent ended the turn with an error")
            })),
            Ok(Some(reason)) => Ok(v1::PromptResponse::new(v1::StopReason::from(
                reason.as_str(),
            ))),
            Ok(None) => Ok(v1::PromptResponse::new(v1::StopReason::EndTurn)),
            Err(_) => {
                Err(Error::internal_error().data("the agent went away before the turn ended"))
            }
        }
    }

    async fn cancel(
        &self,
        n: v1::CancelNotification,
        _: NotificationContext<v1::AgentSide>,
    ) -> Result<(), Error> {
        let mut v2n = v2::CancelSessionNotification::new(n.session_id);
        v2n.meta = n.meta;
        Ok(self.up.cancel(v2n).await?)
    }

    async fn ext_method(
        &self,
        req: v1::ExtRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::ExtResponse, Error> {
        Ok(self.up.ext_method(req).await?)
    }

    async fn ext_notification(
        &self,
        n: v1::ExtNotification,
        _: NotificationContext<v1::AgentSide>,
    ) -> Result<(), Error> {
        Ok(self.up.ext_notification(n).await?)
    }
}

impl crate::v2::Client for FromV2Agent {
    async fn request_permission(
        &self,
        req: v2::RequestPermissionRequest,
        _: RequestContext<v2::ClientSide>,
    ) -> Result<v2::RequestPermissionResponse, Error> {
        let n = self.shared.permissions.fetch_add(1, Ordering::Relaxed) + 1;
        let fallback = ToolCallId::new(format!("bridge-permission-{n}"));
        let r = self
            .down
            .request_permission(permission_request_to_v1(req, fallback))
            .await?;
        Ok(permission_response_to_v2(r))
    }

    async fn create_elicitation(
        &self,
        req: v2::CreateElicitationRequest,
        _: RequestContext<v2::ClientSide>,
    ) -> Result<v2::CreateElicitationResponse, Error> {
        let r = self.down.create_elicitation(elicitation_to_v1(req)).await?;
        Ok(elicitation_response_to_v2(r))
    }

    async fn session_update(
        &self,
        n: v2::UpdateSessionNotification,
        _: NotificationContext<v2::ClientSide>,
    ) -> Result<(), Error> {
        let session = n.session_id.clone();
        let waiting = lock(&self.shared.prompts).contains_key(&session);
        match &n.update {
            v2::SessionUpdate::StateUpdate(v2::StateUpdate::Idle(idle)) => {
                if let Some(tx) = lock(&self.shared.prompts).remove(&session) {
                    let _ = tx.send(idle.stop_reason.clone());
                }
                return Ok(());
            }
            // The acknowledgement of the client's own prompt: it has it.
            v2::SessionUpdate::UserMessage(_) | v2::SessionUpdate::UserMessageChunk(_)
                if waiting =>
            {
                return Ok(());
            }
            _ => {}
        }
        let updates = lock(&self.shared.updates).translate(&session, n.update);
        for update in updates {
            let mut out = v1::SessionNotification::new(session.clone(), update);
            out.meta = n.meta.clone();
            self.down.session_notification(out).await?;
        }
        Ok(())
    }

    async fn complete_elicitation(
        &self,
        n: v2::CompleteElicitationNotification,
        _: NotificationContext<v2::ClientSide>,
    ) -> Result<(), Error> {
        Ok(self.down.complete_elicitation(n.0).await?)
    }

    async fn ext_method(
        &self,
        req: v2::ExtRequest,
        _: RequestContext<v2::ClientSide>,
    ) -> Result<v2::ExtResponse, Error> {
        Ok(self.down.ext_method(req).await?)
    }

    async fn ext_notification(
        &self,
        n: v2::ExtNotification,
        _: NotificationContext<v2::ClientSide>,
    ) -> Result<(), Error> {
        Ok(self.down.ext_notification(n).await?)
    }
}
