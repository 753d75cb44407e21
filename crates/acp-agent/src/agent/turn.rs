//! The prompt turn: turning the prompt into a user message, then calling the
//! model and running the tools it asks for until it is done, cancelled, out
//! of budget or failed.
//!
//! Every message is stored as soon as it is complete (see
//! [`crate::store`]): the user's prompt when the turn starts, then each
//! model message and each tool result, each with the updates that showed
//! it. A turn that cannot be stored stops, says so in a message to the user
//! and answers with an error; so does a model failure that retries did not
//! cure, with the provider's message.
//!
//! A turn that ends with a stop reason reports its token use in its
//! result's `_meta.usage` (`totalTokens`, `inputTokens`, `outputTokens`: the
//! shape of the unstable `usage` field, which the stable schema does not
//! define): the tokens all its model calls read and wrote (compaction
//! included), when the provider reported them.

use super::commands::{SlashCommand, init_prompt};
use super::model_call::{CallFailure, ModelFailure, Show};
use super::{CodingAgent, Conversation, Session, context, lock, sessions};
use crate::llm::{FinishReason, Image, Message};
use crate::store::{Append, StoreError, TurnId, TurnStart, now_ms, rfc3339};
use crate::tools::ToolEnv;
use acp::CancellationToken;
use acp::schema::*;
use serde_json::json;
use std::path::PathBuf;

/// Why a turn ended without a stop reason.
pub(super) enum TurnError {
    /// The model failed for good.
    Model(ModelFailure),
    /// The turn could not be stored.
    Store(StoreError),
}

impl From<StoreError> for TurnError {
    fn from(e: StoreError) -> Self {
        TurnError::Store(e)
    }
}

/// The running turn's place in the store and in the conversation.
pub(super) struct TurnState {
    /// The stored turn.
    pub(super) id: TurnId,
    /// The position of the turn's next message.
    next_pos: i64,
    /// Where the turn's messages start in the conversation.
    pub(super) start: usize,
    /// Whether the turn compacted the conversation already.
    pub(super) compacted: bool,
}

/// The turn's token use as the prompt result's `_meta`: `{"usage":
/// {"totalTokens", "inputTokens", "outputTokens"}}`, the shape of the
/// unstable `usage` field, kept out of the result's own fields because the
/// stable schema does not define it.
fn usage_meta(u: super::TurnUsage) -> Meta {
    let total = u.input.saturating_add(u.output);
    let usage = Usage::new(total, u.input, u.output);
    let mut meta = Meta::new();
    meta.insert(
        USAGE_META_KEY,
        serde_json::to_value(usage).unwrap_or_default(),
    );
    meta
}

/// The `_meta` key of a prompt result that holds the turn's token use.
const USAGE_META_KEY: &str = "usage";

/// How a stop reason is recorded in the store.
fn stop_name(stop: &StopReason) -> &'static str {
    match stop {
        StopReason::EndTurn => "end_turn",
        StopReason::MaxTokens => "max_tokens",
        StopReason::MaxTurnRequests => "max_turn_requests",
        StopReason::Refusal => "refusal",
        StopReason::Cancelled => "cancelled",
        _ => "other",
    }
}

