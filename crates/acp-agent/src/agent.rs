//! The ACP agent: sessions, modes and config options, permissions, and the
//! prompt turn loop that alternates model calls and tool calls.

use crate::config::{Config, ModelRef, SETUP_HELP};
use crate::llm::{FinishReason, Image, LlmClient, Message, ModelEvent, ToolCallRequest};
use crate::store::{Store, StoredSession, now_ms, rfc3339};
use crate::mcp::{McpServers, McpToolInfo};
use crate::tools::{self, ToolEnv, ToolInput, ToolOutcome};
use acp::schema::*;
use acp::{Agent, AgentSideConnection, CancellationToken};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How much the agent may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Reads and searches only: no edits, no commands.
    ReadOnly,
    /// Asks before each edit or command (the default).
    Ask,
    /// Edits and runs commands without asking.
    Auto,
}

impl Mode {
    /// All modes, in display order.
    pub const ALL: [Mode; 3] = [Mode::ReadOnly, Mode::Ask, Mode::Auto];

    /// The mode's id on the wire.
    pub fn id(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Ask => "ask",
            Mode::Auto => "auto",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mode::ReadOnly => "Read only",
            Mode::Ask => "Ask",
            Mode::Auto => "Auto",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Mode::ReadOnly => "Read and search files; no edits or commands",
            Mode::Ask => "Ask for permission before each edit or command",
            Mode::Auto => "Edit files and run commands without asking",
        }
    }

    /// The mode with wire id `id`.
    pub fn from_id(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.id() == id)
    }
}

/// Settings of a session that can change while a turn runs.
struct Settings {
    mode: Mode,
    model: ModelRef,
    /// Tool names the user allowed for the rest of the session.
    always_allow: HashSet<String>,
    /// Tool names the user rejected for the rest of the session.
    always_reject: HashSet<String>,
}

struct Session {
    cwd: PathBuf,
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
    history: tokio::sync::Mutex<Vec<Message>>,
}

/// The coding agent: implements [`acp::Agent`].
pub struct CodingAgent {
    conn: AgentSideConnection,
    config: Arc<Config>,
    llm: LlmClient,
    client_caps: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<SessionId, Arc<Session>>>,
    counter: AtomicU64,
    store: Arc<Store>,
}

