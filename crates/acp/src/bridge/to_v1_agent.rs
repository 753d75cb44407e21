//! A v2 client in front of a v1 agent: the bridge is a v2 agent to the client
//! ([`ToV1Agent`]) and a v1 client to the agent ([`FromV1Agent`]).

use crate::connection::{ClientSideConnection, NotificationContext, RequestContext};
use crate::error::ConnectionError;
use crate::map::permission::{
    elicitation_to_v2, permission_request_to_v2, permission_response_to_v1,
};
use crate::map::session::{
    MODE_OPTION, initialize_response_to_v2, new_session_to_v1, prompt_to_v1, session_info_to_v2,
    stop_reason_to_v2,
};
use crate::map::update::UpdatesToV2;
use crate::v2::AgentSideConnection;
use acp_schema::{self as v1, Error, SessionId, v2};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// What both halves share.
#[derive(Default)]
pub(crate) struct Shared {
    /// The agent's `initialize` result, as v1 gave it.
    init: OnceLock<v1::InitializeResponse>,
    updates: Mutex<UpdatesToV2>,
    /// Sessions whose updates are not shown (a `session/load` standing in for
    /// a resume without replay).
    muted: Mutex<HashSet<SessionId>>,
    turns: AtomicU64,
}

impl Shared {
    /// The agent's answer to an `initialize` the bridge sent for the client.
    pub(crate) fn initialized(init: v1::InitializeResponse) -> Arc<Self> {
        let shared = Shared::default();
        let _ = shared.init.set(init);
        Arc::new(shared)
    }

    fn caps(&self) -> v1::AgentCapabilities {
        self.init
            .get()
            .map(|i| i.agent_capabilities.clone())
            .unwrap_or_default()
    }
}

/// The bridge as a v2 agent, in front of a v1 agent.
pub(crate) struct ToV1Agent {
    pub(crate) up: ClientSideConnection,
    pub(crate) down: AgentSideConnection,
    pub(crate) shared: Arc<Shared>,
}

/// The bridge as a v1 client, behind a v2 client.
pub(crate) struct FromV1Agent {
    pub(crate) down: AgentSideConnection,
    pub(crate) shared: Arc<Shared>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    crate::engine::lock(m)
}

/// -32601 for a v2 method the v1 agent has no form of.
fn no_v1_form(method: &str, why: &str) -> Error {
    Error::method_not_found().data(serde_json::json!({
        "method": method,
        "reason": format!("the agent speaks protocol version 1, which {why}"),
    }))
}

impl ToV1Agent {
    async fn send(
        &self,
        session: &SessionId,
        update: v2::SessionUpdate,
    ) -> Result<(), ConnectionError> {
        self.down
            .session_update(v2::UpdateSessionNotification::new(session.clone(), update))
            .await
    }

    fn remember(
        &self,
        session: &SessionId,
        options: Option<Vec<v1::SessionConfigOption>>,
        modes: Option<v1::SessionModeState>,
    ) {
        lock(&self.shared.updates).set_config(session, options.unwrap_or_default(), modes);
    }

    fn options(&self, session: &SessionId) -> Vec<v2::SessionConfigOption> {
        lock(&self.shared.updates).config_options(session)
    }
}

