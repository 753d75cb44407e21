//! The foreground state of a v2 session (`state_update`): `running` while the
//! agent works, `requires_action` while it waits on the user, `idle` when it can
//! take a new prompt (with the stop reason when that ends work). Each update is
//! a snapshot: a repeated idle is not a new completion.

use super::StopReason;
#[cfg(feature = "v2-unstable")]
use crate::SessionId;
#[cfg(feature = "v2-unstable")]
use crate::Usage;
use crate::util::{setters, tagged_union, wire_struct};
use crate::{Meta, TerminalId, ToolCallId};

tagged_union! {
    /// The session's foreground state, tagged by `state`.
    pub enum StateUpdate: tag "state" {
        /// Foreground work is going on.
        "running" => Running(RunningStateUpdate),
        /// The agent can take a new prompt.
        "idle" => Idle(IdleStateUpdate),
        /// Foreground work waits on the user (a permission request).
        "requires_action" => RequiresAction(RequiresActionStateUpdate),
        /// The agent cannot tell (feature `v2-unstable`).
        "unknown" => Unknown(UnknownStateUpdate) if "v2-unstable",
    }
}

impl StateUpdate {
    /// `running`.
    pub fn running() -> Self {
        StateUpdate::Running(RunningStateUpdate::default())
    }

    /// `requires_action`.
    pub fn requires_action() -> Self {
        StateUpdate::RequiresAction(RequiresActionStateUpdate::default())
    }

    /// `idle`, ending foreground work for `reason`.
    pub fn idle(reason: StopReason) -> Self {
        StateUpdate::Idle(IdleStateUpdate::new().stop_reason(reason))
    }

    /// The stop reason of an idle update.
    pub fn stop_reason(&self) -> Option<&StopReason> {
        match self {
            StateUpdate::Idle(idle) => idle.stop_reason.as_ref(),
            _ => None,
        }
    }
}

wire_struct! {
    /// Foreground work is going on.
    #[derive(Default)]
    pub struct RunningStateUpdate {
        /// Work going on in the background meanwhile.
        pub background: Option<Vec<BackgroundWork>> = "background" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

setters!(RunningStateUpdate { opt { background: Vec<BackgroundWork>, meta: Meta } });

wire_struct! {
    /// The agent can take a new prompt; background work may go on.
    #[derive(Default)]
    pub struct IdleStateUpdate {
        /// The tokens the ended work used (feature `v2-unstable`).
        pub usage: Option<Usage> = "usage" (Lenient) if "v2-unstable",
        /// Work going on in the background.
        pub background: Option<Vec<BackgroundWork>> = "background" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
        /// Why foreground work stopped, when this update ends it (`stopReason`,
        /// and `error` for the reason `error`).
        pub stop_reason: Option<StopReason> = "" (Flatten),
    }
}

impl IdleStateUpdate {
    /// Idle, ending nothing.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(IdleStateUpdate {
    opt { background: Vec<BackgroundWork>, meta: Meta, stop_reason: StopReason }
});

crate::util::feature_setter!("v2-unstable", IdleStateUpdate { usage: Usage });

wire_struct! {
    /// Foreground work waits on the user.
    #[derive(Default)]
    pub struct RequiresActionStateUpdate {
        /// Work going on in the background meanwhile.
        pub background: Option<Vec<BackgroundWork>> = "background" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

setters!(RequiresActionStateUpdate { opt { background: Vec<BackgroundWork>, meta: Meta } });

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// The agent cannot tell the foreground state (feature `v2-unstable`).
    #[derive(Default)]
    pub struct UnknownStateUpdate {
        /// Work going on in the background.
        pub background: Option<Vec<BackgroundWork>> = "background" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
setters!(UnknownStateUpdate { opt { background: Vec<BackgroundWork>, meta: Meta } });

tagged_union! {
    /// Work that goes on outside the foreground, tagged by `type`.
    pub enum BackgroundWork: tag "type" {
        /// A display terminal still running.
        "terminal" => Terminal(BackgroundTerminal),
        /// A tool call still running.
        "tool_call" => ToolCall(BackgroundToolCall),
        /// A child session still working (feature `v2-unstable`).
        "subagent" => Subagent(BackgroundSubagent) if "v2-unstable",
    }
}

wire_struct! {
    /// A display terminal running in the background.
    pub struct BackgroundTerminal {
        /// The terminal.
        pub terminal_id: TerminalId = "terminalId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl BackgroundTerminal {
    /// The terminal `terminal_id`.
    pub fn new(terminal_id: impl Into<TerminalId>) -> Self {
        BackgroundTerminal {
            terminal_id: terminal_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(BackgroundTerminal { opt { meta: Meta } });

wire_struct! {
    /// A tool call running in the background.
    pub struct BackgroundToolCall {
        /// The call.
        pub tool_call_id: ToolCallId = "toolCallId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl BackgroundToolCall {
    /// The call `tool_call_id`.
    pub fn new(tool_call_id: impl Into<ToolCallId>) -> Self {
        BackgroundToolCall {
            tool_call_id: tool_call_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(BackgroundToolCall { opt { meta: Meta } });

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// A child session working in the background (feature `v2-unstable`).
    pub struct BackgroundSubagent {
        /// The child session.
        pub session_id: SessionId = "sessionId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl BackgroundSubagent {
    /// The child session `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        BackgroundSubagent {
            session_id: session_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(BackgroundSubagent { opt { meta: Meta } });
