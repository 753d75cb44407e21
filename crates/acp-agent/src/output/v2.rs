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
//!   of the two texts;
//! - `plan` becomes `plan_update` of the session's one plan, `plan`;
//! - available commands get `type: command` (their input `type: text`),
//!   config options `configId` for `id`, and `current_mode_update` is left
//!   out: the `config_option_update` that follows it carries the mode;
//! - `session_info_update` and `usage_update` are the same in both versions.
//!
//! While a session's history is replayed (`session/resume` with
//! `replayFrom`, see [`Sink::begin_replay`]), each message is sent whole
//! (`user_message`, `agent_message`, `agent_thought` with all its content)
//! rather than in chunks. Replayed messages get new ids: the ids a turn used
//! are not stored.

use super::PermissionAsk;
use acp::ConnectionError;
use acp::schema::{self as v1, v2};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The id of the one plan a session has.
const PLAN_ID: &str = "plan";

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
                tool_call_to_v2(call).into()
            }
            U::ToolCallUpdate(u) => {
                self.end_message(session);
                tool_call_update_to_v2(u).into()
            }
            U::Plan(plan) => {
                self.end_message(session);
                let entries = convert(&plan.entries)?;
                v2::PlanUpdate::new(v2::PlanItems::new(PLAN_ID, entries)).into()
            }
            U::AvailableCommandsUpdate(u) => {
                let commands = u
                    .available_commands
                    .iter()
                    .filter_map(command_to_v2)
                    .collect();
                v2::AvailableCommandsUpdate::new(commands).into()
            }
            U::ConfigOptionUpdate(u) => {
                v2::ConfigOptionUpdate::new(config_options_to_v2(&u.config_options)).into()
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
                    call = call.content(vec![content_to_v2(diff)]);
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

/// `value` as the type that has the same JSON, if it has.
fn convert<T: serde::Serialize, U: serde::de::DeserializeOwned>(value: &T) -> Option<U> {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
}

/// A v1 content block as v2's (the same but for a resource link's size,
/// unsigned in v2).
pub fn block_to_v2(block: v1::ContentBlock) -> v2::ContentBlock {
    match block {
        v1::ContentBlock::Text(t) => v2::ContentBlock::Text(t),
        v1::ContentBlock::Image(i) => v2::ContentBlock::Image(i),
        v1::ContentBlock::Audio(a) => v2::ContentBlock::Audio(a),
        v1::ContentBlock::Resource(r) => v2::ContentBlock::Resource(r),
        other => convert(&other).unwrap_or_else(|| "[content v2 cannot show]".into()),
    }
}

/// A v2 content block as v1's (a resource link loses its icons).
pub fn block_to_v1(block: v2::ContentBlock) -> v1::ContentBlock {
    match block {
        v2::ContentBlock::Text(t) => v1::ContentBlock::Text(t),
        v2::ContentBlock::Image(i) => v1::ContentBlock::Image(i),
        v2::ContentBlock::Audio(a) => v1::ContentBlock::Audio(a),
        v2::ContentBlock::Resource(r) => v1::ContentBlock::Resource(r),
        v2::ContentBlock::ResourceLink(mut l) => {
            l.icons = None;
            convert(&l)
                .map(v1::ContentBlock::ResourceLink)
                .unwrap_or_else(|| format!("[resource {}]", l.uri).into())
        }
        other => convert(&other).unwrap_or_else(|| "[content of an unknown kind]".into()),
    }
}

/// v1's `tool_call` as the v2 upsert that creates it.
fn tool_call_to_v2(call: v1::ToolCall) -> v2::ToolCallUpdate {
    let mut out = v2::ToolCallUpdate::new(call.tool_call_id)
        .title(call.title)
        .kind(call.kind)
        .status(status_to_v2(&call.status));
    if !call.content.is_empty() {
        out = out.content(
            call.content
                .into_iter()
                .map(content_to_v2)
                .collect::<Vec<_>>(),
        );
    }
    if !call.locations.is_empty() {
        out = out.locations(call.locations);
    }
    out.raw_input = call.raw_input.map(Some);
    out.raw_output = call.raw_output.map(Some);
    out.name = call.name.map(Some);
    out.meta = call.meta.map(Some);
    out
}

/// v1's `tool_call_update` as v2's (the fields it has set, the others kept).
fn tool_call_update_to_v2(u: v1::ToolCallUpdate) -> v2::ToolCallUpdate {
    let mut out = v2::ToolCallUpdate::new(u.tool_call_id);
    out.title = u.title.map(Some);
    out.kind = u.kind.map(Some);
    out.status = u.status.map(|s| Some(status_to_v2(&s)));
    out.name = u.name.map(Some);
    out.content = u
        .content
        .map(|c| Some(c.into_iter().map(content_to_v2).collect()));
    out.locations = u.locations.map(Some);
    out.raw_input = u.raw_input.map(Some);
    out.raw_output = u.raw_output.map(Some);
    out.meta = u.meta.map(Some);
    out
}

fn status_to_v2(status: &v1::ToolCallStatus) -> v2::ToolCallStatus {
    v2::ToolCallStatus::from(status.as_str())
}

/// v1 tool call content as v2's: a diff becomes a structured file change.
fn content_to_v2(content: v1::ToolCallContent) -> v2::ToolCallContent {
    match content {
        v1::ToolCallContent::Content(c) => block_to_v2(c.content).into(),
        v1::ToolCallContent::Diff(d) => {
            file_change(&d.path, d.old_text.as_deref(), &d.new_text).into()
        }
        v1::ToolCallContent::Terminal(t) => v2::ToolCallContent::Terminal(t),
        other => convert(&other)
            .unwrap_or_else(|| v2::ContentBlock::from("[tool output v2 cannot show]").into()),
    }
}

/// The structured change of the file `path` from `old` (`None`: it is new)
/// to `new`, with its Git patch.
pub fn file_change(path: &str, old: Option<&str>, new: &str) -> v2::Diff {
    let (change, old_label) = match old {
        None => (v2::DiffChange::add(path), "/dev/null".to_string()),
        Some(_) => (v2::DiffChange::modify(path), format!("a{path}")),
    };
    let unified = similar::TextDiff::from_lines(old.unwrap_or(""), new)
        .unified_diff()
        .context_radius(3)
        .header(&old_label, &format!("b{path}"))
        .to_string();
    let mut patch = format!("diff --git a{path} b{path}\n");
    if old.is_none() {
        patch.push_str("new file mode 100644\n");
    }
    patch.push_str(&unified);
    v2::Diff::new(vec![change.file_type(v2::DiffFileType::Text)]).patch(v2::DiffPatch::git(patch))
}

/// A v1 available command as v2's.
fn command_to_v2(command: &v1::AvailableCommand) -> Option<v2::AvailableCommand> {
    let mut value = serde_json::to_value(command).ok()?;
    value["type"] = json!("command");
    if let Some(input) = value.get_mut("input").and_then(Value::as_object_mut) {
        input.insert("type".into(), json!("text"));
    }
    serde_json::from_value(value).ok()
}

/// v1 config options as v2's (`id` is `configId`).
pub fn config_options_to_v2(options: &[v1::SessionConfigOption]) -> Vec<v2::SessionConfigOption> {
    options
        .iter()
        .filter_map(|o| {
            let mut value = serde_json::to_value(o).ok()?;
            let object = value.as_object_mut()?;
            let id = object.remove("id")?;
            object.insert("configId".into(), id);
            serde_json::from_value(value).ok()
        })
        .collect()
}

/// v1 available commands as v2's.
pub fn commands_to_v2(commands: &[v1::AvailableCommand]) -> Vec<v2::AvailableCommand> {
    commands.iter().filter_map(command_to_v2).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_added_and_an_edit_modifies() {
        let added = serde_json::to_value(file_change("/w/a.txt", None, "x\n")).unwrap();
        assert_eq!(
            added,
            json!({
                "changes": [{"operation": "add", "path": "/w/a.txt", "fileType": "text"}],
                "patch": {"format": "git_patch", "text":
                    "diff --git a/w/a.txt b/w/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/w/a.txt\n@@ -0,0 +1 @@\n+x\n"}
            })
        );
        let modified = serde_json::to_value(file_change("/w/a.txt", Some("x\n"), "y\n")).unwrap();
        assert_eq!(
            modified["patch"]["text"],
            "diff --git a/w/a.txt b/w/a.txt\n--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1 +1 @@\n-x\n+y\n"
        );
        assert_eq!(modified["changes"][0]["operation"], "modify");
    }

    #[test]
    fn config_options_are_renamed() {
        let v1_option = v1::SessionConfigOption::select(
            "mode",
            "Mode",
            "ask",
            vec![v1::SessionConfigSelectOption::new("ask", "Ask")],
        );
        let v2_options = config_options_to_v2(&[v1_option]);
        let value = serde_json::to_value(&v2_options).unwrap();
        assert_eq!(value[0]["configId"], "mode");
        assert_eq!(value[0]["currentValue"], "ask");
        assert!(value[0].get("id").is_none());
    }
}
