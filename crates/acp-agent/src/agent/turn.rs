//! The prompt turn: turning the prompt into a user message, then calling the
//! model and running the tools it asks for until it is done, cancelled or out
//! of budget.

use super::commands::{SlashCommand, init_prompt};
use super::settings::Mode;
use super::{CodingAgent, Session, lock, sessions};
use crate::config::SETUP_HELP;
use crate::llm::{FinishReason, Image, Message, ModelEvent, ModelStream};
use crate::store::{now_ms, rfc3339};
use crate::tools::{self, ToolEnv};
use acp::CancellationToken;
use acp::schema::*;
use serde_json::json;

impl CodingAgent {
    /// `session/prompt`: runs a turn (or a slash command) and stores it.
    pub(super) async fn run_prompt(
        &self,
        args: PromptRequest,
        cancel: CancellationToken,
    ) -> Result<PromptResponse, Error> {
        let session = self.session(&args.session_id)?;
        let Ok(mut history) = session.history.try_lock() else {
            return Err(Error::invalid_request()
                .data(json!({"message": "a prompt turn is already running in this session"})));
        };
        *lock(&session.turn) = Some(cancel.clone());
        lock(&session.journal).clear();
        let mcp_errors = std::mem::take(&mut *lock(&session.mcp_errors));
        for e in mcp_errors {
            self.send(
                &args.session_id,
                SessionUpdate::agent_message(format!("⚠️ {e}\n\n")),
            )
            .await;
        }
        {
            let mut j = lock(&session.journal);
            for block in &args.prompt {
                sessions::journal(&mut j, &SessionUpdate::user_message(block.clone()));
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
                *title = sessions::make_title(&text);
                title.clone()
            } else {
                None
            }
        };
        if let Some(t) = new_title {
            let update = SessionInfoUpdate::new()
                .title(t)
                .updated_at(rfc3339(now_ms()));
            self.send(&args.session_id, update).await;
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

    /// Starts a model call on the conversation `history` (and `extra` after
    /// it), with the system prompt and the tools the session's mode allows.
    /// `Err` holds how the turn ends instead: cancelled, or stopped by an
    /// error already reported to the user (prefixed with `context`).
    pub(super) async fn start_call(
        &self,
        session_id: &SessionId,
        session: &Session,
        history: &[Message],
        extra: Option<Message>,
        cancel: &CancellationToken,
        context: &str,
    ) -> Result<ModelStream, StopReason> {
        let (mode, model) = {
            let s = lock(&session.settings);
            (s.mode, s.model.clone())
        };
        let Some(provider) = self.config.provider(model.provider) else {
            self.report_error(
                session_id,
                &format!("{context}the provider of {model} is not configured. {SETUP_HELP}"),
            )
            .await;
            return Err(StopReason::EndTurn);
        };
        let mut messages = Vec::with_capacity(history.len() + 2);
        messages.push(Message::System {
            text: self.system_prompt(session, mode),
        });
        messages.extend(history.iter().cloned());
        messages.extend(extra);
        // Tools stay declared even when none should be called (compaction):
        // some APIs reject tool calls in the history otherwise.
        let mut specs = tools::specs(mode == Mode::ReadOnly);
        specs.extend(session.mcp.specs(mode == Mode::ReadOnly));
        let started = tokio::select! {
            s = self.llm.stream(provider, &model, &messages, &specs) => s,
            _ = cancel.cancelled() => return Err(StopReason::Cancelled),
        };
        match started {
            Ok(s) => Ok(s),
            Err(e) => {
                self.report_error(session_id, &format!("{context}{e}"))
                    .await;
                Err(StopReason::EndTurn)
            }
        }
    }

    /// Alternates model calls and tool calls until the model answers without
    /// calling tools, the turn is cancelled, or a limit is hit.
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
            local: session.local.clone(),
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
            let mut stream = match self
                .start_call(session_id, session, history, None, cancel, "")
                .await
            {
                Ok(s) => s,
                Err(stop) => return stop,
            };
            let mut text = String::new();
            let (tool_calls, thinking, finish) = loop {
                let events = tokio::select! {
                    e = stream.next_events() => e,
                    _ = cancel.cancelled() => {
                        drop(stream);
                        if !text.is_empty() {
                            history.push(Message::assistant(text));
                        }
                        return StopReason::Cancelled;
                    }
                };
                let events = match events {
                    Ok(ev) => ev,
                    Err(e) => {
                        if !text.is_empty() {
                            history.push(Message::assistant(text));
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
                        ModelEvent::Usage {
                            input,
                            output,
                            cost,
                        } => {
                            let mut update =
                                UsageUpdate::new(input + output, self.config.context_window);
                            if let Some(total) = session.add_cost(cost) {
                                update = update.cost(Cost::new(total, "USD"));
                            }
                            self.notify(session_id, update).await;
                        }
                        ModelEvent::Done {
                            tool_calls,
                            thinking,
                            finish,
                        } => done = Some((tool_calls, thinking, finish)),
                    }
                }
                if let Some(d) = done {
                    break d;
                }
            };
            history.push(Message::Assistant {
                text,
                tool_calls: tool_calls.clone(),
                thinking,
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
}