/// The id of the one authentication method: configuration by environment.
pub const AUTH_METHOD_ID: &str = "environment";

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CodingAgent {
    /// An agent that calls the client through `conn` and keeps sessions in
    /// `store`.
    pub fn new(conn: AgentSideConnection, config: Config, store: Arc<Store>) -> Self {
        let llm = LlmClient::new(
            Duration::from_secs(config.request_timeout_secs),
            config.max_output_tokens,
        );
        CodingAgent {
            conn,
            config: Arc::new(config),
            llm,
            client_caps: Mutex::new(ClientCapabilities::default()),
            sessions: Mutex::new(HashMap::new()),
            counter: AtomicU64::new(0),
            store,
        }
    }

    fn session(&self, id: &SessionId) -> Result<Arc<Session>, Error> {
        lock(&self.sessions)
            .get(id)
            .cloned()
            .ok_or_else(|| Error::resource_not_found(None).data(json!({"sessionId": id.as_str()})))
    }

    fn new_session_id(&self) -> SessionId {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        SessionId::new(format!("sess-{nanos:x}-{}-{n}", std::process::id()))
    }

    fn modes(mode: Mode) -> SessionModeState {
        SessionModeState::new(
            mode.id(),
            Mode::ALL
                .into_iter()
                .map(|m| SessionMode::new(m.id(), m.name()).description(m.description()))
                .collect::<Vec<_>>(),
        )
    }

    fn config_options(&self, s: &Settings) -> Vec<SessionConfigOption> {
        let modes: Vec<SessionConfigSelectOption> = Mode::ALL
            .into_iter()
            .map(|m| SessionConfigSelectOption::new(m.id(), m.name()).description(m.description()))
            .collect();
        let mut models = self.config.model_choices();
        if !models.contains(&s.model) {
            models.insert(0, s.model.clone());
        }
        let models: Vec<SessionConfigSelectOption> = models
            .iter()
            .map(|m| SessionConfigSelectOption::new(m.id(), m.id()))
            .collect();
        vec![
            SessionConfigOption::select("mode", "Mode", s.mode.id(), modes)
                .description("How much the agent may do without asking")
                .category(SessionConfigOptionCategory::Mode),
            SessionConfigOption::select("model", "Model", s.model.id(), models)
                .category(SessionConfigOptionCategory::Model),
        ]
    }

    async fn notify(&self, session_id: &SessionId, update: impl Into<SessionUpdate>) {
        let update = update.into();
        let session = lock(&self.sessions).get(session_id).cloned();
        if let Some(session) = session {
            journal(&mut lock(&session.journal), &update);
        }
        // A failed notification means the client went away; the turn will
        // notice when its next request fails.
        let _ = self
            .conn
            .session_notification(SessionNotification::new(session_id.clone(), update))
            .await;
    }

    async fn announce_settings(
        &self,
        session_id: &SessionId,
        session: &Session,
        mode_changed: bool,
    ) {
        let (mode, options) = {
            let s = lock(&session.settings);
            (s.mode, self.config_options(&s))
        };
        if mode_changed {
            self.notify(session_id, CurrentModeUpdate::new(mode.id()))
                .await;
        }
        self.notify(session_id, ConfigOptionUpdate::new(options))
            .await;
    }

    fn persist_settings(&self, session_id: &SessionId, session: &Session) {
        let (mode, model) = {
            let s = lock(&session.settings);
            (s.mode.id(), s.model.id())
        };
        if let Err(e) = self.store.set_settings(session_id.as_str(), mode, &model) {
            eprintln!("acp-agent: {e}");
        }
    }

    /// Opens a stored session for `session/load` or `session/resume`.
    async fn open_stored(
        &self,
        id: &SessionId,
        cwd: &str,
        mcp_servers: &[McpServer],
    ) -> Result<Arc<Session>, Error> {
        let stored = self
            .store
            .get(id.as_str())
            .map_err(|e| Error::internal_error().data(json!(e)))?
            .ok_or_else(|| {
                Error::resource_not_found(None).data(json!({"sessionId": id.as_str()}))
            })?;
        let cwd = if cwd.is_empty() {
            stored.cwd.clone()
        } else {
            cwd.to_string()
        };
        let cwd = PathBuf::from(cwd);
        if !cwd.is_absolute() {
            return Err(
                Error::invalid_params().data(json!({"message": "cwd must be an absolute path"}))
            );
        }
        let model = match ModelRef::parse(&stored.model) {
            Ok(m) if self.config.provider(m.provider).is_some() => m,
            _ => self
                .config
                .model
                .clone()
                .map_err(|msg| Error::new(ErrorCode::AUTH_REQUIRED, msg))?,
        };
        let history = self
            .store
            .history(id.as_str())
            .map_err(|e| Error::internal_error().data(json!(e)))?;
        let (mcp, mcp_errors) = McpServers::connect(mcp_servers, &cwd).await;
        let session = Arc::new(Session {
            mcp,
            mcp_errors: Mutex::new(mcp_errors),
            cwd,
            settings: Mutex::new(Settings {
                mode: Mode::from_id(&stored.mode).unwrap_or(Mode::Ask),
                model,
                always_allow: HashSet::new(),
                always_reject: HashSet::new(),
            }),
            journal: Mutex::new(Vec::new()),
            title: Mutex::new(stored.title),
            history: tokio::sync::Mutex::new(history),
        });
        lock(&self.sessions).insert(id.clone(), session.clone());
        Ok(session)
    }

    fn set_mode(&self, session: &Session, id: &str) -> Result<bool, Error> {
        let mode = Mode::from_id(id).ok_or_else(|| {
            Error::invalid_params().data(
                json!({"message": format!("unknown mode {id:?}; use read-only, ask or auto")}),
            )
        })?;
        let mut s = lock(&session.settings);
        let changed = s.mode != mode;
        s.mode = mode;
        Ok(changed)
    }

    fn system_prompt(&self, session: &Session, mode: Mode) -> String {
        let mode_note = match mode {
            Mode::ReadOnly => {
                "The session is in read-only mode: you can read and search files but cannot edit them or run commands."
            }
            Mode::Ask => {
                "The user is asked to approve each edit and command; a rejected tool call means the user does not want it: adapt instead of retrying it."
            }
            Mode::Auto => {
                "Edits and commands run without asking the user; be careful and deliberate."
            }
        };
        format!(
            "You are acp-agent, a coding agent working in the user's project inside their editor.\n\
             Working directory: {}\n\
             Use the tools to inspect and change the project: read files before editing them, prefer edit_file for \
             small changes, run commands to build and test, and keep a plan with update_plan for multi-step tasks. \
             Relative paths are resolved against the working directory. {mode_note}\n\
             Be concise: report what you did and what the user should know.",
            session.cwd.display()
        )
    }

    /// Turns the prompt's content blocks into a user message for the model:
    /// text, embedded resources inline, links as references the model can
    /// read with its tools, and images when the session's model takes them.
    async fn prompt_message(
        &self,
        session_id: &SessionId,
        session: &Session,
        blocks: &[ContentBlock],
    ) -> (String, Vec<Image>) {
        let take_images = {
            let s = lock(&session.settings);
            self.config.accepts_images(&s.model)
        };
        let mut parts = Vec::new();
        let mut images = Vec::new();
        let mut dropped = false;
        for block in blocks {
            match block {
                ContentBlock::Text(t) => parts.push(t.text.clone()),
                ContentBlock::Resource(r) => match &r.resource {
                    EmbeddedResourceResource::Text(t) => parts.push(format!(
                        "<context uri=\"{}\">\n{}\n</context>",
                        t.uri, t.text
                    )),
                    EmbeddedResourceResource::Blob(b) => parts.push(format!(
                        "[attached binary resource {} ({}) not shown]",
                        b.uri,
                        b.mime_type.as_deref().unwrap_or("unknown type")
                    )),
                    _ => parts.push("[an attached resource of an unknown kind was omitted]".into()),
                },
                ContentBlock::ResourceLink(l) => match l.uri.strip_prefix("file://") {
                    Some(p) => parts.push(format!(
                        "[referenced file {} at {p}: use read_file to read it]",
                        l.name
                    )),
                    None => parts.push(format!("[referenced resource {}: {}]", l.name, l.uri)),
                },
                ContentBlock::Image(i) if take_images => images.push(Image {
                    mime_type: i.mime_type.clone(),
                    data: i.data.clone(),
                }),
                ContentBlock::Image(_) | ContentBlock::Audio(_) => {
                    parts.push("[an attachment the model cannot take was omitted]".into());
                    dropped = true;
                }
                _ => {}
            }
        }
        if dropped {
            self.notify(
                session_id,
                SessionUpdate::agent_message(
                    "(Note: this model is not sent images or audio; the attachment was left out. \
                     Set ACP_AGENT_IMAGES=1 if the model accepts images.)\n\n",
                ),
            )
            .await;
        }
        (parts.join("\n\n"), images)
    }

    async fn run_turn(
        &self,
        session_id: &SessionId,
        session: &Session,
        history: &mut Vec<Message>,
        cancel: &CancellationToken,
    ) -> StopReason {
        let caps = lock(&self.client_caps).clone();
        let env = ToolEnv {
            conn: self.conn.clone(),
            session_id: session_id.clone(),
            cwd: session.cwd.clone(),
            client_read: caps.fs.read_text_file,
            client_write: caps.fs.write_text_file,
            client_terminal: caps.terminal,
            cancel: cancel.clone(),
        };
        let mut requests = 0usize;
        loop {
            if cancel.is_cancelled() {
                return StopReason::Cancelled;
            }
            if requests >= self.config.max_turn_requests {
                self.notify(
                    session_id,
                    SessionUpdate::agent_message(format!(
                        "\n\nStopped: this turn reached the limit of {} model requests (ACP_AGENT_MAX_TURN_REQUESTS).",
                        self.config.max_turn_requests
                    )),
                )
                .await;
                return StopReason::MaxTurnRequests;
            }
            requests += 1;
            let (mode, model) = {
                let s = lock(&session.settings);
                (s.mode, s.model.clone())
            };
            let Some(provider) = self.config.provider(model.provider) else {
                self.report_error(
                    session_id,
                    &format!("the provider of {model} is not configured. {SETUP_HELP}"),
                )
                .await;
                return StopReason::EndTurn;
            };
            let mut messages = Vec::with_capacity(history.len() + 1);
            messages.push(Message::System {
                text: self.system_prompt(session, mode),
            });
            messages.extend(history.iter().cloned());
            let mut specs = tools::specs(mode == Mode::ReadOnly);
            specs.extend(session.mcp.specs(mode == Mode::ReadOnly));

            let mut text = String::new();
            let started = tokio::select! {
                s = self.llm.stream(provider, &model, &messages, &specs) => s,
                _ = cancel.cancelled() => return StopReason::Cancelled,
            };
            let mut stream = match started {
                Ok(s) => s,
                Err(e) => {
                    self.report_error(session_id, &e.to_string()).await;
                    return StopReason::EndTurn;
                }
            };
            let (tool_calls, finish) = loop {
                let events = tokio::select! {
                    e = stream.next_events() => e,
                    _ = cancel.cancelled() => {
                        drop(stream);
                        if !text.is_empty() {
                            history.push(Message::Assistant { text, tool_calls: vec![] });
                        }
                        return StopReason::Cancelled;
                    }
                };
                let events = match events {
                    Ok(ev) => ev,
                    Err(e) => {
                        if !text.is_empty() {
                            history.push(Message::Assistant {
                                text,
                                tool_calls: vec![],
                            });
                        }
                        self.report_error(session_id, &e.to_string()).await;
                        return StopReason::EndTurn;
                    }
                };
                let mut done = None;
                for ev in events {
                    match ev {
                        ModelEvent::Text(t) => {
                            text.push_str(&t);
                            self.notify(session_id, SessionUpdate::agent_message(t))
                                .await;
                        }
                        ModelEvent::Thought(t) => {
                            self.notify(session_id, SessionUpdate::agent_thought(t))
                                .await;
                        }
                        ModelEvent::Usage { input, output } => {
                            self.notify(
                                session_id,
                                UsageUpdate::new(input + output, self.config.context_window),
                            )
                            .await;
                        }
                        ModelEvent::Done { tool_calls, finish } => {
                            done = Some((tool_calls, finish))
                        }
                    }
                }
                if let Some(d) = done {
                    break d;
                }
            };
            history.push(Message::Assistant {
                text,
                tool_calls: tool_calls.clone(),
            });
            if tool_calls.is_empty() {
                return match finish {
                    FinishReason::Length => StopReason::MaxTokens,
                    FinishReason::ContentFilter => StopReason::Refusal,
                    _ => StopReason::EndTurn,
                };
            }
            let mut cancelled = false;
            for call in &tool_calls {
                let result = if cancelled {
                    "The user cancelled the turn before this tool ran.".to_string()
                } else {
                    let outcome = self.handle_tool_call(&env, session, call).await;
                    cancelled = outcome.cancelled;
                    outcome.for_model
                };
                history.push(Message::Tool {
                    call_id: call.id.clone(),
                    content: result,
                });
            }
            if cancelled || cancel.is_cancelled() {
                return StopReason::Cancelled;
            }
        }
    }

    /// `/compact`: replaces the conversation with a summary written by the model.
    async fn compact(
        &self,
        session_id: &SessionId,
        session: &Session,
        history: &mut Vec<Message>,
        cancel: &CancellationToken,
        extra: &str,
    ) -> StopReason {
        if history.is_empty() {
            self.notify(session_id, SessionUpdate::agent_message("There is nothing to compact yet."))
                .await;
            return StopReason::EndTurn;
        }
        let (mode, model) = {
            let s = lock(&session.settings);
            (s.mode, s.model.clone())
        };
        let Some(provider) = self.config.provider(model.provider) else {
            self.report_error(session_id, &format!("the provider of {model} is not configured"))
                .await;
            return StopReason::EndTurn;
        };
        let mut messages = vec![Message::System {
            text: self.system_prompt(session, mode),
        }];
        messages.extend(history.iter().cloned());
        let also = if extra.is_empty() {
            String::new()
        } else {
            format!(" Also: {extra}")
        };
        messages.push(Message::user(format!(
            "Do not call any tools now. Summarise our conversation so far so that the work can \
             continue from the summary alone: the user's goals and requests, decisions made, files \
             read or changed and their current state, commands run and their results, and what \
             remains to do. Be complete but concise.{also}"
        )));
        // Tools stay declared: some APIs reject tool calls in the history otherwise.
        let mut specs = tools::specs(mode == Mode::ReadOnly);
        specs.extend(session.mcp.specs(mode == Mode::ReadOnly));
        let started = tokio::select! {
            s = self.llm.stream(provider, &model, &messages, &specs) => s,
            _ = cancel.cancelled() => return StopReason::Cancelled,
        };
        let mut stream = match started {
            Ok(s) => s,
            Err(e) => {
                self.report_error(session_id, &format!("could not compact: {e}")).await;
                return StopReason::EndTurn;
            }
        };
        let mut summary = String::new();
        loop {
            let events = tokio::select! {
                e = stream.next_events() => e,
                _ = cancel.cancelled() => return StopReason::Cancelled,
            };
            match events {
                Ok(events) if events.is_empty() => break,
                Ok(events) => {
                    for ev in events {
                        if let ModelEvent::Text(t) = ev {
                            summary.push_str(&t);
                            self.notify(session_id, SessionUpdate::agent_message(t)).await;
                        }
                    }
                }
                Err(e) => {
                    self.report_error(session_id, &format!("could not compact: {e}")).await;
                    return StopReason::EndTurn;
                }
            }
        }
        if summary.trim().is_empty() {
            self.report_error(session_id, "the model returned an empty summary; the conversation was kept")
                .await;
            return StopReason::EndTurn;
        }
        *history = vec![
            Message::user(format!("Summary of our earlier conversation:\n\n{summary}")),
            Message::Assistant {
                text: "Understood. I will continue from this summary.".into(),
                tool_calls: vec![],
            },
        ];
        StopReason::EndTurn
    }

    async fn report_error(&self, session_id: &SessionId, message: &str) {
        self.notify(
            session_id,
            SessionUpdate::agent_message(format!("\n\n⚠️ The turn stopped: {message}")),
        )
        .await;
    }

    /// Runs one tool call with its reporting and permission handling.
    async fn handle_tool_call(
        &self,
        env: &ToolEnv,
        session: &Session,
        call: &ToolCallRequest,
    ) -> ToolOutcome {
        let call_id = ToolCallId::new(format!(
            "{}-{}",
            call.id,
            self.counter.fetch_add(1, Ordering::Relaxed)
        ));
        let raw_input = serde_json::from_str::<Value>(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
        if let Some(info) = session.mcp.find(&call.name) {
            return self
                .handle_mcp_call(env, session, call, call_id, raw_input, info)
                .await;
        }
        let input = match ToolInput::parse(&call.name, &call.arguments, &env.cwd) {
            Ok(i) => i,
            Err(e) => {
                let outcome = ToolOutcome::fail(e);
                let tc = ToolCall::new(call_id, format!("{} (invalid call)", call.name))
                    .status(ToolCallStatus::Failed)
                    .raw_input(raw_input)
                    .content(outcome.content.clone());
                self.notify(&env.session_id, tc).await;
                return outcome;
            }
        };
        if let ToolInput::UpdatePlan { entries } = &input {
            self.notify(&env.session_id, Plan::new(entries.clone()))
                .await;
            return ToolOutcome {
                ok: true,
                for_model: "Plan updated.".into(),
                content: vec![],
                cancelled: false,
            };
        }
        let tc = ToolCall::new(call_id.clone(), input.title(&env.cwd))
            .kind(input.kind())
            .status(ToolCallStatus::Pending)
            .locations(input.locations())
            .raw_input(raw_input)
            .name(call.name.clone());
        self.notify(&env.session_id, tc).await;

        let outcome = self
            .authorize_and_run(env, session, call, &call_id, &input)
            .await;
        let status = if outcome.ok {
            ToolCallStatus::Completed
        } else {
            ToolCallStatus::Failed
        };
        let mut update = ToolCallUpdate::new(call_id).status(status);
        if !outcome.content.is_empty() {
            update = update.content(outcome.content.clone());
        }
        if !outcome.cancelled {
            update = update
                .raw_output(json!({"output": crate::llm::truncate(&outcome.for_model, 16000)}));
        }
        self.notify(&env.session_id, update).await;
        outcome
    }

    /// Runs a call to an MCP server's tool: asks permission (in `ask` mode)
    /// unless the server marks the tool read-only.
    async fn handle_mcp_call(
        &self,
        env: &ToolEnv,
        session: &Session,
        call: &ToolCallRequest,
        call_id: ToolCallId,
        raw_input: Value,
        info: McpToolInfo,
    ) -> ToolOutcome {
        let tc = ToolCall::new(call_id.clone(), format!("{}: {}", info.server, info.tool))
            .kind(if info.read_only { ToolKind::Read } else { ToolKind::OtherKind })
            .status(ToolCallStatus::Pending)
            .raw_input(raw_input.clone())
            .name(call.name.clone());
        self.notify(&env.session_id, tc).await;
        let outcome = if !raw_input.is_object() && !call.arguments.trim().is_empty() {
            ToolOutcome::fail(format!(
                "the arguments are not a JSON object: {}",
                crate::llm::truncate(&call.arguments, 300)
            ))
        } else {
            match self.permit(env, session, call, &call_id, None, !info.read_only).await {
                Err(refusal) => refusal,
                Ok(()) => {
                    self.notify(
                        &env.session_id,
                        ToolCallUpdate::new(call_id.clone()).status(ToolCallStatus::InProgress),
                    )
                    .await;
                    let run = session.mcp.call(&info, raw_input);
                    tokio::select! {
                        r = run => match r {
                            Ok(text) => ToolOutcome {
                                ok: true,
                                content: vec![ToolCallContent::from(crate::llm::truncate(&text, 8000))],
                                for_model: text,
                                cancelled: false,
                            },
                            Err(e) => ToolOutcome::fail(e),
                        },
                        _ = env.cancel.cancelled() => ToolOutcome {
                            ok: false,
                            for_model: "Cancelled.".into(),
                            content: vec![],
                            cancelled: true,
                        },
                    }
                }
            }
        };
        let status = if outcome.ok {
            ToolCallStatus::Completed
        } else {
            ToolCallStatus::Failed
        };
        let mut update = ToolCallUpdate::new(call_id).status(status);
        if !outcome.content.is_empty() {
            update = update.content(outcome.content.clone());
        }
        self.notify(&env.session_id, update).await;
        outcome
    }

    /// Applies the mode and the user's remembered answers to a call that needs
    /// permission (`needs`), asking the user in `ask` mode. `Err` holds the
    /// outcome to report instead of running the tool.
    async fn permit(
        &self,
        env: &ToolEnv,
        session: &Session,
        call: &ToolCallRequest,
        call_id: &ToolCallId,
        diff: Option<ToolCallContent>,
        needs: bool,
    ) -> Result<(), ToolOutcome> {
        if !needs {
            return Ok(());
        }
        let (mode, allowed, rejected) = {
            let s = lock(&session.settings);
            (
                s.mode,
                s.always_allow.contains(&call.name),
                s.always_reject.contains(&call.name),
            )
        };
        if mode == Mode::ReadOnly {
            return Err(ToolOutcome::fail(
                "the session is in read-only mode: edits and commands are not allowed. Ask the user to switch modes if needed.",
            ));
        }
        if rejected {
            return Err(ToolOutcome::fail(format!("the user rejected {} for this session", call.name)));
        }
        if mode == Mode::Ask && !allowed {
            let mut tool_call = ToolCallUpdate::new(call_id.clone());
            if let Some(d) = diff {
                tool_call = tool_call.content(vec![d]);
            }
            let options = vec![
                PermissionOption::new("allow_once", "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new(
                    "allow_always",
                    "Always allow",
                    PermissionOptionKind::AllowAlways,
                ),
                PermissionOption::new("reject_once", "Reject", PermissionOptionKind::RejectOnce),
                PermissionOption::new(
                    "reject_always",
                    "Always reject",
                    PermissionOptionKind::RejectAlways,
                ),
            ];
            let req = RequestPermissionRequest::new(env.session_id.clone(), tool_call, options);
            let answer = tokio::select! {
                a = self.conn.request_permission(req) => a,
                _ = env.cancel.cancelled() => return Err(ToolOutcome { ok: false, for_model: "Cancelled.".into(), content: vec![], cancelled: true }),
            };
            let chosen = match answer {
                Ok(r) => match r.outcome.selected_option() {
                    Some(id) => id.as_str().to_string(),
                    None => {
                        return Err(ToolOutcome {
                            ok: false,
                            for_model: "The permission request was cancelled.".into(),
                            content: vec![],
                            cancelled: true,
                        });
                    }
                },
                Err(e) => {
                    return Err(ToolOutcome::fail(format!("could not ask the user for permission: {e}")));
                }
            };
            match chosen.as_str() {
                "allow_once" => {}
                "allow_always" => {
                    lock(&session.settings)
                        .always_allow
                        .insert(call.name.clone());
                }
                "reject_always" => {
                    lock(&session.settings)
                        .always_reject
                        .insert(call.name.clone());
                    return Err(ToolOutcome::fail(format!(
                        "the user rejected this and all further {} calls",
                        call.name
                    )));
                }
                _ => return Err(ToolOutcome::fail("the user rejected this tool call")),
            }
        }
        Ok(())
    }

    async fn authorize_and_run(
        &self,
        env: &ToolEnv,
        session: &Session,
        call: &ToolCallRequest,
        call_id: &ToolCallId,
        input: &ToolInput,
    ) -> ToolOutcome {
        let progress =
            |id: &ToolCallId| ToolCallUpdate::new(id.clone()).status(ToolCallStatus::InProgress);
        if !input.is_mutating() {
            self.notify(&env.session_id, progress(call_id)).await;
            return tools::run(env, input, call_id).await;
        }
        // File changes are computed first, so the user sees the diff.
        let change = match input {
            ToolInput::WriteFile { .. } | ToolInput::EditFile { .. } => {
                match tools::plan_change(env, input).await {
                    Ok(c) => Some(c),
                    Err(e) => return ToolOutcome::fail(e),
                }
            }
            _ => None,
        };
        if let Err(refusal) = self
            .permit(env, session, call, call_id, change.as_ref().map(|c| c.diff()), true)
            .await
        {
            return refusal;
        }
        self.notify(&env.session_id, progress(call_id)).await;
        match change {
            Some(c) => tools::apply_change(env, &c).await,
            None => tools::run(env, input, call_id).await,
        }
    }
}

impl Agent for CodingAgent {
    async fn initialize(&self, args: InitializeRequest) -> Result<InitializeResponse, Error> {
        *lock(&self.client_caps) = args.client_capabilities;
        let version = if args.protocol_version < ProtocolVersion::LATEST {
            args.protocol_version
        } else {
            ProtocolVersion::LATEST
        };
        let auth = AuthMethodAgent::new(AUTH_METHOD_ID, "Environment variables").description(
            "Set OPENAI_API_KEY (and optionally OPENAI_BASE_URL), OPENAI_BASE_URL alone for a local \
             OpenAI-compatible server, or ANTHROPIC_API_KEY; choose the model with \
             ACP_AGENT_MODEL=provider:model; then restart the agent.",
        );
        Ok(InitializeResponse::new(version)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(true)
                    .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
                    .prompt_capabilities(
                        PromptCapabilities::new()
                            .embedded_context(true)
                            .image(self.config.model.as_ref().is_ok_and(|m| self.config.accepts_images(m))),
                    )
                    .session_capabilities(
                        SessionCapabilities::new()
                            .list(SessionListCapabilities::new())
                            .resume(SessionResumeCapabilities::new())
                            .close(SessionCloseCapabilities::new())
                            .delete(SessionDeleteCapabilities::new()),
                    ),
            )
            .auth_methods(vec![AuthMethod::from(auth)])
            .agent_info(
                Implementation::new("acp-agent", env!("CARGO_PKG_VERSION")).title("ACP Agent"),
            ))
    }

    async fn authenticate(&self, args: AuthenticateRequest) -> Result<AuthenticateResponse, Error> {
        if args.method_id.as_str() != AUTH_METHOD_ID {
            return Err(Error::invalid_params()
                .data(json!({"message": format!("unknown auth method {}", args.method_id)})));
        }
        match &self.config.model {
            Ok(_) => Ok(AuthenticateResponse::new()),
            Err(msg) => Err(Error::new(ErrorCode::AUTH_REQUIRED, msg.clone())),
        }
    }

    async fn new_session(&self, args: NewSessionRequest) -> Result<NewSessionResponse, Error> {
        let model = self
            .config
            .model
            .clone()
            .map_err(|msg| Error::new(ErrorCode::AUTH_REQUIRED, msg))?;
        let cwd = PathBuf::from(&args.cwd);
        if !cwd.is_absolute() {
            return Err(
                Error::invalid_params().data(json!({"message": "cwd must be an absolute path"}))
            );
        }
        let settings = Settings {
            mode: Mode::Ask,
            model,
            always_allow: HashSet::new(),
            always_reject: HashSet::new(),
        };
        let options = self.config_options(&settings);
        let id = self.new_session_id();
        self.store
            .create(&StoredSession {
                id: id.to_string(),
                cwd: args.cwd.clone(),
                title: None,
                updated_at_ms: now_ms(),
                mode: settings.mode.id().into(),
                model: settings.model.id(),
            })
            .map_err(|e| Error::internal_error().data(json!(e)))?;
        let (mcp, mcp_errors) = McpServers::connect(&args.mcp_servers, &cwd).await;
        let session = Arc::new(Session {
            mcp,
            mcp_errors: Mutex::new(mcp_errors),
            cwd,
            settings: Mutex::new(settings),
            journal: Mutex::new(Vec::new()),
            title: Mutex::new(None),
            history: tokio::sync::Mutex::new(Vec::new()),
        });
        lock(&self.sessions).insert(id.clone(), session);
        // The client learns the session id from the response: send the
        // commands just after it.
        let conn = self.conn.clone();
        let sid = id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let _ = conn
                .session_notification(SessionNotification::new(sid, available_commands()))
                .await;
        });
        Ok(NewSessionResponse::new(id)
            .modes(Self::modes(Mode::Ask))
            .config_options(options))
    }

    async fn load_session(&self, args: LoadSessionRequest) -> Result<LoadSessionResponse, Error> {
        if lock(&self.sessions).contains_key(&args.session_id) {
            // Loading an open session again: take it from the store afresh.
            lock(&self.sessions).remove(&args.session_id);
        }
        let session = self
            .open_stored(&args.session_id, &args.cwd, &args.mcp_servers)
            .await?;
        let updates = self
            .store
            .updates(args.session_id.as_str())
            .map_err(|e| Error::internal_error().data(json!(e)))?;
        for update in updates {
            self.conn
                .session_notification(SessionNotification::new(args.session_id.clone(), update))
                .await
                .map_err(|e| Error::internal_error().data(json!(e.to_string())))?;
        }
        let _ = self
            .conn
            .session_notification(SessionNotification::new(
                args.session_id.clone(),
                available_commands(),
            ))
            .await;
        let s = lock(&session.settings);
        Ok(LoadSessionResponse::new()
            .modes(Self::modes(s.mode))
            .config_options(self.config_options(&s)))
    }

    async fn resume_session(
        &self,
        args: ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, Error> {
        let existing = lock(&self.sessions).get(&args.session_id).cloned();
        let session = match existing {
            Some(s) => s,
            None => {
                let servers = args.mcp_servers.clone().unwrap_or_default();
                self.open_stored(&args.session_id, &args.cwd, &servers)
                    .await?
            }
        };
        let _ = self
            .conn
            .session_notification(SessionNotification::new(
                args.session_id.clone(),
                available_commands(),
            ))
            .await;
        let s = lock(&session.settings);
        Ok(ResumeSessionResponse::new()
            .modes(Self::modes(s.mode))
            .config_options(self.config_options(&s)))
    }

    async fn list_sessions(
        &self,
        args: ListSessionsRequest,
    ) -> Result<ListSessionsResponse, Error> {
        let offset = match &args.cursor {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .map_err(|_| Error::invalid_params().data(json!({"message": "invalid cursor"})))?,
        };
        let (rows, next) = self
            .store
            .list(args.cwd.as_deref(), offset)
            .map_err(|e| Error::internal_error().data(json!(e)))?;
        let sessions: Vec<SessionInfo> = rows
            .into_iter()
            .map(|r| {
                let mut info = SessionInfo::new(r.id, r.cwd).updated_at(rfc3339(r.updated_at_ms));
                if let Some(t) = r.title {
                    info = info.title(t);
                }
                info
            })
            .collect();
        let mut resp = ListSessionsResponse::new(sessions);
        if let Some(n) = next {
            resp = resp.next_cursor(n.to_string());
        }
        Ok(resp)
    }

    async fn close_session(
        &self,
        args: CloseSessionRequest,
    ) -> Result<CloseSessionResponse, Error> {
        self.conn.cancellation(&args.session_id).cancel();
        let was_open = lock(&self.sessions).remove(&args.session_id).is_some();
        let stored = self
            .store
            .get(args.session_id.as_str())
            .map_err(|e| Error::internal_error().data(json!(e)))?
            .is_some();
        if !was_open && !stored {
            return Err(Error::resource_not_found(None)
                .data(json!({"sessionId": args.session_id.as_str()})));
        }
        Ok(CloseSessionResponse::new())
    }

    async fn delete_session(
        &self,
        args: DeleteSessionRequest,
    ) -> Result<DeleteSessionResponse, Error> {
        self.conn.cancellation(&args.session_id).cancel();
        lock(&self.sessions).remove(&args.session_id);
        let existed = self
            .store
            .delete(args.session_id.as_str())
            .map_err(|e| Error::internal_error().data(json!(e)))?;
        if !existed {
            return Err(Error::resource_not_found(None)
                .data(json!({"sessionId": args.session_id.as_str()})));
        }
        Ok(DeleteSessionResponse::new())
    }

    async fn set_session_mode(
        &self,
        args: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, Error> {
        let session = self.session(&args.session_id)?;
        let changed = self.set_mode(&session, args.mode_id.as_str())?;
        if changed {
            self.persist_settings(&args.session_id, &session);
            self.announce_settings(&args.session_id, &session, true)
                .await;
        }
        Ok(SetSessionModeResponse::new())
    }

    async fn set_session_config_option(
        &self,
        args: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let session = self.session(&args.session_id)?;
        let SessionConfigValue::ValueId(value) = &args.value else {
            return Err(
                Error::invalid_params().data(json!({"message": "this option takes a value id"}))
            );
        };
        let mut mode_changed = false;
        let changed = match args.config_id.as_str() {
            "mode" => {
                mode_changed = self.set_mode(&session, value.as_str())?;
                mode_changed
            }
            "model" => {
                let model = ModelRef::parse(value.as_str())
                    .map_err(|e| Error::invalid_params().data(json!({"message": e})))?;
                if self.config.provider(model.provider).is_none() {
                    return Err(Error::invalid_params().data(json!({"message": format!("provider {} is not configured", model.provider.prefix())})));
                }
                let mut s = lock(&session.settings);
                let changed = s.model != model;
                s.model = model;
                changed
            }
            other => {
                return Err(Error::invalid_params()
                    .data(json!({"message": format!("unknown config option {other:?}")})));
            }
        };
        if changed {
            self.persist_settings(&args.session_id, &session);
            self.announce_settings(&args.session_id, &session, mode_changed)
                .await;
        }
        let options = self.config_options(&lock(&session.settings));
        Ok(SetSessionConfigOptionResponse::new(options))
    }

    async fn prompt(&self, args: PromptRequest) -> Result<PromptResponse, Error> {
        let session = self.session(&args.session_id)?;
        let cancel = self.conn.cancellation(&args.session_id);
        let Ok(mut history) = session.history.try_lock() else {
            return Err(Error::invalid_request()
                .data(json!({"message": "a prompt turn is already running in this session"})));
        };
        lock(&session.journal).clear();
        let mcp_errors = std::mem::take(&mut *lock(&session.mcp_errors));
        for e in mcp_errors {
            let _ = self
                .conn
                .session_notification(SessionNotification::new(
                    args.session_id.clone(),
                    SessionUpdate::agent_message(format!("⚠️ {e}\n\n")),
                ))
                .await;
        }
        {
            let mut j = lock(&session.journal);
            for block in &args.prompt {
                journal(&mut j, &SessionUpdate::user_message(block.clone()));
            }
        }
        let (text, images) = self
            .prompt_message(&args.session_id, &session, &args.prompt)
            .await;
        let command = SlashCommand::parse(&text);
        let text = match &command {
            Some(SlashCommand::Init(extra)) => init_prompt(extra),
            _ => text,
        };
        let new_title = {
            let mut title = lock(&session.title);
            if title.is_none() && !matches!(command, Some(SlashCommand::Compact(_))) {
                *title = make_title(&text);
                title.clone()
            } else {
                None
            }
        };
        if let Some(t) = new_title {
            let update = SessionInfoUpdate::new()
                .title(t)
                .updated_at(rfc3339(now_ms()));
            let _ = self
                .conn
                .session_notification(SessionNotification::new(args.session_id.clone(), update))
                .await;
        }
        let stop = match &command {
            Some(SlashCommand::Compact(extra)) => {
                self.compact(&args.session_id, &session, &mut history, &cancel, extra)
                    .await
            }
            _ => {
                history.push(Message::User { text, images });
                self.run_turn(&args.session_id, &session, &mut history, &cancel)
                    .await
            }
        };
        let updates = std::mem::take(&mut *lock(&session.journal));
        let title = lock(&session.title).clone();
        if let Err(e) = self.store.save_turn(
            args.session_id.as_str(),
            &session.cwd.display().to_string(),
            title.as_deref(),
            &history,
            &updates,
        ) {
            eprintln!("acp-agent: could not save session {}: {e}", args.session_id);
        }
        let stop = if cancel.is_cancelled() {
            StopReason::Cancelled
        } else {
            stop
        };
        Ok(PromptResponse::new(stop))
    }
}

/// A title from the first prompt: its first non-empty line, shortened.
fn make_title(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(crate::llm::truncate(line, 80))
}

/// Adds `update` to a turn's journal if it belongs in the replayed history,
/// merging it into the previous entry where possible so that streamed pieces
/// are stored as whole messages.
fn journal(entries: &mut Vec<SessionUpdate>, update: &SessionUpdate) {
    match (entries.last_mut(), update) {
        (Some(SessionUpdate::AgentMessageChunk(prev)), SessionUpdate::AgentMessageChunk(new))
        | (Some(SessionUpdate::AgentThoughtChunk(prev)), SessionUpdate::AgentThoughtChunk(new)) => {
            if let (ContentBlock::Text(a), ContentBlock::Text(b)) =
                (&mut prev.content, &new.content)
            {
                a.text.push_str(&b.text);
                return;
            }
        }
        (Some(SessionUpdate::ToolCallUpdate(prev)), SessionUpdate::ToolCallUpdate(new))
            if prev.tool_call_id == new.tool_call_id =>
        {
            merge_update(prev, new);
            return;
        }
        _ => {}
    }
    match update {
        SessionUpdate::UserMessageChunk(_)
        | SessionUpdate::AgentMessageChunk(_)
        | SessionUpdate::AgentThoughtChunk(_)
        | SessionUpdate::ToolCall(_)
        | SessionUpdate::ToolCallUpdate(_)
        | SessionUpdate::Plan(_) => entries.push(update.clone()),
        _ => {}
    }
}

fn merge_update(prev: &mut ToolCallUpdate, new: &ToolCallUpdate) {
    macro_rules! take {
        ($($f:ident),*) => {$(
            if new.$f.is_some() {
                prev.$f = new.$f.clone();
            }
        )*};
    }
    take!(
        kind, status, title, name, content, locations, raw_input, raw_output, meta
    );
}

/// A slash command typed at the start of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SlashCommand {
    /// `/compact [instructions]`.
    Compact(String),
    /// `/init [instructions]`.
    Init(String),
}

