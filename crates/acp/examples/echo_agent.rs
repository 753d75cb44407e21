//! A complete, minimal ACP agent: it echoes the user's prompt back, word by word.
//!
//! The agent speaks newline-delimited JSON-RPC on its standard input and
//! output, so an editor (or this crate's `client` example) runs it as a child
//! process:
//!
//! ```text
//! cargo run -q -p acp --example client -- "cargo run -q -p acp --example echo_agent" -- hello world
//! ```
//!
//! Built with feature `v2` (`cargo run -p acp --features v2 --example
//! echo_agent`), the same program serves protocol v2 too: an
//! [`AgentRouter`](acp::negotiate::AgentRouter) reads the client's
//! `initialize` and hands the connection to the v1 agent or to the v2 one
//! (module `v2` below). Without the feature it serves v1 only.
//!
//! What it implements, v1:
//!
//! - `initialize`: protocol version 1, no authentication methods.
//! - `session/new`: hands out session ids `echo-1`, `echo-2`, …
//! - `session/prompt`: streams the prompt's text back as several
//!   `agent_message_chunk` updates (one per word, with a short pause so the
//!   streaming is visible), then ends the turn with `end_turn`. A prompt for
//!   a session it did not create is refused with "resource not found".
//! - `session/cancel`: stops streaming and ends the turn with `cancelled`.
//!
//! And v2 (the baseline every v2 agent serves):
//!
//! - `initialize`: protocol version 2, `capabilities.session: {}`.
//! - `session/new`, `session/list` (with the `cwd` filter; one page),
//!   `session/close` (which cancels the running turn and waits for its end).
//! - `session/prompt`: answered at once with the user message's id
//!   (`echo-1-user-1`, …), after the `user_message` update that inserts it;
//!   the turn then runs after the answer: `running`, the prompt's words as
//!   `agent_message_chunk`s of the message `echo-1-agent-1`, then `idle`
//!   with `end_turn`. A prompt sent while a turn runs is inserted at once
//!   and answered when the running turn ends.
//! - `session/cancel` (and `session/close`): the turn stops streaming and
//!   ends with `idle`/`cancelled`.
//! - `session/resume`: makes a closed session active again; with
//!   `replayFrom: {"type":"start"}` it first replays the conversation (each
//!   message whole, with its id), then sends the current state.
//!
//! Standard output belongs to the protocol: log to standard error only.

// This file is also built as a binary of `acp-interop` and `acp-e2e`, where
// `feature = "v2"` means their feature `v2`, which turns on acp's.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use acp::schema::{
    AgentSide, ContentBlock, Error, Implementation, InitializeRequest, InitializeResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, ProtocolVersion,
    SessionId, SessionNotification, SessionUpdate, StopReason,
};
use acp::{Agent, AgentSideConnection, RequestContext, Transport};

/// The pause between two streamed words.
const WORD_DELAY: Duration = Duration::from_millis(30);

#[derive(Default)]
struct EchoAgent {
    /// The last session number handed out.
    last_session: AtomicU64,
    /// The sessions this agent created; prompts name one of them.
    sessions: Mutex<HashSet<SessionId>>,
}

