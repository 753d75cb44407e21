//! The ACP agent: [`CodingAgent`] implements [`acp::Agent`].
//!
//! The methods of the trait are short and hand over to the module that does
//! the work:
//!
//! - `sessions`: creating, loading, resuming, listing, closing and deleting
//!   sessions, and the journal of updates kept for replay;
//! - `settings`: modes, the model (offered both as `models` and as a config
//!   option) and config options;
//! - `turn`: the prompt turn loop that alternates model calls and tool calls,
//!   storing each message as it completes;
//! - `model_call`: one model call, streamed to the client, with retries;
//! - `context`: the system prompt (project instructions, environment, git);
//! - `compaction`: `/compact`, and summarising older turns automatically
//!   when the context fills up;
//! - `tool_calls`, `permissions` and `scope`: running one tool call, with its
//!   reporting and the user's permission, and what an "always" answer covers;
//! - `commands`: the slash commands and their announcement;
//! - `auth`: the authentication methods offered and `authenticate`;
//! - `v2`: [`CodingAgentV2`], the same agent for a v2 client (see
//!   [`crate::output`] for how its output is rendered).

mod auth;
mod commands;
mod compaction;
mod context;
mod model_call;
mod permissions;
mod scope;
mod sessions;
mod settings;
mod tool_calls;
mod turn;
mod v2;

pub use auth::AUTH_METHOD_ID;
pub use settings::Mode;
pub use v2::CodingAgentV2;

use crate::config::Config;
use crate::llm::{LlmClient, Message};
use crate::mcp::McpServers;
use crate::output::Output;
use crate::store::{Store, StoreError};
use acp::schema::*;
use acp::{Agent, CancellationToken, RequestContext};
use serde_json::json;
use settings::Settings;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An open session.
struct Session {
    cwd: PathBuf,
    /// More workspace roots the client named.
    additional_dirs: Vec<PathBuf>,
    /// The agent's own files and terminals in `cwd` (when the client
    /// offers none).
    local: Arc<crate::tools::Local>,
    settings: Mutex<Settings>,
    /// Updates of the running turn, to be stored for replay.
    journal: Mutex<Vec<SessionUpdate>>,
    /// The title, once the first prompt gave one.
    title: Mutex<Option<String>>,
    /// The session's MCP servers.
    mcp: McpServers,
    /// MCP connection failures not yet shown to the user.
    mcp_errors: Mutex<Vec<String>>,
    /// The conversation; locked for the whole of a turn.
    history: tokio::sync::Mutex<Conversation>,
    /// What the model calls cost so far, in US dollars, when the provider
    /// reports costs (carried over from the last stored `usage_update` when
    /// the session is opened from the store).
    cost: Mutex<Option<f64>>,
    /// The last `usage_update` (context used and size, cost), sent again
    /// when the session is loaded or resumed so that the client shows it
    /// before the next prompt.
    usage: Mutex<Option<UsageUpdate>>,
    /// Tokens read and written by the running turn's model calls, when the
    /// provider reported them (the `usage` of the prompt result).
    turn_usage: Mutex<Option<TurnUsage>>,
    /// The cancellation of the running turn, from its request's context, so
    /// that closing or deleting the session stops it.
    turn: Mutex<Option<CancellationToken>>,
    /// What the system prompt says about the machine and the project
    /// (gathered at the session's first turn).
    environment: tokio::sync::OnceCell<String>,
}

/// A session's conversation with the model, as this process holds it.
struct Conversation {
    /// The messages the model is sent (after the system prompt).
    messages: Vec<Message>,
    /// The store's write count of the session when this process last wrote
    /// or read it.
    version: i64,
    /// Whether another process wrote to the session since: the conversation
    /// is read again from the store before the next turn.
    stale: bool,
    /// How many tokens the conversation took at the last model call.
    context_tokens: Option<u64>,
}

/// Tokens a turn's model calls read and wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct TurnUsage {
    input: u64,
    output: u64,
}

impl Session {
    /// Adds the tokens of one model call to the running turn's.
    fn add_turn_usage(&self, (input, output): (u64, u64)) {
        let mut usage = lock(&self.turn_usage);
        let u = usage.get_or_insert_with(TurnUsage::default);
        u.input = u.input.saturating_add(input);
        u.output = u.output.saturating_add(output);
    }

    /// Adds the cost of one model call, if reported; the session's total so
    /// far, if any call reported one.
    fn add_cost(&self, cost: Option<f64>) -> Option<f64> {
        let mut total = lock(&self.cost);
        if let Some(c) = cost.filter(|c| c.is_finite() && *c >= 0.0) {
            *total = Some(total.unwrap_or(0.0) + c);
        }
        *total
    }
}

