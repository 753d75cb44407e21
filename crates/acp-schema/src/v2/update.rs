//! `session/update` in v2: every message and message chunk carries a
//! `messageId`; whole messages, tool calls and terminals are upserts; the
//! foreground state is its own update. An update of a kind this version does
//! not know decodes into [`SessionUpdate::Other`] and re-encodes unchanged.

use super::tool_call::patch_setters;
#[cfg(feature = "v2-unstable")]
use super::{AbsolutePath, PlanRemoved};
use super::{
    AvailableCommandsUpdate, ContentBlock, PlanUpdate, SessionConfigOption, StateUpdate,
    StopReason, TerminalOutputChunk, TerminalUpdate, ToolCallContentChunk, ToolCallUpdate,
};
#[cfg(feature = "v2-unstable")]
use crate::SubagentSessionCapabilities;
use crate::util::{setters, tagged_union, wire_struct};
use crate::{
    CompactionId, CompactionStatus, MessageId, Meta, Notice, SessionId, SessionInfoUpdate,
    UsageUpdate,
};
use std::borrow::Cow;

wire_struct! {
    /// Params of `session/update`: one update about a session.
    pub struct UpdateSessionNotification {
        /// The session.
        pub session_id: SessionId = "sessionId" (Req),
        /// What happened.
        pub update: SessionUpdate = "update" (Obj),
        /// Extension metadata (of the notification).
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl UpdateSessionNotification {
    /// Reports `update` for `session_id`.
    pub fn new(session_id: impl Into<SessionId>, update: impl Into<SessionUpdate>) -> Self {
        UpdateSessionNotification {
            session_id: session_id.into(),
            update: update.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(UpdateSessionNotification { opt { meta: Meta } });

tagged_union! {
    /// One kind of progress report in a session, tagged by `sessionUpdate`.
    pub enum SessionUpdate: tag "sessionUpdate" {
        /// Appends a block to a user message.
        "user_message_chunk" => UserMessageChunk(ContentChunk),
        /// Creates or replaces a user message (the acknowledgement of a prompt).
        "user_message" => UserMessage(MessageUpdate),
        /// Appends a block to an agent message.
        "agent_message_chunk" => AgentMessageChunk(ContentChunk),
        /// Creates or replaces an agent message.
        "agent_message" => AgentMessage(MessageUpdate),
        /// Appends a block to an agent thought.
        "agent_thought_chunk" => AgentThoughtChunk(ContentChunk),
        /// Creates or replaces an agent thought.
        "agent_thought" => AgentThought(MessageUpdate),
        /// The session's foreground state.
        "state_update" => StateUpdate(StateUpdate),
        /// Appends an item to a tool call's content.
        "tool_call_content_chunk" => ToolCallContentChunk(ToolCallContentChunk),
        /// Creates or patches a tool call.
        "tool_call_update" => ToolCallUpdate(ToolCallUpdate),
        /// Creates or patches a display terminal.
        "terminal_update" => TerminalUpdate(TerminalUpdate),
        /// Appends bytes to a display terminal.
        "terminal_output_chunk" => TerminalOutputChunk(TerminalOutputChunk),
        /// Creates or replaces a plan.
        "plan_update" => PlanUpdate(PlanUpdate),
        /// Removes a plan (feature `v2-unstable`).
        "plan_removed" => PlanRemoved(PlanRemoved) if "v2-unstable",
        /// The commands the agent offers, complete.
        "available_commands_update" => AvailableCommandsUpdate(AvailableCommandsUpdate),
        /// The session's config options, complete.
        "config_option_update" => ConfigOptionUpdate(ConfigOptionUpdate),
        /// The session's title or timestamp changed.
        "session_info_update" => SessionInfoUpdate(SessionInfoUpdate),
        /// Context window use and cost.
        "usage_update" => UsageUpdate(UsageUpdate),
        /// A passing message for the user.
        "notice" => Notice(Notice),
        /// A context compaction started or changed.
        "compaction_update" => CompactionUpdate(CompactionUpdate),
        /// A block appended to a compaction's summary.
        "compaction_summary_chunk" => CompactionSummaryChunk(CompactionSummaryChunk),
        /// A child session was created or changed (feature `v2-unstable`).
        "subagent_update" => SubagentUpdate(SubagentUpdate) if "v2-unstable",
        /// A message between sessions, created or replaced (feature `v2-unstable`).
        "session_message" => SessionMessage(SessionMessage) if "v2-unstable",
        /// A block appended to a message between sessions (feature `v2-unstable`).
        "session_message_chunk" => SessionMessageChunk(SessionMessageChunk) if "v2-unstable",
    }
}

impl SessionUpdate {
    /// Appends `content` to the agent message `message_id`.
    pub fn agent_message_chunk(
        message_id: impl Into<MessageId>,
        content: impl Into<ContentBlock>,
    ) -> Self {
        SessionUpdate::AgentMessageChunk(ContentChunk::new(message_id, content))
    }

    /// Appends `content` to the agent thought `message_id`.
    pub fn agent_thought_chunk(
        message_id: impl Into<MessageId>,
        content: impl Into<ContentBlock>,
    ) -> Self {
        SessionUpdate::AgentThoughtChunk(ContentChunk::new(message_id, content))
    }

    /// Appends `content` to the user message `message_id`.
    pub fn user_message_chunk(
        message_id: impl Into<MessageId>,
        content: impl Into<ContentBlock>,
    ) -> Self {
        SessionUpdate::UserMessageChunk(ContentChunk::new(message_id, content))
    }

    /// The user message `message_id`, with all of its `content`.
    pub fn user_message(message_id: impl Into<MessageId>, content: Vec<ContentBlock>) -> Self {
        SessionUpdate::UserMessage(MessageUpdate::new(message_id).content(content))
    }

    /// The agent message `message_id`, with all of its `content`.
    pub fn agent_message(message_id: impl Into<MessageId>, content: Vec<ContentBlock>) -> Self {
        SessionUpdate::AgentMessage(MessageUpdate::new(message_id).content(content))
    }

    /// `running`.
    pub fn running() -> Self {
        SessionUpdate::StateUpdate(StateUpdate::running())
    }

    /// `requires_action`.
    pub fn requires_action() -> Self {
        SessionUpdate::StateUpdate(StateUpdate::requires_action())
    }

    /// `idle`, ending foreground work for `reason`.
    pub fn idle(reason: StopReason) -> Self {
        SessionUpdate::StateUpdate(StateUpdate::idle(reason))
    }

    /// The `sessionUpdate` tag of this update (for an unknown one, as received;
    /// empty in the absurd case of a tag that needs escapes in JSON).
    pub fn kind(&self) -> &str {
        match self {
            SessionUpdate::UserMessageChunk(_) => "user_message_chunk",
            SessionUpdate::UserMessage(_) => "user_message",
            SessionUpdate::AgentMessageChunk(_) => "agent_message_chunk",
            SessionUpdate::AgentMessage(_) => "agent_message",
            SessionUpdate::AgentThoughtChunk(_) => "agent_thought_chunk",
            SessionUpdate::AgentThought(_) => "agent_thought",
            SessionUpdate::StateUpdate(_) => "state_update",
            SessionUpdate::ToolCallContentChunk(_) => "tool_call_content_chunk",
            SessionUpdate::ToolCallUpdate(_) => "tool_call_update",
            SessionUpdate::TerminalUpdate(_) => "terminal_update",
            SessionUpdate::TerminalOutputChunk(_) => "terminal_output_chunk",
            SessionUpdate::PlanUpdate(_) => "plan_update",
            #[cfg(feature = "v2-unstable")]
            SessionUpdate::PlanRemoved(_) => "plan_removed",
            SessionUpdate::AvailableCommandsUpdate(_) => "available_commands_update",
            SessionUpdate::ConfigOptionUpdate(_) => "config_option_update",
            SessionUpdate::SessionInfoUpdate(_) => "session_info_update",
            SessionUpdate::UsageUpdate(_) => "usage_update",
            SessionUpdate::Notice(_) => "notice",
            SessionUpdate::CompactionUpdate(_) => "compaction_update",
            SessionUpdate::CompactionSummaryChunk(_) => "compaction_summary_chunk",
            #[cfg(feature = "v2-unstable")]
            SessionUpdate::SubagentUpdate(_) => "subagent_update",
            #[cfg(feature = "v2-unstable")]
            SessionUpdate::SessionMessage(_) => "session_message",
            #[cfg(feature = "v2-unstable")]
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

into_update!(
    StateUpdate,
    ToolCallContentChunk,
    ToolCallUpdate,
    TerminalUpdate,
    TerminalOutputChunk,
    PlanUpdate,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    SessionInfoUpdate,
    UsageUpdate,
    Notice,
    CompactionUpdate,
    CompactionSummaryChunk,
);

#[cfg(feature = "v2-unstable")]
into_update!(
    PlanRemoved,
    SubagentUpdate,
    SessionMessage,
    SessionMessageChunk
);

wire_struct! {
    /// Appends one block to a message (user, agent or thought). Every chunk of
    /// a message carries its id; a new id starts a new message.
    pub struct ContentChunk {
        /// The message.
        pub message_id: MessageId = "messageId" (Req),
        /// The block to append.
        pub content: ContentBlock = "content" (Obj),
        /// Extension metadata (of the chunk).
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ContentChunk {
    /// Appends `content` to `message_id`.
    pub fn new(message_id: impl Into<MessageId>, content: impl Into<ContentBlock>) -> Self {
        ContentChunk {
            message_id: message_id.into(),
            content: content.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ContentChunk { opt { meta: Meta } });

wire_struct! {
    /// Creates or replaces a whole message (`user_message`, `agent_message`,
    /// `agent_thought`): `content` left out keeps the content, `null` or `[]`
    /// clears it, a list replaces all of it (chunks received before
    /// included); later chunks append to it. `_meta` patches the message's
    /// metadata the same way.
    pub struct MessageUpdate {
        /// The message.
        pub message_id: MessageId = "messageId" (Req),
        /// All of its content.
        pub content: Option<Option<Vec<ContentBlock>>> = "content" (PatchItems),
        /// Extension metadata, patched by key.
        pub meta: Option<Option<Meta>> = "_meta" (Patch),
    }
}

impl MessageUpdate {
    /// An update of `message_id` that changes nothing yet.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        MessageUpdate {
            message_id: message_id.into(),
            content: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

patch_setters!(MessageUpdate {
    content / clear_content: Vec<ContentBlock>,
    meta / clear_meta: Meta,
});

/// A `user_message` update.
pub type UserMessage = MessageUpdate;
/// An `agent_message` update.
pub type AgentMessage = MessageUpdate;
/// An `agent_thought` update.
pub type AgentThought = MessageUpdate;

wire_struct! {
    /// The session's config options, complete.
    pub struct ConfigOptionUpdate {
        /// All the options.
        pub config_options: Vec<SessionConfigOption> = "configOptions" (ItemsReq),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ConfigOptionUpdate {
    /// The options `config_options`.
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
    /// Creates or patches a context compaction (as in v1): `summary`, `error`
    /// and `_meta` are patches.
    pub struct CompactionUpdate {
        /// The compaction.
        pub compaction_id: CompactionId = "compactionId" (Req),
        /// Its status.
        pub status: CompactionStatus = "status" (Req),
        /// The whole summary (`[]` clears it too).
        pub summary: Option<Option<Vec<ContentBlock>>> = "summary" (PatchItems),
        /// What went wrong.
        pub error: Option<Option<String>> = "error" (Patch),
        /// Extension metadata, patched by key.
        pub meta: Option<Option<Meta>> = "_meta" (Patch),
    }
}

impl CompactionUpdate {
    /// Compaction `compaction_id` is now `status`.
    pub fn new(compaction_id: impl Into<CompactionId>, status: CompactionStatus) -> Self {
        CompactionUpdate {
            compaction_id: compaction_id.into(),
            status,
            summary: None,
            error: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

patch_setters!(CompactionUpdate {
    summary / clear_summary: Vec<ContentBlock>,
    error / clear_error: String,
    meta / clear_meta: Meta,
});

wire_struct! {
    /// Appends a block to a compaction's summary.
    pub struct CompactionSummaryChunk {
        /// The compaction.
        pub compaction_id: CompactionId = "compactionId" (Req),
        /// The block.
        pub content: ContentBlock = "content" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CompactionSummaryChunk {
    /// Appends `content` to `compaction_id`'s summary.
    pub fn new(compaction_id: impl Into<CompactionId>, content: impl Into<ContentBlock>) -> Self {
        CompactionSummaryChunk {
            compaction_id: compaction_id.into(),
            content: content.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CompactionSummaryChunk { opt { meta: Meta } });

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// A child session was created or changed (feature `v2-unstable`).
    pub struct SubagentUpdate {
        /// The child session.
        pub session_id: SessionId = "sessionId" (Req),
        /// A title for display.
        pub title: Option<String> = "title" (Lenient),
        /// What it does.
        pub description: Option<String> = "description" (Lenient),
        /// What the client may do to it.
        pub capabilities: Option<SubagentSessionCapabilities> = "capabilities" (Lenient),
        /// What it is doing.
        pub state: Option<StateUpdate> = "state" (Lenient),
        /// Its working directory.
        pub cwd: Option<AbsolutePath> = "cwd" (Opt),
        /// Its additional directories.
        pub additional_directories: Option<Vec<AbsolutePath>> = "additionalDirectories" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl SubagentUpdate {
    /// An update about child session `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        SubagentUpdate {
            session_id: session_id.into(),
            title: None,
            description: None,
            capabilities: None,
            state: None,
            cwd: None,
            additional_directories: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(SubagentUpdate {
    opt {
        title: String,
        description: String,
        capabilities: SubagentSessionCapabilities,
        state: StateUpdate,
        cwd: AbsolutePath,
        additional_directories: Vec<AbsolutePath>,
        meta: Meta,
    }
});

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// A message between sessions, created or replaced (feature `v2-unstable`).
    pub struct SessionMessage {
        /// The message.
        pub message_id: MessageId = "messageId" (Req),
        /// The session that sent it.
        pub sender_session_id: Option<SessionId> = "senderSessionId" (Lenient),
        /// The session it is for.
        pub recipient_session_id: Option<SessionId> = "recipientSessionId" (Lenient),
        /// Its id in the sender's session.
        pub sender_message_id: Option<MessageId> = "senderMessageId" (Lenient),
        /// Its id in the recipient's session.
        pub recipient_message_id: Option<MessageId> = "recipientMessageId" (Lenient),
        /// All of its content.
        pub content: Option<Vec<ContentBlock>> = "content" (ItemsOpt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl SessionMessage {
    /// Message `message_id`, nothing else said yet.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        SessionMessage {
            message_id: message_id.into(),
            sender_session_id: None,
            recipient_session_id: None,
            sender_message_id: None,
            recipient_message_id: None,
            content: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(SessionMessage {
    opt {
        sender_session_id: SessionId,
        recipient_session_id: SessionId,
        sender_message_id: MessageId,
        recipient_message_id: MessageId,
        content: Vec<ContentBlock>,
        meta: Meta,
    }
});

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// Appends a block to a message between sessions (feature `v2-unstable`).
    pub struct SessionMessageChunk {
        /// The message.
        pub message_id: MessageId = "messageId" (Req),
        /// The block.
        pub content: ContentBlock = "content" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl SessionMessageChunk {
    /// Appends `content` to `message_id`.
    pub fn new(message_id: impl Into<MessageId>, content: impl Into<ContentBlock>) -> Self {
        SessionMessageChunk {
            message_id: message_id.into(),
            content: content.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(SessionMessageChunk { opt { meta: Meta } });