impl CodingAgent {
    /// `session/prompt`: runs a turn (or a slash command), storing it as it
    /// goes.
    pub(super) async fn run_prompt(
        &self,
        args: PromptRequest,
        cancel: CancellationToken,
    ) -> Result<PromptResponse, Error> {
        let sid = args.session_id.clone();
        let session = self.session(&sid)?;
        let Ok(mut conv) = session.history.try_lock() else {
            return Err(Error::invalid_request()
                .data(json!({"message": "a prompt turn is already running in this session"})));
        };
        *lock(&session.turn) = Some(cancel.clone());
        lock(&session.journal).clear();
        *lock(&session.turn_usage) = None;
        let mcp_errors = std::mem::take(&mut *lock(&session.mcp_errors));
        for e in mcp_errors {
            self.send(&sid, SessionUpdate::agent_message(format!("⚠️ {e}\n\n")))
                .await;
        }
        {
            let mut j = lock(&session.journal);
            for block in &args.prompt {
                sessions::journal(&mut j, &SessionUpdate::user_message(block.clone()));
            }
        }
        let (text, images) = self.prompt_message(&sid, &session, &args.prompt).await;
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
        if let Some(t) = &new_title {
            let update = SessionInfoUpdate::new()
                .title(t.clone())
                .updated_at(rfc3339(now_ms()));
            self.send(&sid, update).await;
        }
        let message = match &command {
            Some(SlashCommand::Compact(_)) => None,
            _ => Some(Message::User { text, images }),
        };
        let start = TurnStart {
            session_id: sid.to_string(),
            known_version: if conv.stale { -1 } else { conv.version },
            cwd: session.cwd.display().to_string(),
            title: lock(&session.title).clone(),
            message: message.clone(),
            updates: std::mem::take(&mut *lock(&session.journal)),
        };
        let started = match self.store.begin_turn(start).await {
            Ok(started) => started,
            Err(e) => {
                self.send(
                    &sid,
                    SessionUpdate::agent_message(format!(
                        "⚠️ The prompt could not be saved, so the turn did not run. {e} {}",
                        e.advice()
                    )),
                )
                .await;
                return Err(e.to_rpc());
            }
        };
        if let Some(stored) = started.reloaded {
            conv.messages = stored.messages;
            conv.context_tokens = stored.context_tokens;
        }
        conv.version = started.version;
        conv.stale = false;
        let mut turn = TurnState {
            id: started.turn,
            next_pos: 1,
            start: conv.messages.len(),
            compacted: false,
        };
        conv.messages.extend(message);
        let result = match &command {
            Some(SlashCommand::Compact(extra)) => {
                self.compact(&sid, &session, &mut conv, &mut turn, &cancel, extra)
                    .await
            }
            _ => {
                self.run_turn(&sid, &session, &mut conv, &mut turn, &cancel)
                    .await
            }
        };
        let outcome = match &result {
            Ok(stop) if cancel.is_cancelled() => stop_name(&StopReason::Cancelled).to_string(),
            Ok(stop) => stop_name(stop).to_string(),
            Err(TurnError::Model(f)) => format!("error: {}", f.message()),
            Err(TurnError::Store(e)) => format!("unsaved: {e}"),
        };
        let stored = match &result {
            Err(TurnError::Store(e)) => Err(e.clone()),
            _ => {
                self.finish_turn(&sid, &session, &mut conv, &turn, outcome)
                    .await
            }
        };
        match (result, stored) {
            (_, Err(e)) => {
                self.send(
                    &sid,
                    SessionUpdate::agent_message(format!(
                        "\n\n⚠️ This turn could not be saved: it will be missing when the session is \
                         loaded again. {e} {}",
                        e.advice()
                    )),
                )
                .await;
                Err(e.to_rpc())
            }
            (Err(TurnError::Model(f)), Ok(())) => Err(f.to_rpc()),
            (Err(TurnError::Store(e)), Ok(())) => Err(e.to_rpc()),
            (Ok(stop), Ok(())) => {
                let stop = if cancel.is_cancelled() {
                    StopReason::Cancelled
                } else {
                    stop
                };
                let mut response = PromptResponse::new(stop);
                if let Some(u) = lock(&session.turn_usage).take() {
                    response = response.meta(usage_meta(u));
                }
                Ok(response)
            }
        }
    }

    /// Stores complete messages of the running turn, with the updates shown
    /// since the last store, and adds them to the conversation.
    /// `context_tokens` is the conversation's size at the call that
    /// produced them, if known.
    pub(super) async fn record(
        &self,
        session_id: &SessionId,
        session: &Session,
        conv: &mut Conversation,
        turn: &mut TurnState,
        messages: Vec<Message>,
        context_tokens: Option<u64>,
    ) -> Result<(), StoreError> {
        let positioned: Vec<(i64, Message)> = messages
            .iter()
            .cloned()
            .map(|m| {
                let pos = turn.next_pos;
                turn.next_pos += 1;
                (pos, m)
            })
            .collect();
        conv.messages.extend(messages);
        let append = Append {
            messages: positioned,
            updates: std::mem::take(&mut *lock(&session.journal)),
            context_tokens,
            ..Append::default()
        };
        self.store_append(session_id, conv, turn, append).await
    }

    /// Stores a compaction: the summary and its acknowledgement, which the
    /// conversation restarts from, followed by the running turn's messages.
    pub(super) async fn record_compaction(
        &self,
        session_id: &SessionId,
        session: &Session,
        conv: &mut Conversation,
        turn: &mut TurnState,
        summary: &str,
    ) -> Result<(), StoreError> {
        let restart = [
            Message::user(format!("Summary of our earlier conversation:\n\n{summary}")),
            Message::assistant("Understood. I will continue from this summary."),
        ];
        let append = Append {
            messages: vec![(-2, restart[0].clone()), (-1, restart[1].clone())],
            starts_history: true,
            updates: std::mem::take(&mut *lock(&session.journal)),
            ..Append::default()
        };
        self.store_append(session_id, conv, turn, append).await?;
        let current = conv.messages.split_off(turn.start.min(conv.messages.len()));
        conv.messages = restart.into_iter().chain(current).collect();
        turn.start = 2;
        turn.compacted = true;
        conv.context_tokens = None;
        Ok(())
    }

