//! The agent for a v2 client: [`CodingAgentV2`] implements
//! [`acp::v2::Agent`] with a [`CodingAgent`], on the same sessions, turn and
//! tools as v1 (its output rendered for v2 by [`crate::output::v2`]).
//!
//! What v2 changes here:
//!
//! - `session/prompt` answers at once with the id of the user message, which
//!   the agent sends first (`user_message` with that id, before the
//!   answer); the turn then runs after the answer: `state_update` `running`,
//!   the turn's output, and `idle` with the stop reason (`cancelled` after
//!   `session/cancel` or `session/close`; `error` carrying the JSON-RPC error
//!   a v1 prompt would have answered with). A turn's token use is in the
//!   idle update's `_meta.usage`.
//! - `session/resume` with `replayFrom` is v1's `session/load` (the history
//!   replayed first), without it v1's `session/resume`.
//! - The mode is a config option only (v2 has no session modes); the model
//!   too, as on v1.
//! - `auth/login` is v1's `authenticate`; `auth/logout` has nothing to end
//!   (the keys are the agent's configuration) and succeeds.
//! - The client lends no file system or terminals: the tools use the
//!   agent's own (`acp-host`) under the same permission rules.

use super::{CodingAgent, auth, invalid_params};
use crate::output::Output;
use crate::output::v2::Sink;
use acp::RequestContext;
use acp::map;
use acp::schema::{self as v1, v2};
use serde_json::{Value, json};
use std::sync::Arc;

/// The commands every session offers, as v2 lists them.
fn commands() -> Vec<v2::AvailableCommand> {
    super::commands::available_commands()
        .available_commands
        .into_iter()
        .map(map::command_to_v2)
        .collect()
}

/// A session's config options as v2 lists them.
fn config_options_to_v2(options: &[v1::SessionConfigOption]) -> Vec<v2::SessionConfigOption> {
    options
        .iter()
        .cloned()
        .map(map::config_option_to_v2)
        .collect()
}

/// The coding agent for a v2 client: implements [`acp::v2::Agent`].
pub struct CodingAgentV2 {
    agent: Arc<CodingAgent>,
    /// The agent's output (its `Output::V2`).
    sink: Arc<Sink>,
}

impl CodingAgentV2 {
    /// The agent for the client of `conn`.
    pub(crate) fn new(
        conn: acp::v2::AgentSideConnection,
        config: crate::config::Config,
        store: crate::store::Store,
        dropped: crate::tools::DroppedAnswers,
    ) -> Self {
        let sink = Arc::new(Sink::new(conn));
        let out = Output::V2(sink.clone());
        CodingAgentV2 {
            agent: Arc::new(CodingAgent::new(out, config, store, dropped)),
            sink,
        }
    }
}

