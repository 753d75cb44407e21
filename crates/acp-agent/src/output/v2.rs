//! The v2 rendering of session output.
//!
//! What the agent writes (v1's vocabulary) becomes, for a v2 client:
//!
//! - text chunks (`agent_message_chunk`, `agent_thought_chunk`,
//!   `user_message_chunk`) carry a message id: consecutive chunks of one kind
//!   are one message; a chunk of another kind, a tool call or a plan starts a
//!   new one. Ids are `<prefix>-<n>`, the prefix made when the connection
//!   starts, so they do not repeat in a session loaded again later;
//! - `tool_call` and `tool_call_update` become `tool_call_update`, the upsert
//!   by id (the first one creates the call);
//! - a diff (`path`, `oldText`, `newText`) becomes a structured file change:
//!   `add` for a new file, else `modify`, `fileType: text`, with a Git patch
//!   of the two texts (absolute paths, no `a/` or `b/` prefix);
//! - `plan` becomes `plan_update` of the session's one plan, `plan`;
//! - available commands get `type: command` (their input `type: text`),
//!   config options `configId` for `id`, and `current_mode_update` is left
//!   out: the `config_option_update` that follows it carries the mode;
//! - `session_info_update` and `usage_update` are the same in both versions.
//!
//! Each message is translated by `acp::map`, the translations of `acp`'s
//! bridge, so this agent writes v2 exactly as the bridge would in front of
//! its v1 side; what is its own here is the message ids and the replay.
//!
//! While a session's history is replayed (`session/resume` with
//! `replayFrom`, see [`Sink::begin_replay`]), each message is sent whole
//! (`user_message`, `agent_message`, `agent_thought` with all its content)
//! rather than in chunks. Replayed messages get new ids: the ids a turn used
//! are not stored.

use super::PermissionAsk;
use acp::ConnectionError;
use acp::map::{self, block_to_v2};
use acp::schema::{self as v1, v2};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The kinds of message a chunk belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Agent,
    Thought,
}

/// Renders session output for a v2 client.
pub struct Sink {
    conn: acp::v2::AgentSideConnection,
    /// The message each session's chunks go to now, if one is open.
    open: Mutex<HashMap<v1::SessionId, (Kind, v2::MessageId)>>,
    prefix: String,
    counter: AtomicU64,
    /// The sessions being replayed, each with the message gathered so far.
    replaying: Mutex<HashMap<v1::SessionId, Option<Gathered>>>,
}

/// A replayed message gathered from its chunks.
struct Gathered {
    kind: Kind,
    blocks: Vec<v2::ContentBlock>,
}