impl SlashCommand {
    fn parse(text: &str) -> Option<SlashCommand> {
        let rest = text.trim_start().strip_prefix('/')?;
        let (name, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let arg = arg.trim().to_string();
        match name {
            "compact" => Some(SlashCommand::Compact(arg)),
            "init" => Some(SlashCommand::Init(arg)),
            _ => None,
        }
    }
}

/// The commands this agent offers.
fn available_commands() -> AvailableCommandsUpdate {
    AvailableCommandsUpdate::new(vec![
        AvailableCommand::new(
            "compact",
            "Summarise the conversation so far and continue from the summary, freeing context",
        )
        .input(UnstructuredCommandInput::new("what the summary should keep (optional)")),
        AvailableCommand::new(
            "init",
            "Explore the project and write an AGENTS.md describing it for coding agents",
        )
        .input(UnstructuredCommandInput::new("extra instructions (optional)")),
    ])
}

fn init_prompt(extra: &str) -> String {
    let mut p = String::from(
        "Explore this project (list files, read the README, build files and main sources) and write a file \
         AGENTS.md at the root of the working directory for coding agents. Cover: what the project is, how to \
         build, test and lint it (exact commands), the layout of the code, and the conventions to follow. \
         Keep it short and factual; if AGENTS.md exists, update it instead of starting over.",
    );
    if !extra.is_empty() {
        p.push_str("\n\nAlso: ");
        p.push_str(extra);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands() {
        assert_eq!(SlashCommand::parse("/compact"), Some(SlashCommand::Compact(String::new())));
        assert_eq!(
            SlashCommand::parse("  /init keep it short\n"),
            Some(SlashCommand::Init("keep it short".into()))
        );
        assert_eq!(SlashCommand::parse("/unknown"), None);
        assert_eq!(SlashCommand::parse("please /compact"), None);
    }

    #[test]
    fn journal_merges_streamed_pieces() {
        let mut j = Vec::new();
        journal(&mut j, &SessionUpdate::agent_message("a"));
        journal(&mut j, &SessionUpdate::agent_message("b"));
        journal(&mut j, &UsageUpdate::new(1, 2).into());
        journal(&mut j, &ToolCallUpdate::new("t").status(ToolCallStatus::InProgress).into());
        journal(&mut j, &ToolCallUpdate::new("t").content(vec!["out".into()]).into());
        assert_eq!(j.len(), 2);
        assert_eq!(j[0], SessionUpdate::agent_message("ab"));
        let SessionUpdate::ToolCallUpdate(u) = &j[1] else { panic!() };
        assert_eq!(u.status, Some(ToolCallStatus::InProgress));
        assert!(u.content.is_some());
    }
}
