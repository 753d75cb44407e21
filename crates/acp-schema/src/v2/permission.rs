//! Permission requests of v2: the prompt copy (`title`, `description`) apart
//! from what needs permission (the [`RequestPermissionSubject`]).

use super::{AbsolutePath, ToolCallUpdate};
use crate::util::{setters, tagged_union, wire_struct};
use crate::{
    Meta, PermissionOption, PermissionOptionId, SelectedPermissionOutcome, SessionId, TerminalId,
    ToolCallId,
};

wire_struct! {
    /// Params of `session/request_permission`: ask the user to choose one of
    /// `options`. While it waits, the agent should report `requires_action`.
    pub struct RequestPermissionRequest {
        /// The session.
        pub session_id: SessionId = "sessionId" (Req),
        /// The question, for people to read (it changes no tool call's title).
        pub title: String = "title" (Req),
        /// More words about it.
        pub description: Option<String> = "description" (Lenient),
        /// What needs permission; `None` for a request without structured context.
        pub subject: Option<RequestPermissionSubject> = "subject" (Opt),
        /// The choices.
        pub options: Vec<PermissionOption> = "options" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl RequestPermissionRequest {
    /// Asks `title` in `session_id`, offering `options`.
    pub fn new(
        session_id: impl Into<SessionId>,
        title: impl Into<String>,
        options: Vec<PermissionOption>,
    ) -> Self {
        RequestPermissionRequest {
            session_id: session_id.into(),
            title: title.into(),
            description: None,
            subject: None,
            options,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(RequestPermissionRequest {
    opt { description: String, subject: RequestPermissionSubject, meta: Meta }
});

tagged_union! {
    /// What a permission request is about, tagged by `type`. A client that does
    /// not know a subject shows a generic prompt (or declines by policy).
    #[allow(clippy::large_enum_variant)] // one per request, moved, never stored in bulk
    pub enum RequestPermissionSubject: tag "type" {
        /// A tool call, in the same upsert shape as `tool_call_update`.
        "tool_call" => ToolCall(ToolCallPermissionSubject),
        /// A command the agent wants to run.
        "command" => Command(CommandPermissionSubject),
    }
}

impl From<ToolCallUpdate> for RequestPermissionSubject {
    fn from(tool_call: ToolCallUpdate) -> Self {
        RequestPermissionSubject::ToolCall(ToolCallPermissionSubject::new(tool_call))
    }
}

impl From<CommandPermissionSubject> for RequestPermissionSubject {
    fn from(command: CommandPermissionSubject) -> Self {
        RequestPermissionSubject::Command(command)
    }
}

wire_struct! {
    /// A tool call that needs permission.
    pub struct ToolCallPermissionSubject {
        /// The call's state, applied like a `tool_call_update`.
        pub tool_call: ToolCallUpdate = "toolCall" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ToolCallPermissionSubject {
    /// About `tool_call`.
    pub fn new(tool_call: ToolCallUpdate) -> Self {
        ToolCallPermissionSubject {
            tool_call,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ToolCallPermissionSubject { opt { meta: Meta } });

wire_struct! {
    /// A command the agent wants to run (approval lets the agent run it; the
    /// client never runs it).
    pub struct CommandPermissionSubject {
        /// The command line.
        pub command: String = "command" (Req),
        /// Where it would run.
        pub cwd: AbsolutePath = "cwd" (Req),
        /// The tool call it belongs to, if any.
        pub tool_call_id: Option<ToolCallId> = "toolCallId" (Lenient),
        /// The display terminal it would write to, if any.
        pub terminal_id: Option<TerminalId> = "terminalId" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CommandPermissionSubject {
    /// `command`, run in `cwd`.
    pub fn new(command: impl Into<String>, cwd: impl Into<AbsolutePath>) -> Self {
        CommandPermissionSubject {
            command: command.into(),
            cwd: cwd.into(),
            tool_call_id: None,
            terminal_id: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CommandPermissionSubject {
    opt { tool_call_id: ToolCallId, terminal_id: TerminalId, meta: Meta }
});

wire_struct! {
    /// The result of `session/request_permission`: what the user chose.
    pub struct RequestPermissionResponse {
        /// The decision.
        pub outcome: RequestPermissionOutcome = "outcome" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl RequestPermissionResponse {
    /// A response carrying `outcome`.
    pub fn new(outcome: RequestPermissionOutcome) -> Self {
        RequestPermissionResponse {
            outcome,
            meta: None,
            extra: Default::default(),
        }
    }

    /// The user chose `option_id`.
    pub fn selected(option_id: impl Into<PermissionOptionId>) -> Self {
        Self::new(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(option_id),
        ))
    }

    /// The request was cancelled (the turn was).
    pub fn cancelled() -> Self {
        Self::new(RequestPermissionOutcome::Cancelled(
            CancelledPermissionOutcome::default(),
        ))
    }
}

setters!(RequestPermissionResponse { opt { meta: Meta } });

tagged_union! {
    /// The user's decision, tagged by `outcome`. An agent must not take an
    /// outcome it does not know for an approval.
    pub enum RequestPermissionOutcome: tag "outcome" {
        /// The prompt turn was cancelled before the user chose.
        "cancelled" => Cancelled(CancelledPermissionOutcome),
        /// The user chose an option.
        "selected" => Selected(SelectedPermissionOutcome),
    }
}

impl RequestPermissionOutcome {
    /// The chosen option, if one was chosen.
    pub fn selected_option(&self) -> Option<&PermissionOptionId> {
        match self {
            RequestPermissionOutcome::Selected(s) => Some(&s.option_id),
            _ => None,
        }
    }
}

wire_struct! {
    /// A cancelled permission request.
    #[derive(Default)]
    pub struct CancelledPermissionOutcome {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

setters!(CancelledPermissionOutcome { opt { meta: Meta } });