impl Gathered {
    /// The whole message, with a new id.
    fn into_update(self, id: v2::MessageId) -> v2::SessionUpdate {
        let message = v2::MessageUpdate::new(id).content(self.blocks);
        match self.kind {
            Kind::User => v2::SessionUpdate::UserMessage(message),
            Kind::Agent => v2::SessionUpdate::AgentMessage(message),
            Kind::Thought => v2::SessionUpdate::AgentThought(message),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Sink {
    /// A sink sending to `conn`.
    pub fn new(conn: acp::v2::AgentSideConnection) -> Sink {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        Sink {
            conn,
            open: Mutex::new(HashMap::new()),
            prefix: format!("m{nanos:x}"),
            counter: AtomicU64::new(0),
            replaying: Mutex::new(HashMap::new()),
        }
    }

    /// The connection to the client.
    pub fn connection(&self) -> &acp::v2::AgentSideConnection {
        &self.conn
    }

    /// A message id not used before on this connection.
    pub fn new_message_id(&self) -> v2::MessageId {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        v2::MessageId::new(format!("{}-{n}", self.prefix))
    }

    /// The id of the `kind` message open in `session`, opening one if needed.
    fn message_id(&self, session: &v1::SessionId, kind: Kind) -> v2::MessageId {
        let mut open = lock(&self.open);
        match open.get(session) {
            Some((k, id)) if *k == kind => id.clone(),
            _ => {
                let id = self.new_message_id();
                open.insert(session.clone(), (kind, id.clone()));
                id
            }
        }
    }

    /// Ends the message open in `session`: the next chunk starts another.
    pub fn end_message(&self, session: &v1::SessionId) {
        lock(&self.open).remove(session);
    }

    /// Forgets `session` (closed or deleted).
    pub fn forget(&self, session: &v1::SessionId) {
        self.end_message(session);
    }

    /// Sends a v2 update.
    pub async fn send(
        &self,
        session: &v1::SessionId,
        update: v2::SessionUpdate,
    ) -> Result<(), ConnectionError> {
        self.conn
            .session_update(v2::UpdateSessionNotification::new(session.clone(), update))
            .await
    }

    /// Sends `update` as v2 says it (nothing when v2 has no such update).
    pub async fn update(
        &self,
        session: &v1::SessionId,
        update: v1::SessionUpdate,
    ) -> Result<(), ConnectionError> {
        if lock(&self.replaying).contains_key(session) {
            return self.replay(session, update).await;
        }
        match self.to_v2(session, update) {
            Some(update) => self.send(session, update).await,
            None => Ok(()),
        }
    }

    /// From now until [`end_replay`](Self::end_replay), `session`'s messages
    /// are sent whole.
    pub fn begin_replay(&self, session: &v1::SessionId) {
        lock(&self.replaying).insert(session.clone(), None);
    }

    /// Sends the last replayed message and ends the replay of `session`.
    pub async fn end_replay(&self, session: &v1::SessionId) -> Result<(), ConnectionError> {
        let last = lock(&self.replaying).remove(session).flatten();
        match last {
            Some(message) => {
                let update = message.into_update(self.new_message_id());
                self.send(session, update).await
            }
            None => Ok(()),
        }
    }

    /// One replayed update: a chunk joins the message gathered (sent when
    /// the next message or another update comes).
    async fn replay(
        &self,
        session: &v1::SessionId,
        update: v1::SessionUpdate,
    ) -> Result<(), ConnectionError> {
        use v1::SessionUpdate as U;
        let chunk = match &update {
            U::UserMessageChunk(c) | U::AgentMessageChunk(c) | U::AgentThoughtChunk(c) => {
                chunk_kind(&update).map(|kind| (kind, c.content.clone()))
            }
            _ => None,
        };
        let finished = {
            let mut replaying = lock(&self.replaying);
            let gathered = replaying.entry(session.clone()).or_default();
            match chunk {
                Some((kind, block)) => match gathered {
                    Some(g) if g.kind == kind => {
                        g.blocks.push(block_to_v2(block));
                        None
                    }
                    _ => gathered.replace(Gathered {
                        kind,
                        blocks: vec![block_to_v2(block)],
                    }),
                },
                None => gathered.take(),
            }
        };
        if let Some(message) = finished {
            let update = message.into_update(self.new_message_id());
            self.send(session, update).await?;
        }
        if chunk_kind(&update).is_none()
            && let Some(update) = self.to_v2(session, update)
        {
            self.send(session, update).await?;
        }
        Ok(())
    }

    /// `update` as a v2 update of `session`.
    fn to_v2(
        &self,
        session: &v1::SessionId,
        update: v1::SessionUpdate,
    ) -> Option<v2::SessionUpdate> {
        use v1::SessionUpdate as U;
        Some(match update {
            U::UserMessageChunk(c) => v2::SessionUpdate::user_message_chunk(
                self.message_id(session, Kind::User),
                block_to_v2(c.content),
            ),
            U::AgentMessageChunk(c) => v2::SessionUpdate::agent_message_chunk(
                self.message_id(session, Kind::Agent),
                block_to_v2(c.content),
            ),
            U::AgentThoughtChunk(c) => v2::SessionUpdate::agent_thought_chunk(
                self.message_id(session, Kind::Thought),
                block_to_v2(c.content),
            ),
            U::ToolCall(call) => {
                self.end_message(session);
                map::tool_call_to_v2(call).into()
            }
            U::ToolCallUpdate(u) => {
                self.end_message(session);
                map::tool_call_update_to_v2(u).into()
            }
            U::Plan(plan) => {
                self.end_message(session);
                map::plan_to_v2(plan).into()
            }
            U::AvailableCommandsUpdate(u) => {
                let commands = u
                    .available_commands
                    .into_iter()
                    .map(map::command_to_v2)
                    .collect();
                let mut out = v2::AvailableCommandsUpdate::new(commands);
                out.meta = u.meta;
                out.into()
            }
            U::ConfigOptionUpdate(u) => {
                let options = u
                    .config_options
                    .into_iter()
                    .map(map::config_option_to_v2)
                    .collect();
                let mut out = v2::ConfigOptionUpdate::new(options);
                out.meta = u.meta;
                out.into()
            }
            U::SessionInfoUpdate(u) => u.into(),
            U::UsageUpdate(u) => u.into(),
            _ => return None,
        })
    }

    /// Asks `ask` with v2's request: its title is the tool call's, its
    /// subject the command (for a command) or the tool call with the file
    /// change it would make.
    pub async fn request_permission(
        &self,
        ask: PermissionAsk,
    ) -> Result<Option<v1::PermissionOptionId>, ConnectionError> {
        let subject: v2::RequestPermissionSubject = match ask.command {
            Some((command, cwd)) => {
                v2::CommandPermissionSubject::new(command, cwd.display().to_string())
                    .tool_call_id(ask.tool_call_id)
                    .into()
            }
            None => {
                let mut call = v2::ToolCallUpdate::new(ask.tool_call_id);
                if let Some(diff) = ask.diff {
                    call = call.content(vec![map::tool_call_content_to_v2(diff)]);
                }
                call.into()
            }
        };
        let req = v2::RequestPermissionRequest::new(ask.session_id, ask.title, ask.options)
            .description(format!(
                "Always allowing or rejecting covers {}.",
                ask.covers
            ))
            .subject(subject);
        let answer = self.conn.request_permission(req).await?;
        Ok(match answer.outcome {
            v2::RequestPermissionOutcome::Selected(s) => Some(s.option_id),
            _ => None,
        })
    }
}

/// The kind of message a chunk belongs to; `None` for other updates.
fn chunk_kind(update: &v1::SessionUpdate) -> Option<Kind> {
    match update {
        v1::SessionUpdate::UserMessageChunk(_) => Some(Kind::User),
        v1::SessionUpdate::AgentMessageChunk(_) => Some(Kind::Agent),
        v1::SessionUpdate::AgentThoughtChunk(_) => Some(Kind::Thought),
        _ => None,
    }
}