impl acp::v2::Agent for CodingAgentV2 {
    async fn initialize(
        &self,
        _args: v2::InitializeRequest,
        _cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::InitializeResponse, v1::Error> {
        let images = self
            .agent
            .config
            .model
            .as_ref()
            .is_ok_and(|m| self.agent.config.accepts_images(m));
        let mut prompt = v2::PromptCapabilities::new()
            .embedded_context(v2::PromptEmbeddedContextCapabilities::new());
        if images {
            prompt = prompt.image(v2::PromptImageCapabilities::new());
        }
        let session = v2::SessionCapabilities::new()
            .prompt(prompt)
            .mcp(
                v2::McpCapabilities::new()
                    .stdio(v2::McpStdioCapabilities::new())
                    .http(v2::McpHttpCapabilities::new()),
            )
            .delete(v2::SessionDeleteCapabilities::new())
            .additional_directories(v2::SessionAdditionalDirectoriesCapabilities::new());
        let methods: Vec<v2::AuthMethod> = auth::methods()
            .into_iter()
            .map(map::auth_method_to_v2)
            .collect();
        Ok(v2::InitializeResponse::new(
            v1::Implementation::new("acp-agent", env!("CARGO_PKG_VERSION")).title("ACP Agent"),
        )
        .capabilities(v2::AgentCapabilities::new().session(session))
        .auth_methods(methods))
    }

    async fn login(
        &self,
        args: v2::LoginAuthRequest,
        _cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::LoginAuthResponse, v1::Error> {
        self.agent.check_auth(&args.method_id)?;
        Ok(v2::LoginAuthResponse::new())
    }

    async fn logout(
        &self,
        _args: v2::LogoutAuthRequest,
        _cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::LogoutAuthResponse, v1::Error> {
        Ok(v2::LogoutAuthResponse::new())
    }

    async fn new_session(
        &self,
        args: v2::NewSessionRequest,
        _cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::NewSessionResponse, v1::Error> {
        // As on v1: the session's work goes on in the request's own task.
        tokio::task::yield_now().await;
        let created = self
            .agent
            .create_session(map::new_session_to_v1(args))
            .await?;
        Ok(v2::NewSessionResponse::new(created.session_id)
            .config_options(config_options_to_v2(
                created.config_options.as_deref().unwrap_or_default(),
            ))
            .available_commands(commands()))
    }

    async fn list_sessions(
        &self,
        args: v2::ListSessionsRequest,
        _cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::ListSessionsResponse, v1::Error> {
        let mut req = v1::ListSessionsRequest::new();
        req.cwd = args.cwd.clone();
        req.cursor = args.cursor.clone();
        let listed = self.agent.list_stored_sessions(req).await?;
        let sessions = listed
            .sessions
            .into_iter()
            .map(map::session_info_to_v2)
            .collect();
        let mut out = v2::ListSessionsResponse::new(sessions);
        out.next_cursor = listed.next_cursor;
        Ok(out)
    }

    async fn resume_session(
        &self,
        args: v2::ResumeSessionRequest,
        _cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::ResumeSessionResponse, v1::Error> {
        let servers: Vec<v1::McpServer> = args
            .mcp_servers
            .iter()
            .cloned()
            .map(map::mcp_server_to_v1)
            .collect();
        let dirs =
            (!args.additional_directories.is_empty()).then(|| args.additional_directories.clone());
        self.sink.forget(&args.session_id);
        let options = if let Some(from) = &args.replay_from {
            if !matches!(from, v2::ReplayFrom::Start(_)) {
                let raw = serde_json::to_value(from).unwrap_or_default();
                return Err(invalid_params(format!("cannot replay from {raw}")));
            }
            let mut req = v1::LoadSessionRequest::new(args.session_id.clone(), args.cwd.clone())
                .mcp_servers(servers);
            req.additional_directories = dirs;
            self.sink.begin_replay(&args.session_id);
            let loaded = self.agent.load_stored_session(req).await;
            let _ = self.sink.end_replay(&args.session_id).await;
            loaded?.config_options
        } else {
            let mut req = v1::ResumeSessionRequest::new(args.session_id.clone(), args.cwd.clone())
                .mcp_servers(servers);
            req.additional_directories = dirs;
            self.agent.resume_stored_session(req).await?.config_options
        };
        // The session's state, after the replay and before the answer.
        let running = self
            .agent
            .session(&args.session_id)
            .is_ok_and(|s| s.history.try_lock().is_err());
        let state = if running {
            v2::StateUpdate::running()
        } else {
            v2::StateUpdate::Idle(v2::IdleStateUpdate::new())
        };
        let _ = self
            .sink
            .send(&args.session_id, v2::SessionUpdate::StateUpdate(state))
            .await;
        Ok(v2::ResumeSessionResponse::new()
            .config_options(config_options_to_v2(options.as_deref().unwrap_or_default()))
            .available_commands(commands()))
    }

    async fn close_session(
        &self,
        args: v2::CloseSessionRequest,
        _cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::CloseSessionResponse, v1::Error> {
        self.sink.forget(&args.session_id);
        self.agent
            .close_open_session(v1::CloseSessionRequest::new(args.session_id.clone()))
            .await?;
        Ok(v2::CloseSessionResponse::new())
    }

    async fn delete_session(
        &self,
        args: v2::DeleteSessionRequest,
        _cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::DeleteSessionResponse, v1::Error> {
        self.sink.forget(&args.session_id);
        self.agent
            .delete_stored_session(v1::DeleteSessionRequest::new(args.session_id.clone()))
            .await?;
        Ok(v2::DeleteSessionResponse::new())
    }

    async fn set_session_config_option(
        &self,
        args: v2::SetSessionConfigOptionRequest,
        _cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::SetSessionConfigOptionResponse, v1::Error> {
        let value: v1::SessionConfigValue = match &args.value {
            v2::SessionConfigValue::Id(id) => id.value.clone().into(),
            v2::SessionConfigValue::Boolean(b) => b.value.into(),
            other => {
                let raw: Value = serde_json::to_value(other).unwrap_or_default();
                return Err(invalid_params(format!(
                    "unknown kind of config value: {raw}"
                )));
            }
        };
        let req = v1::SetSessionConfigOptionRequest::new(
            args.session_id.clone(),
            args.config_id.clone(),
            value,
        );
        let changed = self.agent.change_config_option(req).await?;
        Ok(v2::SetSessionConfigOptionResponse::new(
            config_options_to_v2(&changed.config_options),
        ))
    }

    async fn prompt(
        &self,
        args: v2::PromptRequest,
        cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::PromptResponse, v1::Error> {
        let sink = self.sink.clone();
        let sid = args.session_id.clone();
        let session = self.agent.session(&sid)?;
        if session.history.try_lock().is_err() {
            return Err(v1::Error::invalid_request()
                .data(json!({"message": "a prompt turn is already running in this session"})));
        }
        let message_id = sink.new_message_id();
        let blocks: Vec<v1::ContentBlock> =
            args.prompt.iter().cloned().map(map::block_to_v1).collect();
        sink.end_message(&sid);
        let _ = sink
            .send(
                &sid,
                v2::SessionUpdate::user_message(message_id.clone(), args.prompt),
            )
            .await;
        let agent = self.agent.clone();
        let turn = cx.clone();
        cx.after_response(async move {
            let _ = sink.send(&sid, v2::SessionUpdate::running()).await;
            let result = agent
                .run_prompt(
                    v1::PromptRequest::new(sid.clone(), blocks),
                    turn.cancellation(),
                )
                .await;
            sink.end_message(&sid);
            let idle = match result {
                Ok(response) => {
                    let mut idle = v2::IdleStateUpdate::new()
                        .stop_reason(map::stop_reason_to_v2(response.stop_reason));
                    if let Some(meta) = response.meta {
                        idle = idle.meta(meta);
                    }
                    idle
                }
                Err(e) => v2::IdleStateUpdate::new().stop_reason(v2::StopReason::error(e)),
            };
            let _ = sink
                .send(
                    &sid,
                    v2::SessionUpdate::StateUpdate(v2::StateUpdate::Idle(idle)),
                )
                .await;
        });
        Ok(v2::PromptResponse::new(message_id))
    }
}