/// The coding agent: implements [`acp::Agent`].
pub struct CodingAgent {
    /// Where session output goes: the client, in its protocol version.
    out: Output,
    config: Arc<Config>,
    llm: LlmClient,
    client_caps: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<SessionId, Arc<Session>>>,
    counter: AtomicU64,
    store: Store,
    /// The client's over-long lines, which tools waiting for an answer
    /// watch.
    dropped: crate::tools::DroppedAnswers,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `invalid_params` with a message for the user.
fn invalid_params(message: impl Into<String>) -> Error {
    Error::invalid_params().data(json!({"message": message.into()}))
}

/// `resource_not_found` naming the session.
fn session_not_found(id: &SessionId) -> Error {
    Error::resource_not_found(None).data(json!({"sessionId": id.as_str()}))
}

/// `internal_error` carrying a failure.
fn internal(e: impl std::fmt::Display) -> Error {
    Error::internal_error().data(json!(e.to_string()))
}

/// A store failure as the client sees it (see [`StoreError::to_rpc`]).
fn store_error(e: StoreError) -> Error {
    e.to_rpc()
}

impl CodingAgent {
    /// An agent that shows its sessions through `out` and keeps them in
    /// `store`.
    pub(crate) fn new(
        out: Output,
        config: Config,
        store: Store,
        dropped: crate::tools::DroppedAnswers,
    ) -> Self {
        let llm = LlmClient::new(
            Duration::from_secs(config.request_timeout_secs),
            config.max_output_tokens,
        )
        .thinking_budget(config.thinking_budget);
        CodingAgent {
            out,
            config: Arc::new(config),
            llm,
            client_caps: Mutex::new(ClientCapabilities::default()),
            sessions: Mutex::new(HashMap::new()),
            counter: AtomicU64::new(0),
            store,
            dropped,
        }
    }

    /// The open session `id`.
    fn session(&self, id: &SessionId) -> Result<Arc<Session>, Error> {
        lock(&self.sessions)
            .get(id)
            .cloned()
            .ok_or_else(|| session_not_found(id))
    }

    /// A number unique in this process, for session and tool call ids.
    fn next_number(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends `update` to the client without recording it for replay.
    async fn send(&self, session_id: &SessionId, update: impl Into<SessionUpdate>) {
        // A failed notification means the client went away; the turn will
        // notice when its next request fails.
        let _ = self.out.update(session_id, update.into()).await;
    }

    /// Sends `update` to the client, recording it in the session's journal
    /// when it belongs in the replayed history.
    async fn notify(&self, session_id: &SessionId, update: impl Into<SessionUpdate>) {
        let update = update.into();
        let session = lock(&self.sessions).get(session_id).cloned();
        if let Some(session) = session {
            sessions::journal(&mut lock(&session.journal), &update);
        }
        self.send(session_id, update).await;
    }

    /// Tells the user why the turn stopped early.
    async fn report_error(&self, session_id: &SessionId, message: &str) {
        self.notify(
            session_id,
            SessionUpdate::agent_message(format!("\n\n⚠️ The turn stopped: {message}")),
        )
        .await;
    }
}

impl Agent for CodingAgent {
    async fn initialize(
        &self,
        args: InitializeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<InitializeResponse, Error> {
        *lock(&self.client_caps) = args.client_capabilities;
        let version = if args.protocol_version < ProtocolVersion::LATEST {
            args.protocol_version
        } else {
            ProtocolVersion::LATEST
        };
        let images = self
            .config
            .model
            .as_ref()
            .is_ok_and(|m| self.config.accepts_images(m));
        Ok(InitializeResponse::new(version)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(true)
                    .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
                    .prompt_capabilities(
                        PromptCapabilities::new()
                            .embedded_context(true)
                            .image(images),
                    )
                    .session_capabilities(
                        SessionCapabilities::new()
                            .additional_directories(SessionAdditionalDirectoriesCapabilities::new())
                            .list(SessionListCapabilities::new())
                            .resume(SessionResumeCapabilities::new())
                            .close(SessionCloseCapabilities::new())
                            .delete(SessionDeleteCapabilities::new()),
                    ),
            )
            .auth_methods(auth::methods())
            .agent_info(
                Implementation::new("acp-agent", env!("CARGO_PKG_VERSION")).title("ACP Agent"),
            ))
    }

    async fn authenticate(
        &self,
        args: AuthenticateRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<AuthenticateResponse, Error> {
        self.check_auth(&args.method_id)
    }

    async fn new_session(
        &self,
        args: NewSessionRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        // The runtime runs a handler's first step on the connection's reader.
        // Everything of a new session (its settings, the store, its local
        // host) goes on in the request's own task instead, so a burst of
        // `session/new` costs the reader only their decoding and a prompt or
        // a cancel behind them is read at once.
        tokio::task::yield_now().await;
        let created = self.create_session(args).await?;
        self.announce_commands_after_response(&created.session_id, &cx);
        Ok(created)
    }

    async fn load_session(
        &self,
        args: LoadSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<LoadSessionResponse, Error> {
        self.load_stored_session(args).await
    }

    async fn resume_session(
        &self,
        args: ResumeSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ResumeSessionResponse, Error> {
        self.resume_stored_session(args).await
    }

    async fn list_sessions(
        &self,
        args: ListSessionsRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ListSessionsResponse, Error> {
        self.list_stored_sessions(args).await
    }

    async fn close_session(
        &self,
        args: CloseSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<CloseSessionResponse, Error> {
        self.close_open_session(args).await
    }

    async fn delete_session(
        &self,
        args: DeleteSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<DeleteSessionResponse, Error> {
        self.delete_stored_session(args).await
    }

    async fn set_session_mode(
        &self,
        args: SetSessionModeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<SetSessionModeResponse, Error> {
        self.change_mode(args).await
    }

    async fn set_session_model(
        &self,
        args: SetSessionModelRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<SetSessionModelResponse, Error> {
        self.change_model(args).await
    }

    async fn set_session_config_option(
        &self,
        args: SetSessionConfigOptionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        self.change_config_option(args).await
    }

    async fn prompt(
        &self,
        args: PromptRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        self.run_prompt(args, cx.cancellation()).await
    }
}