impl Agent for EchoAgent {
    async fn initialize(
        &self,
        request: InitializeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<InitializeResponse, Error> {
        eprintln!(
            "echo_agent: client speaks protocol version {}",
            request.protocol_version
        );
        // We only speak version 1. A client that wanted another version reads
        // ours and decides whether to go on. `InitializeResponse::new` lists no
        // authentication methods, so no `authenticate` call is needed.
        Ok(InitializeResponse::new(ProtocolVersion::V1)
            .agent_info(Implementation::new("echo_agent", env!("CARGO_PKG_VERSION"))))
    }

    async fn new_session(
        &self,
        request: NewSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        let n = self.last_session.fetch_add(1, Ordering::Relaxed) + 1;
        let id = SessionId::new(format!("echo-{n}"));
        eprintln!("echo_agent: session {id} in {}", request.cwd);
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(id.clone());
        Ok(NewSessionResponse::new(id))
    }

    async fn prompt(
        &self,
        request: PromptRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        let known = self
            .sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(&request.session_id);
        if !known {
            return Err(Error::resource_not_found(None)
                .data(format!("no session {} on this agent", request.session_id)));
        }

        // The text of the prompt; images and other blocks are ignored.
        let text: Vec<&str> = request
            .prompt
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        let text = text.join("\n");

        // One chunk per word, keeping the whitespace that follows it, so the
        // chunks put together are the prompt's text exactly.
        for word in text.split_inclusive(char::is_whitespace) {
            tokio::select! {
                // Cancelled by the runtime when the client sends
                // `session/cancel` for this session.
                _ = cx.cancelled() => {
                    // A cancelled turn must still be answered, with `cancelled`.
                    return Ok(PromptResponse::new(StopReason::Cancelled));
                }
                _ = tokio::time::sleep(WORD_DELAY) => {}
            }
            send_chunk(cx.peer(), &request.session_id, word).await?;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    // `session/cancel` needs no method of its own here: the runtime cancels
    // the prompt's context (see `prompt`) before calling `Agent::cancel`,
    // whose default does nothing else.
}

/// Streams one piece of the agent's answer to the client.
async fn send_chunk(
    client: &AgentSideConnection,
    session: &SessionId,
    text: &str,
) -> Result<(), Error> {
    let update = SessionUpdate::agent_message(text);
    client
        .session_notification(SessionNotification::new(session.clone(), update))
        .await?; // Fails only if the client went away.
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Serve until the client closes our standard input.
    #[cfg(not(feature = "v2"))]
    AgentSideConnection::serve(Transport::stdio(), |_| EchoAgent::default()).await?;
    // One program, both versions: the client's `initialize` picks the agent.
    #[cfg(feature = "v2")]
    acp::negotiate::AgentRouter::new()
        .v1(|_| EchoAgent::default())
        .v2(|_| v2::EchoAgent::default())
        .serve(Transport::stdio())
        .await?;
    Ok(())
}

/// The same agent in protocol v2.
#[cfg(feature = "v2")]
mod v2 {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use acp::RequestContext;
    use acp::schema::v2::{
        AbsolutePath, AgentCapabilities, AgentSide, CloseSessionRequest, CloseSessionResponse,
        ContentBlock, Error, IdleStateUpdate, InitializeRequest, InitializeResponse,
        ListSessionsRequest, ListSessionsResponse, MessageId, NewSessionRequest,
        NewSessionResponse, PromptRequest, PromptResponse, ReplayFrom, ResumeSessionRequest,
        ResumeSessionResponse, SessionCapabilities, SessionId, SessionInfo, SessionUpdate,
        StateUpdate, StopReason, UpdateSessionNotification, session_not_found,
    };
    use acp::schema::{Implementation, ProtocolVersion};

    use super::WORD_DELAY;

    /// A v2 session: its directory, its conversation, whether a client
    /// has it open, and the lock its turns take one after the other.
    struct Session {
        /// Its number, for listing the sessions in the order they were made.
        number: u64,
        cwd: AbsolutePath,
        active: bool,
        /// The conversation, message by message, for `session/resume`.
        history: Vec<SessionUpdate>,
        /// The number of prompts so far (for the message ids).
        prompts: u64,
        turn: Arc<tokio::sync::Mutex<()>>,
    }

    #[derive(Default)]
    pub struct EchoAgent {
        last_session: Mutex<u64>,
        /// Shared with the running turns, which record what they said.
        sessions: Arc<Mutex<HashMap<SessionId, Session>>>,
    }

    type Sessions = Mutex<HashMap<SessionId, Session>>;

    /// `f` applied to the session `id`, or -32002 when there is none.
    fn with<T>(
        sessions: &Sessions,
        id: &SessionId,
        f: impl FnOnce(&mut Session) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut sessions = sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match sessions.get_mut(id) {
            Some(session) => f(session),
            None => Err(session_not_found(id.clone())),
        }
    }

    impl acp::v2::Agent for EchoAgent {
        async fn initialize(
            &self,
            request: InitializeRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<InitializeResponse, Error> {
            eprintln!(
                "echo_agent: v2 client {} {}",
                request.info.name, request.info.version
            );
            // `session: {}` is the baseline: new, list, resume, close,
            // prompt, cancel. No authentication methods.
            Ok(InitializeResponse::new(Implementation::new(
                "echo_agent",
                env!("CARGO_PKG_VERSION"),
            ))
            .protocol_version(ProtocolVersion::V2)
            .capabilities(AgentCapabilities::new().session(SessionCapabilities::new())))
        }

        async fn new_session(
            &self,
            request: NewSessionRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<NewSessionResponse, Error> {
            let n = {
                let mut last = self
                    .last_session
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                *last += 1;
                *last
            };
            let id = SessionId::new(format!("echo-{n}"));
            eprintln!("echo_agent: v2 session {id} in {}", request.cwd);
            let session = Session {
                number: n,
                cwd: request.cwd,
                active: true,
                history: Vec::new(),
                prompts: 0,
                turn: Arc::default(),
            };
            self.sessions
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .insert(id.clone(), session);
            Ok(NewSessionResponse::new(id))
        }

        async fn list_sessions(
            &self,
            request: ListSessionsRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<ListSessionsResponse, Error> {
            let sessions = self
                .sessions
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut found: Vec<(u64, SessionInfo)> = sessions
                .iter()
                .filter(|(_, s)| request.cwd.as_ref().is_none_or(|cwd| *cwd == s.cwd))
                .map(|(id, s)| (s.number, SessionInfo::new(id.clone(), s.cwd.clone())))
                .collect();
            found.sort_by_key(|(number, _)| *number);
            let found = found.into_iter().map(|(_, info)| info).collect();
            Ok(ListSessionsResponse::new(found))
        }

        async fn prompt(
            &self,
            request: PromptRequest,
            cx: RequestContext<AgentSide>,
        ) -> Result<PromptResponse, Error> {
            let session = request.session_id.clone();
            let (n, turn_lock) = with(&self.sessions, &session, |s| {
                if !s.active {
                    return Err(session_not_found(session.clone()));
                }
                s.prompts += 1;
                Ok((s.prompts, s.turn.clone()))
            })?;
            let user = MessageId::new(format!("{session}-user-{n}"));
            let reply = MessageId::new(format!("{session}-agent-{n}"));

            // Insert the user message: sent before the answer, it precedes it.
            let inserted = SessionUpdate::user_message(user.clone(), request.prompt.clone());
            record(&self.sessions, &session, inserted.clone());
            send(&cx, &session, inserted).await?;

            // The text of the prompt; images and other blocks are ignored.
            let text: Vec<&str> = request
                .prompt
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect();
            let text = text.join("\n");

            // The turn: after the answer, one at a time per session. `turn`
            // is cancelled by `session/cancel` and `session/close`.
            let turn = cx.clone();
            let sessions = self.sessions.clone();
            cx.after_response(async move {
                let _one_at_a_time = turn_lock.lock().await;
                let _ = send(&turn, &session, SessionUpdate::running()).await;
                let mut said = String::new();
                for word in text.split_inclusive(char::is_whitespace) {
                    tokio::select! {
                        _ = turn.cancelled() => break,
                        _ = tokio::time::sleep(WORD_DELAY) => {}
                    }
                    let chunk = SessionUpdate::agent_message_chunk(reply.clone(), word);
                    if send(&turn, &session, chunk).await.is_err() {
                        break; // The client went away.
                    }
                    said.push_str(word);
                }
                let said = SessionUpdate::agent_message(reply, vec![said.into()]);
                record(&sessions, &session, said);
                let stop = if turn.is_cancelled() {
                    StopReason::Cancelled
                } else {
                    StopReason::EndTurn
                };
                let _ = send(&turn, &session, SessionUpdate::idle(stop)).await;
            });
            Ok(PromptResponse::new(user))
        }

        async fn close_session(
            &self,
            request: CloseSessionRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<CloseSessionResponse, Error> {
            // The runtime cancelled the session's turn already; its last
            // updates (idle/cancelled) must precede this answer.
            let turn_lock = with(&self.sessions, &request.session_id, |s| {
                s.active = false;
                Ok(s.turn.clone())
            });
            if let Ok(turn_lock) = turn_lock {
                let _ended = turn_lock.lock().await;
            }
            // Closing an unknown session succeeds too.
            Ok(CloseSessionResponse::new())
        }

        async fn resume_session(
            &self,
            request: ResumeSessionRequest,
            cx: RequestContext<AgentSide>,
        ) -> Result<ResumeSessionResponse, Error> {
            let session = request.session_id.clone();
            let replay = match &request.replay_from {
                None => false,
                Some(ReplayFrom::Start(_)) => true,
                Some(other) => {
                    return Err(Error::invalid_params()
                        .data(format!("cannot replay from {}", serde_json::json!(other))));
                }
            };
            let (history, running) = with(&self.sessions, &session, |s| {
                if s.cwd != request.cwd {
                    return Err(
                        Error::invalid_params().data(format!("session {session} is in {}", s.cwd))
                    );
                }
                s.active = true;
                Ok((s.history.clone(), s.turn.try_lock().is_err()))
            })?;
            if replay {
                for message in history {
                    send(&cx, &session, message).await?;
                }
            }
            // The current state, after the replay and before the answer.
            let state = if running {
                StateUpdate::running()
            } else {
                StateUpdate::Idle(IdleStateUpdate::new())
            };
            send(&cx, &session, SessionUpdate::StateUpdate(state)).await?;
            Ok(ResumeSessionResponse::new())
        }
    }

    /// Adds a whole message to the session's conversation.
    fn record(sessions: &Sessions, session: &SessionId, message: SessionUpdate) {
        let _ = with(sessions, session, |s| {
            s.history.push(message);
            Ok(())
        });
    }

    /// Sends one update of `session` to the client.
    async fn send(
        cx: &RequestContext<AgentSide>,
        session: &SessionId,
        update: SessionUpdate,
    ) -> Result<(), Error> {
        cx.peer()
            .session_update(UpdateSessionNotification::new(session.clone(), update))
            .await?; // Fails only if the client went away.
        Ok(())
    }
}
