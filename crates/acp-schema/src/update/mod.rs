//! Session updates: the `session/update` notifications an agent streams to the
//! client while it works (message chunks, tool calls, plans, mode and config
//! changes, usage, notices, context compaction).
//!
//! An update of a kind this version does not know decodes into
//! [`SessionUpdate::Other`] and re-encodes unchanged.

use crate::RawJson;
use crate::util::{id_type, setters, string_enum, tagged_union, wire_struct};
use crate::{
    ContentBlock, Meta, Plan, SessionConfigOption, SessionId, SessionModeId, ToolCall,
    ToolCallUpdate,
};
#[cfg(feature = "unstable-subagents")]
use crate::{SessionMessage, SessionMessageChunk, SubagentUpdate};
use serde::{Deserialize, Deserializer, Serialize};
use std::borrow::Cow;

mod compaction;
pub use compaction::*;

wire_struct! {
    /// Params of `session/update`: one update about a session.
    pub struct SessionNotification {
        /// The session the update is about.
        pub session_id: SessionId = "sessionId" (Req),
        /// What happened.
        pub update: SessionUpdate = "update" (Obj),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionNotification {
    /// Reports `update` for `session_id`.
    pub fn new(session_id: impl Into<SessionId>, update: impl Into<SessionUpdate>) -> Self {
        SessionNotification {
            session_id: session_id.into(),
            update: update.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SessionNotification { opt { meta: Meta } });

tagged_union! {
    /// One kind of progress report in a session. Tagged by `sessionUpdate`.
    pub enum SessionUpdate: tag "sessionUpdate" {
        /// A piece of the user's message (e.g. while replaying history in `session/load`).
        "user_message_chunk" => UserMessageChunk(ContentChunk),
        /// A piece of the agent's reply.
        "agent_message_chunk" => AgentMessageChunk(ContentChunk),
        /// A piece of the agent's reasoning.
        "agent_thought_chunk" => AgentThoughtChunk(ContentChunk),
        /// A new tool call.
        "tool_call" => ToolCall(ToolCall),
        /// A change to an existing tool call.
        "tool_call_update" => ToolCallUpdate(ToolCallUpdate),
        /// The agent's plan, complete, replacing any earlier one.
        "plan" => Plan(Plan),
        /// The slash commands the agent offers, complete, replacing any earlier list.
        "available_commands_update" => AvailableCommandsUpdate(AvailableCommandsUpdate),
        /// The session's mode changed.
        "current_mode_update" => CurrentModeUpdate(CurrentModeUpdate),
        /// The session's config options changed.
        "config_option_update" => ConfigOptionUpdate(ConfigOptionUpdate),
        /// The session's title or timestamp changed.
        "session_info_update" => SessionInfoUpdate(SessionInfoUpdate),
        /// Context window use and cost.
        "usage_update" => UsageUpdate(UsageUpdate),
        /// A passing message for the user, not part of the history (needs the
        /// `session.notices` client capability).
        "notice" => Notice(Notice),
        /// A context compaction started or changed (needs the `session.compaction`
        /// client capability).
        "compaction_update" => CompactionUpdate(CompactionUpdate),
        /// A block appended to a compaction's summary (needs the `session.compaction`
        /// client capability).
        "compaction_summary_chunk" => CompactionSummaryChunk(CompactionSummaryChunk),
        /// The session created or changed a child session (needs the
        /// `subagents` client capability).
        "subagent_update" => SubagentUpdate(SubagentUpdate) if "unstable-subagents",
        /// A message between sessions, created or replaced whole.
        "session_message" => SessionMessage(SessionMessage) if "unstable-subagents",
        /// A block streamed into a message between sessions.
        "session_message_chunk" => SessionMessageChunk(SessionMessageChunk) if "unstable-subagents",
    }
}

impl SessionUpdate {
    /// A chunk of the agent's reply.
    pub fn agent_message(content: impl Into<ContentBlock>) -> Self {
        SessionUpdate::AgentMessageChunk(ContentChunk::new(content))
    }

    /// A chunk of the agent's reasoning.
    pub fn agent_thought(content: impl Into<ContentBlock>) -> Self {
        SessionUpdate::AgentThoughtChunk(ContentChunk::new(content))
    }

    /// A chunk of the user's message.
    pub fn user_message(content: impl Into<ContentBlock>) -> Self {
        SessionUpdate::UserMessageChunk(ContentChunk::new(content))
    }

    /// The `sessionUpdate` tag of this update (for an unknown one, as received;
    /// empty in the absurd case of a tag that needs escapes in JSON).
    pub fn kind(&self) -> &str {
        match self {
            SessionUpdate::UserMessageChunk(_) => "user_message_chunk",
            SessionUpdate::AgentMessageChunk(_) => "agent_message_chunk",
            SessionUpdate::AgentThoughtChunk(_) => "agent_thought_chunk",
            SessionUpdate::ToolCall(_) => "tool_call",
            SessionUpdate::ToolCallUpdate(_) => "tool_call_update",
            SessionUpdate::Plan(_) => "plan",
            SessionUpdate::AvailableCommandsUpdate(_) => "available_commands_update",
            SessionUpdate::CurrentModeUpdate(_) => "current_mode_update",
            SessionUpdate::ConfigOptionUpdate(_) => "config_option_update",
            SessionUpdate::SessionInfoUpdate(_) => "session_info_update",
            SessionUpdate::UsageUpdate(_) => "usage_update",
            SessionUpdate::Notice(_) => "notice",
            SessionUpdate::CompactionUpdate(_) => "compaction_update",
            SessionUpdate::CompactionSummaryChunk(_) => "compaction_summary_chunk",
            #[cfg(feature = "unstable-subagents")]
            SessionUpdate::SubagentUpdate(_) => "subagent_update",
            #[cfg(feature = "unstable-subagents")]
            SessionUpdate::SessionMessage(_) => "session_message",
            #[cfg(feature = "unstable-subagents")]
            SessionUpdate::SessionMessageChunk(_) => "session_message_chunk",
            SessionUpdate::Other(map) => match map.get_str("sessionUpdate") {
                Some(Cow::Borrowed(tag)) => tag,
                _ => "",
            },
        }
    }
}

/// Implements `From<$ty> for SessionUpdate`.
macro_rules! into_update {
    ($($ty:ident),* $(,)?) => {$(
        impl From<$ty> for SessionUpdate {
            fn from(value: $ty) -> Self {
                SessionUpdate::$ty(value)
            }
        }
    )*};
}

#[cfg(feature = "unstable-subagents")]
into_update!(SubagentUpdate, SessionMessage, SessionMessageChunk);

into_update!(
    ToolCall,
    ToolCallUpdate,
    Plan,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    ConfigOptionUpdate,
    SessionInfoUpdate,
    UsageUpdate,
    Notice,
    CompactionUpdate,
    CompactionSummaryChunk,
);

id_type!(
    /// Identifies a message within a session; every chunk of one message carries the same id.
    MessageId
);

wire_struct! {
    /// One streamed piece of a user message, agent message or agent thought.
    pub struct ContentChunk {
        /// The piece of content.
        pub content: ContentBlock = "content" (Obj),
        /// The message this chunk belongs to; a new id starts a new message.
        pub message_id: Option<MessageId> = "messageId" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ContentChunk {
    /// A chunk carrying `content`.
    pub fn new(content: impl Into<ContentBlock>) -> Self {
        ContentChunk {
            content: content.into(),
            message_id: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ContentChunk { opt { message_id: MessageId, meta: Meta } });

wire_struct! {
    /// The complete list of commands the agent currently offers.
    #[derive(Default)]
    pub struct AvailableCommandsUpdate {
        /// The commands; malformed entries are dropped.
        pub available_commands: Vec<AvailableCommand> = "availableCommands" (Items),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AvailableCommandsUpdate {
    /// An update listing `available_commands`.
    pub fn new(available_commands: Vec<AvailableCommand>) -> Self {
        AvailableCommandsUpdate {
            available_commands,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(AvailableCommandsUpdate { opt { meta: Meta } });

wire_struct! {
    /// A command the user can invoke (typically as `/name`).
    pub struct AvailableCommand {
        /// The command's name (`create_plan`).
        pub name: String = "name" (Req),
        /// What the command does, for people to read.
        pub description: String = "description" (Req),
        /// What input the command takes, if any.
        pub input: Option<AvailableCommandInput> = "input" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AvailableCommand {
    /// A command `name` described by `description`, taking no input.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        AvailableCommand {
            name: name.into(),
            description: description.into(),
            input: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(AvailableCommand { opt { input: AvailableCommandInput, meta: Meta } });

/// The input a command takes. Only free text (an object with `hint`) is defined;
/// any other shape is kept verbatim in `Other`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum AvailableCommandInput {
    /// Everything typed after the command name is its input.
    Unstructured(UnstructuredCommandInput),
    /// A shape this version does not know, re-encoded unchanged.
    Other(RawJson),
}

impl<'de> Deserialize<'de> for AvailableCommandInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawJson::deserialize(d)?;
        let hint = raw.is_object()
            && raw
                .decode::<crate::RawObject>()
                .is_ok_and(|o| o.contains_key("hint"));
        if hint {
            crate::util::wire::nested_at("", raw.get()).map(AvailableCommandInput::Unstructured)
        } else {
            Ok(AvailableCommandInput::Other(raw))
        }
    }
}

impl crate::util::wire::Tolerant for AvailableCommandInput {
    fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        crate::util::wire::tolerant_via_raw(d)
    }
}

impl From<UnstructuredCommandInput> for AvailableCommandInput {
    fn from(input: UnstructuredCommandInput) -> Self {
        AvailableCommandInput::Unstructured(input)
    }
}

wire_struct! {
    /// Free-text command input.
    pub struct UnstructuredCommandInput {
        /// Placeholder text shown while nothing is typed yet.
        pub hint: String = "hint" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl UnstructuredCommandInput {
    /// Free-text input with placeholder `hint`.
    pub fn new(hint: impl Into<String>) -> Self {
        UnstructuredCommandInput {
            hint: hint.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(UnstructuredCommandInput { opt { meta: Meta } });

wire_struct! {
    /// The session switched to another mode.
    pub struct CurrentModeUpdate {
        /// The mode now active.
        pub current_mode_id: SessionModeId = "currentModeId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CurrentModeUpdate {
    /// The session is now in `current_mode_id`.
    pub fn new(current_mode_id: impl Into<SessionModeId>) -> Self {
        CurrentModeUpdate {
            current_mode_id: current_mode_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CurrentModeUpdate { opt { meta: Meta } });

wire_struct! {
    /// The session's config options, complete, with their current values.
    #[derive(Default)]
    pub struct ConfigOptionUpdate {
        /// Every option; malformed entries are dropped.
        pub config_options: Vec<SessionConfigOption> = "configOptions" (Items),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ConfigOptionUpdate {
    /// An update listing `config_options`.
    pub fn new(config_options: Vec<SessionConfigOption>) -> Self {
        ConfigOptionUpdate {
            config_options,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ConfigOptionUpdate { opt { meta: Meta } });

wire_struct! {
    /// A partial change to the session's metadata.
    ///
    /// `title` and `updatedAt` are patches: absent (`None`) leaves the value as it
    /// was, `null` (`Some(None)`) clears it, a string (`Some(Some(…))`) replaces it.
    #[derive(Default)]
    pub struct SessionInfoUpdate {
        /// The session's title, for people to read.
        pub title: Option<Option<String>> = "title" (Patch),
        /// When the session was last active (ISO 8601).
        pub updated_at: Option<Option<String>> = "updatedAt" (Patch),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionInfoUpdate {
    /// An update that changes nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(Some(title.into()));
        self
    }

    /// Clears the title (sends `null`).
    #[must_use]
    pub fn clear_title(mut self) -> Self {
        self.title = Some(None);
        self
    }

    /// Sets the last-activity timestamp (ISO 8601).
    #[must_use]
    pub fn updated_at(mut self, updated_at: impl Into<String>) -> Self {
        self.updated_at = Some(Some(updated_at.into()));
        self
    }

    /// Clears the last-activity timestamp (sends `null`).
    #[must_use]
    pub fn clear_updated_at(mut self) -> Self {
        self.updated_at = Some(None);
        self
    }
}

setters!(SessionInfoUpdate { opt { meta: Meta } });

wire_struct! {
    /// How much of the context window is in use, and what the session has cost.
    pub struct UsageUpdate {
        /// Tokens currently in the context.
        pub used: u64 = "used" (Req),
        /// Size of the context window, in tokens.
        pub size: u64 = "size" (Req),
        /// What the session has cost so far.
        pub cost: Option<Cost> = "cost" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl UsageUpdate {
    /// `used` of `size` tokens.
    pub fn new(used: u64, size: u64) -> Self {
        UsageUpdate {
            used,
            size,
            cost: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(UsageUpdate { opt { cost: Cost, meta: Meta } });

wire_struct! {
    /// The total cost of a session.
    pub struct Cost {
        /// The amount so far.
        pub amount: f64 = "amount" (Req),
        /// Its unit: an ISO 4217 code (`USD`) or something else (`credits`).
        pub currency: String = "currency" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Cost {
    /// `amount` of `currency`.
    pub fn new(amount: f64, currency: impl Into<String>) -> Self {
        Cost {
            amount,
            currency: currency.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Cost { opt { meta: Meta } });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ToolCallStatus, ToolKind, decode};

    fn round_trip(raw: &str) -> SessionNotification {
        let n: SessionNotification = decode(raw).unwrap();
        assert_eq!(serde_json::to_string(&n).unwrap(), raw);
        n
    }

    #[test]
    fn agent_message_chunk() {
        let n = SessionNotification::new("s", SessionUpdate::agent_message("hi"));
        let json = serde_json::to_string(&n).unwrap();
        assert_eq!(
            json,
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#
        );
        assert_eq!(round_trip(&json), n);
        let n = round_trip(
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hm"},"messageId":"m1"}}"#,
        );
        match n.update {
            SessionUpdate::AgentThoughtChunk(c) => {
                assert_eq!(c.message_id, Some(MessageId::new("m1")))
            }
            other => panic!("unexpected {other:?}"),
        }
        // A malformed messageId falls back to absent.
        let n: SessionNotification = decode(
            r#"{"sessionId":"s","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"x"},"messageId":5}}"#,
        )
        .unwrap();
        assert_eq!(n.update, SessionUpdate::user_message("x"));
    }

    #[test]
    fn unknown_update_round_trips() {
        let n = round_trip(
            r#"{"sessionId":"s","update":{"sessionUpdate":"_acme_progress","percent":40,"z":{"b":[1,null],"a":"x"}},"_meta":{"trace":"t"}}"#,
        );
        assert!(matches!(n.update, SessionUpdate::Other(_)));
        assert_eq!(n.update.kind(), "_acme_progress");
    }

    #[test]
    fn wrong_typed_field_names_its_path() {
        let err = decode::<SessionNotification>(
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":7}}}"#,
        )
        .unwrap_err();
        assert_eq!(err.path, "update.content.text");
        let err =
            decode::<SessionNotification>(r#"{"sessionId":"s","update":{"sessionUpdate":7}}"#)
                .unwrap_err();
        assert_eq!(err.path, "update.sessionUpdate");
        let err = decode::<SessionNotification>(
            r#"{"sessionId":"s","update":{"content":{"type":"text","text":"x"}}}"#,
        )
        .unwrap_err();
        assert_eq!(err.path, "update");
        assert!(err.message.contains("sessionUpdate"), "{err}");
        let err = decode::<SessionNotification>(
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[],"rawInput":1,"title":"x","kind":"read","status":"completed","locations":[{"path":"/a","line":"x"}]}}"#,
        );
        assert!(err.is_ok(), "lenient fields must not fail: {err:?}");
    }

    #[test]
    fn tool_call_gets_explicit_defaults() {
        let n: SessionNotification =
            decode(r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read"}}"#).unwrap();
        let SessionUpdate::ToolCall(call) = &n.update else {
            panic!("not a tool call")
        };
        assert_eq!(
            (&call.kind, &call.status),
            (&ToolKind::OtherKind, &ToolCallStatus::Pending)
        );
        assert_eq!(
            serde_json::to_string(&n).unwrap(),
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read","kind":"other","status":"pending"}}"#
        );
    }

    #[test]
    fn session_info_null_vs_absent() {
        let n = round_trip(
            r#"{"sessionId":"s","update":{"sessionUpdate":"session_info_update","title":null}}"#,
        );
        let SessionUpdate::SessionInfoUpdate(info) = &n.update else {
            panic!()
        };
        assert_eq!(info.title, Some(None));
        assert_eq!(info.updated_at, None);
        assert_eq!(info, &SessionInfoUpdate::new().clear_title());

        let n = round_trip(
            r#"{"sessionId":"s","update":{"sessionUpdate":"session_info_update","title":"Fix CI","updatedAt":"2026-01-02T03:04:05Z"}}"#,
        );
        let SessionUpdate::SessionInfoUpdate(info) = &n.update else {
            panic!()
        };
        assert_eq!(
            info,
            &SessionInfoUpdate::new()
                .title("Fix CI")
                .updated_at("2026-01-02T03:04:05Z")
        );

        round_trip(r#"{"sessionId":"s","update":{"sessionUpdate":"session_info_update"}}"#);

        // A malformed value counts as absent (unchanged), not as a clear.
        let info: SessionInfoUpdate = decode(r#"{"title":5,"updatedAt":null}"#).unwrap();
        assert_eq!(info, SessionInfoUpdate::new().clear_updated_at());
        assert_eq!(
            serde_json::to_string(&info).unwrap(),
            r#"{"updatedAt":null}"#
        );
    }

    #[test]
    fn compaction_patches() {
        let raw = r#"{"sessionId":"s","update":{"sessionUpdate":"compaction_update","compactionId":"c","status":"completed","summary":[{"type":"text","text":"sum"}],"error":null,"_meta":null}}"#;
        let n = round_trip(raw);
        let SessionUpdate::CompactionUpdate(c) = &n.update else {
            panic!()
        };
        assert_eq!(c.summary, Some(Some(vec![ContentBlock::from("sum")])));
        assert_eq!((&c.error, &c.meta), (&Some(None), &Some(None)));

        let c: CompactionUpdate =
            decode(r#"{"compactionId":"c","status":"_paused","summary":[{"type":"text"},{"type":"text","text":"ok"}],"error":3}"#)
                .unwrap();
        assert_eq!(c.status, CompactionStatus::Other("_paused".into()));
        assert_eq!(c.summary, Some(Some(vec![ContentBlock::from("ok")])));
        assert_eq!(c.error, None);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"compactionId":"c","status":"_paused","summary":[{"type":"text","text":"ok"}]}"#
        );
        round_trip(
            r#"{"sessionId":"s","update":{"sessionUpdate":"compaction_summary_chunk","compactionId":"c","content":{"type":"text","text":"…"}}}"#,
        );
    }

    #[test]
    fn available_commands() {
        let raw = r#"{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"web","description":"Search","input":{"hint":"query"}},{"name":"plan","description":"Plan","input":{"schema":{"type":"object"}}},{"name":"x"}]}}"#;
        let n: SessionNotification = decode(raw).unwrap();
        let SessionUpdate::AvailableCommandsUpdate(u) = &n.update else {
            panic!()
        };
        assert_eq!(
            u.available_commands.len(),
            2,
            "the command without a description is dropped"
        );
        assert_eq!(
            u.available_commands[0].input,
            Some(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new("query")
            ))
        );
        assert!(matches!(
            u.available_commands[1].input,
            Some(AvailableCommandInput::Other(_))
        ));
        assert_eq!(
            serde_json::to_string(&n).unwrap(),
            r#"{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"web","description":"Search","input":{"hint":"query"}},{"name":"plan","description":"Plan","input":{"schema":{"type":"object"}}}]}}"#
        );
        // A bad `hint` is an error for the input, which the command then drops (DOE).
        let c: AvailableCommand =
            decode(r#"{"name":"a","description":"b","input":{"hint":1}}"#).unwrap();
        assert_eq!(c.input, None);
        let err = decode::<AvailableCommandInput>(r#"{"hint":1}"#).unwrap_err();
        assert_eq!(err.path, "hint");
    }

    #[test]
    fn usage_notice_mode() {
        round_trip(
            r#"{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.25,"currency":"USD"}}}"#,
        );
        let u: UsageUpdate = decode(r#"{"used":1,"size":2,"cost":{"amount":"lots"}}"#).unwrap();
        assert_eq!(u, UsageUpdate::new(1, 2));
        let n = round_trip(
            r#"{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"_debug","title":"Rate limited","description":"retrying"}}"#,
        );
        let SessionUpdate::Notice(notice) = &n.update else {
            panic!()
        };
        assert_eq!(notice.severity, NoticeSeverity::Other("_debug".into()));
        round_trip(
            r#"{"sessionId":"s","update":{"sessionUpdate":"current_mode_update","currentModeId":"code"}}"#,
        );
        round_trip(r#"{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}"#);
    }
}