impl crate::v2::Agent for ToV1Agent {
    async fn initialize(
        &self,
        req: v2::InitializeRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::InitializeResponse, Error> {
        if let Some(init) = self.shared.init.get() {
            return Ok(initialize_response_to_v2(init.clone()));
        }
        let init = self
            .up
            .initialize(crate::map::initialize_request_to_v1(req))
            .await?;
        let _ = self.shared.init.set(init.clone());
        Ok(initialize_response_to_v2(init))
    }

    async fn login(
        &self,
        req: v2::LoginAuthRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::LoginAuthResponse, Error> {
        let mut v1req = v1::AuthenticateRequest::new(req.method_id);
        v1req.meta = req.meta;
        let r = self.up.authenticate(v1req).await?;
        let mut out = v2::LoginAuthResponse::new();
        out.meta = r.meta;
        Ok(out)
    }

    async fn logout(
        &self,
        _: v2::LogoutAuthRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::LogoutAuthResponse, Error> {
        let r = self.up.logout(v1::LogoutRequest::new()).await?;
        let mut out = v2::LogoutAuthResponse::new();
        out.meta = r.meta;
        Ok(out)
    }

    async fn new_session(
        &self,
        req: v2::NewSessionRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::NewSessionResponse, Error> {
        let r = self.up.new_session(new_session_to_v1(req)).await?;
        self.remember(&r.session_id, r.config_options, r.modes);
        let mut out = v2::NewSessionResponse::new(r.session_id.clone())
            .config_options(self.options(&r.session_id));
        out.meta = r.meta;
        Ok(out)
    }

    async fn list_sessions(
        &self,
        req: v2::ListSessionsRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::ListSessionsResponse, Error> {
        if self.shared.caps().session_capabilities.list.is_none() {
            // v2's baseline; a v1 agent without it lists nothing.
            return Ok(v2::ListSessionsResponse::new(Vec::new()));
        }
        let mut v1req = v1::ListSessionsRequest::new();
        v1req.cwd = req.cwd;
        v1req.cursor = req.cursor;
        v1req.meta = req.meta;
        let r = self.up.list_sessions(v1req).await?;
        let mut out =
            v2::ListSessionsResponse::new(r.sessions.into_iter().map(session_info_to_v2).collect());
        out.next_cursor = r.next_cursor;
        out.meta = r.meta;
        Ok(out)
    }

    async fn delete_session(
        &self,
        req: v2::DeleteSessionRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::DeleteSessionResponse, Error> {
        lock(&self.shared.updates).forget(&req.session_id);
        Ok(self.up.delete_session(req.0).await?)
    }

    async fn resume_session(
        &self,
        req: v2::ResumeSessionRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::ResumeSessionResponse, Error> {
        let caps = self.shared.caps();
        let session = req.session_id.clone();
        let env = new_session_to_v1(
            v2::NewSessionRequest::new(req.cwd.clone())
                .additional_directories(req.additional_directories.clone())
                .mcp_servers(req.mcp_servers.clone()),
        );
        let replay = req.replay_from.is_some();
        let (options, modes) = if !replay && caps.session_capabilities.resume.is_some() {
            let mut v1req = v1::ResumeSessionRequest::new(session.clone(), env.cwd);
            v1req.additional_directories = env.additional_directories;
            v1req.mcp_servers = Some(env.mcp_servers);
            v1req.meta = req.meta;
            let r = self.up.resume_session(v1req).await?;
            (r.config_options, r.modes)
        } else if caps.load_session {
            let mut v1req = v1::LoadSessionRequest::new(session.clone(), env.cwd);
            v1req.additional_directories = env.additional_directories;
            v1req.mcp_servers = env.mcp_servers;
            v1req.meta = req.meta;
            if !replay {
                lock(&self.shared.muted).insert(session.clone());
            }
            let r = self.up.load_session(v1req).await;
            lock(&self.shared.muted).remove(&session);
            let r = r?;
            (r.config_options, r.modes)
        } else {
            return Err(no_v1_form(
                "session/resume",
                "advertises neither `session/resume` nor `session/load`",
            ));
        };
        self.remember(&session, options, modes);
        // The current state before the answer, as v2 has it.
        self.send(
            &session,
            v2::SessionUpdate::StateUpdate(v2::StateUpdate::Idle(v2::IdleStateUpdate::new())),
        )
        .await?;
        Ok(v2::ResumeSessionResponse::new().config_options(self.options(&session)))
    }

    async fn close_session(
        &self,
        req: v2::CloseSessionRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::CloseSessionResponse, Error> {
        let session = req.session_id.clone();
        lock(&self.shared.updates).forget(&session);
        if self.shared.caps().session_capabilities.close.is_some() {
            return Ok(self.up.close_session(req.0).await?);
        }
        // v2's baseline; a v1 agent without it gets its work cancelled.
        self.up.cancel(v1::CancelNotification::new(session)).await?;
        Ok(v2::CloseSessionResponse::new())
    }

    async fn cancel_tool_call(
        &self,
        _: v2::CancelToolCallRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::CancelToolCallResponse, Error> {
        Err(no_v1_form(
            "tool_call/cancel",
            "cannot cancel one tool call",
        ))
    }

    async fn cancel_terminal(
        &self,
        _: v2::CancelTerminalRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::CancelTerminalResponse, Error> {
        Err(no_v1_form(
            "terminal/cancel",
            "has no agent-owned terminals",
        ))
    }

    async fn set_session_config_option(
        &self,
        req: v2::SetSessionConfigOptionRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::SetSessionConfigOptionResponse, Error> {
        let session = req.session_id.clone();
        let mode_option = lock(&self.shared.updates).has_mode_option(&session);
        if mode_option && req.config_id.as_str() == MODE_OPTION {
            let v2::SessionConfigValue::Id(value) = req.value else {
                return Err(Error::invalid_params().data("the mode option takes a value id"));
            };
            let mode = v1::SessionModeId::new(value.value.as_str());
            self.up
                .set_session_mode(v1::SetSessionModeRequest::new(
                    session.clone(),
                    mode.clone(),
                ))
                .await?;
            lock(&self.shared.updates).set_mode(&session, mode);
            return Ok(v2::SetSessionConfigOptionResponse::new(
                self.options(&session),
            ));
        }
        let value = match req.value {
            v2::SessionConfigValue::Id(v) => v1::SessionConfigValue::ValueId(v.value),
            v2::SessionConfigValue::Boolean(b) => v1::SessionConfigValue::Boolean(b.value),
            _ => {
                return Err(
                    Error::invalid_params().data("a config value of a type v1 does not have")
                );
            }
        };
        let mut v1req =
            v1::SetSessionConfigOptionRequest::new(session.clone(), req.config_id, value);
        v1req.meta = req.meta;
        let r = self.up.set_session_config_option(v1req).await?;
        {
            let mut updates = lock(&self.shared.updates);
            updates.translate(
                &session,
                v1::SessionUpdate::ConfigOptionUpdate(v1::ConfigOptionUpdate::new(
                    r.config_options,
                )),
            );
        }
        let mut out = v2::SetSessionConfigOptionResponse::new(self.options(&session));
        out.meta = r.meta;
        Ok(out)
    }

    async fn prompt(
        &self,
        req: v2::PromptRequest,
        cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::PromptResponse, Error> {
        let n = self.shared.turns.fetch_add(1, Ordering::Relaxed) + 1;
        let id = v2::MessageId::new(format!("bridge-user-{n}"));
        let (up, down, ack) = (self.up.clone(), self.down.clone(), id.clone());
        cx.after_response(async move {
            let session = req.session_id.clone();
            let send = |u: v2::SessionUpdate| {
                down.session_update(v2::UpdateSessionNotification::new(session.clone(), u))
            };
            if send(v2::SessionUpdate::user_message(id, req.prompt.clone()))
                .await
                .is_err()
                || send(v2::SessionUpdate::running()).await.is_err()
            {
                return;
            }
            let stop = match up.prompt(prompt_to_v1(req)).await {
                Ok(r) => stop_reason_to_v2(r.stop_reason),
                Err(ConnectionError::Remote(e)) => v2::StopReason::error(e),
                Err(e) => v2::StopReason::error(Error::internal_error().data(e.to_string())),
            };
            let _ = send(v2::SessionUpdate::idle(stop)).await;
        });
        Ok(v2::PromptResponse::new(ack))
    }

    async fn cancel(
        &self,
        n: v2::CancelSessionNotification,
        _: NotificationContext<v2::AgentSide>,
    ) -> Result<(), Error> {
        let mut v1n = v1::CancelNotification::new(n.session_id);
        v1n.meta = n.meta;
        Ok(self.up.cancel(v1n).await?)
    }

    async fn ext_method(
        &self,
        req: v2::ExtRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::ExtResponse, Error> {
        Ok(self.up.ext_method(req).await?)
    }

    async fn ext_notification(
        &self,
        n: v2::ExtNotification,
        _: NotificationContext<v2::AgentSide>,
    ) -> Result<(), Error> {
        Ok(self.up.ext_notification(n).await?)
    }
}

/// -32601 for a v1 client method a v2 client does not have.
fn refused(method: &str) -> Error {
    Error::method_not_found().data(serde_json::json!({
        "method": method,
        "reason": "the client speaks protocol version 2, which has no `fs/*` or `terminal/*` \
                   methods; the bridge told the agent so (no `fs` or `terminal` capability)",
    }))
}

impl crate::Client for FromV1Agent {
    async fn request_permission(
        &self,
        req: v1::RequestPermissionRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::RequestPermissionResponse, Error> {
        let session = req.session_id.clone();
        let send = |u: v2::SessionUpdate| {
            self.down
                .session_update(v2::UpdateSessionNotification::new(session.clone(), u))
        };
        send(v2::SessionUpdate::requires_action()).await?;
        let answer = self
            .down
            .request_permission(permission_request_to_v2(req))
            .await;
        send(v2::SessionUpdate::running()).await?;
        Ok(permission_response_to_v1(answer?))
    }

    async fn read_text_file(
        &self,
        _: v1::ReadTextFileRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::ReadTextFileResponse, Error> {
        Err(refused("fs/read_text_file"))
    }

    async fn write_text_file(
        &self,
        _: v1::WriteTextFileRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::WriteTextFileResponse, Error> {
        Err(refused("fs/write_text_file"))
    }

    async fn create_terminal(
        &self,
        _: v1::CreateTerminalRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::CreateTerminalResponse, Error> {
        Err(refused("terminal/create"))
    }

    async fn terminal_output(
        &self,
        _: v1::TerminalOutputRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::TerminalOutputResponse, Error> {
        Err(refused("terminal/output"))
    }

    async fn wait_for_terminal_exit(
        &self,
        _: v1::WaitForTerminalExitRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::WaitForTerminalExitResponse, Error> {
        Err(refused("terminal/wait_for_exit"))
    }

    async fn kill_terminal(
        &self,
        _: v1::KillTerminalRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::KillTerminalResponse, Error> {
        Err(refused("terminal/kill"))
    }

    async fn release_terminal(
        &self,
        _: v1::ReleaseTerminalRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::ReleaseTerminalResponse, Error> {
        Err(refused("terminal/release"))
    }

    async fn create_elicitation(
        &self,
        req: v1::CreateElicitationRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::CreateElicitationResponse, Error> {
        let r = self.down.create_elicitation(elicitation_to_v2(req)).await?;
        Ok(crate::map::permission::elicitation_response_to_v1(r))
    }

    async fn session_notification(
        &self,
        n: v1::SessionNotification,
        _: NotificationContext<v1::ClientSide>,
    ) -> Result<(), Error> {
        if lock(&self.shared.muted).contains(&n.session_id) {
            return Ok(());
        }
        let updates = lock(&self.shared.updates).translate(&n.session_id, n.update);
        for update in updates {
            let mut out = v2::UpdateSessionNotification::new(n.session_id.clone(), update);
            out.meta = n.meta.clone();
            self.down.session_update(out).await?;
        }
        Ok(())
    }

    async fn complete_elicitation(
        &self,
        n: v1::CompleteElicitationNotification,
        _: NotificationContext<v1::ClientSide>,
    ) -> Result<(), Error> {
        Ok(self.down.complete_elicitation(n.into()).await?)
    }

    async fn ext_method(
        &self,
        req: v1::ExtRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::ExtResponse, Error> {
        Ok(self.down.ext_method(req).await?)
    }

    async fn ext_notification(
        &self,
        n: v1::ExtNotification,
        _: NotificationContext<v1::ClientSide>,
    ) -> Result<(), Error> {
        Ok(self.down.ext_notification(n).await?)
    }
}
