//! Child sessions (`unstable-subagents`): a session announces the child
//! sessions it created (`subagent_update`), their state, and the messages
//! that pass between sessions (`session_message`, `session_message_chunk`).
//! A client that can show them advertises `clientCapabilities.subagents`.

use crate::util::{setters, string_enum, tagged_union, wire_struct};
use crate::{ContentBlock, Error, MessageId, Meta, SessionId, Usage};

wire_struct! {
    /// Marks that the client can show child sessions.
    #[derive(Default)]
    pub struct SubagentCapabilities {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SubagentCapabilities {
    /// The marker, written as `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SubagentCapabilities { opt { meta: Meta } });

wire_struct! {
    /// The parent session created (or changed) a child session it owns. Later
    /// updates for the same `sessionId` change the existing child.
    pub struct SubagentUpdate {
        /// The child session.
        pub session_id: SessionId = "sessionId" (Req),
        /// A title for display.
        pub title: Option<String> = "title" (Lenient),
        /// What the child does, for people to read.
        pub description: Option<String> = "description" (Lenient),
        /// What the client may do to the child session.
        pub capabilities: Option<SubagentSessionCapabilities> = "capabilities" (Lenient),
        /// What the child is doing now.
        pub state: Option<StateUpdate> = "state" (Lenient),
        /// The child's working directory (absolute).
        pub cwd: Option<String> = "cwd" (Opt),
        /// The child's extra workspace roots (absolute).
        pub additional_directories: Option<Vec<String>> = "additionalDirectories" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

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

setters!(SubagentUpdate {
    opt {
        title: String,
        description: String,
        capabilities: SubagentSessionCapabilities,
        state: StateUpdate,
        cwd: String,
        additional_directories: Vec<String>,
        meta: Meta,
    }
});

wire_struct! {
    /// What a client may do to a child session (each needs its own capability).
    #[derive(Default)]
    pub struct SubagentSessionCapabilities {
        /// Present if the client may cancel the child's work without ending it.
        pub cancel: Option<SessionCancelCapabilities> = "cancel" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SubagentSessionCapabilities {
    /// Nothing allowed.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SubagentSessionCapabilities { opt { cancel: SessionCancelCapabilities, meta: Meta } });

wire_struct! {
    /// Marks that a child session's work can be cancelled without ending it.
    #[derive(Default)]
    pub struct SessionCancelCapabilities {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionCancelCapabilities {
    /// The marker, written as `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SessionCancelCapabilities { opt { meta: Meta } });

tagged_union! {
    /// What a child session is doing, tagged by `state`. Each update is the
    /// whole state; idle does not end the child.
    #[allow(clippy::large_enum_variant)] // one per subagent update, moved, never stored in bulk
    pub enum StateUpdate: tag "state" {
        /// Working.
        "running" => Running(RunningStateUpdate),
        /// Ready for another prompt.
        "idle" => Idle(IdleStateUpdate),
        /// Blocked on the user.
        "requires_action" => RequiresAction(RequiresActionStateUpdate),
        /// The agent cannot tell.
        "unknown" => Unknown(UnknownStateUpdate),
    }
}

/// Declares a state whose only field is `_meta`.
macro_rules! meta_only_state {
    ($(#[$attr:meta])* $name:ident) => {
        wire_struct! {
            $(#[$attr])*
            #[derive(Default)]
            pub struct $name {
                /// Extension metadata.
                pub meta: Option<Meta> = "_meta" (MetaField),
            }
        }

        impl $name {
            /// The state, with nothing more said.
            pub fn new() -> Self {
                Self::default()
            }
        }

        setters!($name { opt { meta: Meta } });
    };
}

meta_only_state!(
    /// The child is working.
    RunningStateUpdate
);
meta_only_state!(
    /// The child's work is blocked on the user.
    RequiresActionStateUpdate
);
meta_only_state!(
    /// The agent cannot currently tell what the child is doing.
    UnknownStateUpdate
);

wire_struct! {
    /// The child is ready for another prompt; its last turn's outcome, if
    /// reported.
    #[derive(Default)]
    pub struct IdleStateUpdate {
        /// Why the last turn ended (absent, `null` or malformed: not reported).
        pub stop_reason: Option<SubagentStopReason> = "stopReason" (Lenient),
        /// What went wrong, when the stop reason is `error`.
        pub error: Option<Error> = "error" (Lenient),
        /// What the last turn used.
        pub usage: Option<Usage> = "usage" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl IdleStateUpdate {
    /// Idle, with no outcome reported.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(IdleStateUpdate {
    opt { stop_reason: SubagentStopReason, error: Error, usage: Usage, meta: Meta }
});

string_enum! {
    /// Why a child's last turn ended: the prompt stop reasons, and `error`.
    pub enum SubagentStopReason {
        /// The turn finished normally.
        "end_turn" => EndTurn,
        /// The model hit its token limit.
        "max_tokens" => MaxTokens,
        /// The agent hit its limit of model requests for the turn.
        "max_turn_requests" => MaxTurnRequests,
        /// The model refused to go on.
        "refusal" => Refusal,
        /// The turn was cancelled.
        "cancelled" => Cancelled,
        /// The turn failed (see `error`).
        "error" => Error,
    }
}

wire_struct! {
    /// The details of a failure that ended a child's work.
    #[derive(Default)]
    pub struct ErrorStopReason {
        /// What went wrong.
        pub error: Option<Error> = "error" (Lenient),
    }
}

impl ErrorStopReason {
    /// A failure without details.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ErrorStopReason { opt { error: Error } });

wire_struct! {
    /// A message between sessions, created or replaced whole (keyed by `messageId`).
    pub struct SessionMessage {
        /// The message.
        pub message_id: MessageId = "messageId" (Req),
        /// The session that sent it.
        pub sender_session_id: Option<SessionId> = "senderSessionId" (Lenient),
        /// The session it is for.
        pub recipient_session_id: Option<SessionId> = "recipientSessionId" (Lenient),
        /// The message's id in the sender's session.
        pub sender_message_id: Option<MessageId> = "senderMessageId" (Lenient),
        /// The message's id in the recipient's session.
        pub recipient_message_id: Option<MessageId> = "recipientMessageId" (Lenient),
        /// The whole content, if given (bad blocks dropped).
        pub content: Option<Vec<ContentBlock>> = "content" (ItemsOpt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

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

wire_struct! {
    /// A block streamed into a message between sessions (who sent it and to
    /// whom come with `session_message`).
    pub struct SessionMessageChunk {
        /// The message the block belongs to.
        pub message_id: MessageId = "messageId" (Req),
        /// The block.
        pub content: ContentBlock = "content" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionMessageChunk {
    /// Block `content` of message `message_id`.
    pub fn new(message_id: impl Into<MessageId>, content: impl Into<ContentBlock>) -> Self {
        SessionMessageChunk {
            message_id: message_id.into(),
            content: content.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SessionMessageChunk { opt { meta: Meta } });