    /// Ends the stored turn: the updates not stored yet, and how it ended.
    async fn finish_turn(
        &self,
        session_id: &SessionId,
        session: &Session,
        conv: &mut Conversation,
        turn: &TurnState,
        outcome: String,
    ) -> Result<(), StoreError> {
        let append = Append {
            updates: std::mem::take(&mut *lock(&session.journal)),
            outcome: Some(outcome),
            ..Append::default()
        };
        self.store_append(session_id, conv, turn, append).await
    }

    async fn store_append(
        &self,
        session_id: &SessionId,
        conv: &mut Conversation,
        turn: &TurnState,
        append: Append,
    ) -> Result<(), StoreError> {
        let done = self
            .store
            .append(session_id.as_str(), turn.id, conv.version, append)
            .await?;
        conv.version = done.version;
        conv.stale |= done.others_wrote;
        Ok(())
    }

    /// The messages of a model call: the system prompt, the conversation
    /// `history` (with every tool call answered) and `extra`.
    pub(super) async fn messages_for_model(
        &self,
        session: &Session,
        history: &[Message],
        extra: Option<Message>,
    ) -> Vec<Message> {
        let mode = lock(&session.settings).mode;
        let environment = session
            .environment
            .get_or_init(|| context::environment(&session.cwd, &session.additional_dirs))
            .await;
        let roots: Vec<PathBuf> = std::iter::once(session.cwd.clone())
            .chain(session.additional_dirs.iter().cloned())
            .collect();
        let instructions = tokio::task::spawn_blocking(move || context::instructions(&roots))
            .await
            .unwrap_or_default();
        let mut messages = Vec::with_capacity(history.len() + 2);
        messages.push(Message::System {
            text: context::system_prompt(mode, environment, &instructions),
        });
        messages.extend(history.iter().cloned());
        messages.extend(extra);
        crate::llm::answer_every_tool_call(&mut messages);
        messages
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

    /// Alternates model calls and tool calls until the model answers without
    /// calling tools, the turn is cancelled, a limit is hit or something
    /// fails.
    async fn run_turn(
        &self,
        session_id: &SessionId,
        session: &Session,
        conv: &mut Conversation,
        turn: &mut TurnState,
        cancel: &CancellationToken,
    ) -> Result<StopReason, TurnError> {
        let caps = lock(&self.client_caps).clone();
        let env = ToolEnv {
            out: self.out.clone(),
            session_id: session_id.clone(),
            cwd: session.cwd.clone(),
            client_read: caps.fs.read_text_file,
            client_write: caps.fs.write_text_file,
            client_terminal: caps.terminal,
            local: session.local.clone(),
            dropped: self.dropped.clone(),
            cancel: cancel.clone(),
        };
        let mut requests = 0usize;
        loop {
            if cancel.is_cancelled() {
                return Ok(StopReason::Cancelled);
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
                return Ok(StopReason::MaxTurnRequests);
            }
            requests += 1;
            if let Some(stop) = self
                .maybe_compact(session_id, session, conv, turn, cancel)
                .await?
            {
                return Ok(stop);
            }
            let messages = self.messages_for_model(session, &conv.messages, None).await;
            let reply = match self
                .call_model(session_id, session, &messages, cancel, Show::Answer)
                .await
            {
                Ok(reply) => reply,
                Err(CallFailure::Cancelled { partial }) => {
                    if !partial.is_empty() {
                        let m = vec![Message::assistant(partial)];
                        self.record(session_id, session, conv, turn, m, None)
                            .await?;
                    }
                    return Ok(StopReason::Cancelled);
                }
                Err(CallFailure::Failed(failure)) => {
                    if !failure.partial.is_empty() {
                        let m = vec![Message::assistant(failure.partial.clone())];
                        self.record(session_id, session, conv, turn, m, None)
                            .await?;
                    }
                    self.report_error(session_id, &failure.message()).await;
                    return Err(TurnError::Model(failure));
                }
            };
            let tokens = reply.usage.map(|(input, output)| input + output);
            if tokens.is_some() {
                conv.context_tokens = tokens;
            }
            let tool_calls = reply.tool_calls.clone();
            let answer = Message::Assistant {
                text: reply.text,
                tool_calls: reply.tool_calls,
                thinking: reply.thinking,
            };
            self.record(session_id, session, conv, turn, vec![answer], tokens)
                .await?;
            if tool_calls.is_empty() {
                return Ok(match reply.finish {
                    FinishReason::Length => StopReason::MaxTokens,
                    FinishReason::ContentFilter => StopReason::Refusal,
                    _ => StopReason::EndTurn,
                });
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
                let m = vec![Message::Tool {
                    call_id: call.id.clone(),
                    content: result,
                }];
                self.record(session_id, session, conv, turn, m, None)
                    .await?;
            }
            if cancelled || cancel.is_cancelled() {
                return Ok(StopReason::Cancelled);
            }
        }
    }
}
