//! Session setup in v2: `session/new` and `session/resume` take the same
//! environment, `session/resume` replaces v1's `session/load` (with
//! [`ReplayFrom`]), and list, resume and close belong to the baseline.

use super::{AbsolutePath, AvailableCommand, McpServer, SessionConfigOption, same_params};
#[cfg(feature = "v2-unstable")]
use super::{ContentBlock, StateUpdate};
#[cfg(feature = "v2-unstable")]
use crate::SystemPromptMode;
#[cfg(feature = "v2-unstable")]
use crate::util::{feature_setter, string_enum};
use crate::util::{setters, tagged_union, wire_struct};
use crate::{Meta, SessionId};

/// An opaque cursor of `session/list` pages.
pub type SessionListCursor = String;

wire_struct! {
    /// Params of `session/new`: start a session in `cwd`.
    pub struct NewSessionRequest {
        /// The working directory.
        pub cwd: AbsolutePath = "cwd" (Req),
        /// More directories the session may use (needs
        /// `session.additionalDirectories`; omitted when empty).
        pub additional_directories: Vec<AbsolutePath> = "additionalDirectories" (NullDfltNonEmpty),
        /// MCP servers to connect to (omitted when empty).
        pub mcp_servers: Vec<McpServer> = "mcpServers" (NullDfltNonEmpty),
        /// Instructions to add to or replace the agent's own (feature `v2-unstable`).
        pub system_prompt: Option<SystemPrompt> = "systemPrompt" (Opt) if "v2-unstable",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl NewSessionRequest {
    /// A session in `cwd`.
    pub fn new(cwd: impl Into<AbsolutePath>) -> Self {
        NewSessionRequest {
            cwd: cwd.into(),
            additional_directories: Vec::new(),
            mcp_servers: Vec::new(),
            #[cfg(feature = "v2-unstable")]
            system_prompt: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(NewSessionRequest {
    set { additional_directories: Vec<AbsolutePath>, mcp_servers: Vec<McpServer> }
    opt { meta: Meta }
});

#[cfg(feature = "v2-unstable")]
feature_setter!(
    "v2-unstable",
    NewSessionRequest {
        system_prompt: SystemPrompt
    }
);

wire_struct! {
    /// The result of `session/new`.
    pub struct NewSessionResponse {
        /// The new session's id.
        pub session_id: SessionId = "sessionId" (Req),
        /// The session's config options (omitted when empty).
        pub config_options: Vec<SessionConfigOption> = "configOptions" (ItemsNonEmpty),
        /// The commands it offers (omitted when empty).
        pub available_commands: Vec<AvailableCommand> = "availableCommands" (ItemsNonEmpty),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl NewSessionResponse {
    /// The session `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        NewSessionResponse {
            session_id: session_id.into(),
            config_options: Vec::new(),
            available_commands: Vec::new(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(NewSessionResponse {
    set { config_options: Vec<SessionConfigOption>, available_commands: Vec<AvailableCommand> }
    opt { meta: Meta }
});

wire_struct! {
    /// Params of `session/list`: one page of the agent's sessions.
    #[derive(Default)]
    pub struct ListSessionsRequest {
        /// Only sessions in this working directory.
        pub cwd: Option<AbsolutePath> = "cwd" (Opt),
        /// Where the previous page ended.
        pub cursor: Option<SessionListCursor> = "cursor" (Opt),
        /// Which sessions to list by archive state (feature `v2-unstable`).
        pub archived: Option<SessionArchiveFilter> = "archived" (Opt) if "v2-unstable",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ListSessionsRequest {
    /// The first page of every session.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ListSessionsRequest { opt { cwd: AbsolutePath, cursor: SessionListCursor, meta: Meta } });

#[cfg(feature = "v2-unstable")]
feature_setter!(
    "v2-unstable",
    ListSessionsRequest {
        archived: SessionArchiveFilter
    }
);

wire_struct! {
    /// The result of `session/list`.
    pub struct ListSessionsResponse {
        /// The sessions of this page.
        pub sessions: Vec<SessionInfo> = "sessions" (Items),
        /// Where the next page starts; `None` on the last page.
        pub next_cursor: Option<SessionListCursor> = "nextCursor" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ListSessionsResponse {
    /// The page `sessions`, the last one.
    pub fn new(sessions: Vec<SessionInfo>) -> Self {
        ListSessionsResponse {
            sessions,
            next_cursor: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ListSessionsResponse { opt { next_cursor: SessionListCursor, meta: Meta } });

wire_struct! {
    /// A session as `session/list` reports it.
    pub struct SessionInfo {
        /// The session's id.
        pub session_id: SessionId = "sessionId" (Req),
        /// Its working directory.
        pub cwd: AbsolutePath = "cwd" (Req),
        /// Its additional directories (omitted when empty).
        pub additional_directories: Vec<AbsolutePath> = "additionalDirectories" (NullDfltNonEmpty),
        /// Its title.
        pub title: Option<String> = "title" (Lenient),
        /// When it last changed (ISO 8601).
        pub updated_at: Option<String> = "updatedAt" (Lenient),
        /// Whether it is archived (feature `v2-unstable`).
        pub archived: Option<bool> = "archived" (Lenient) if "v2-unstable",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionInfo {
    /// The session `session_id` in `cwd`.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<AbsolutePath>) -> Self {
        SessionInfo {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: Vec::new(),
            title: None,
            updated_at: None,
            #[cfg(feature = "v2-unstable")]
            archived: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SessionInfo {
    set { additional_directories: Vec<AbsolutePath> }
    opt { title: String, updated_at: String, meta: Meta }
});

#[cfg(feature = "v2-unstable")]
feature_setter!("v2-unstable", SessionInfo { archived: bool });

same_params!(
    /// Params of `session/delete`: v1's, unchanged (needs `session.delete`).
    DeleteSessionRequest => crate::DeleteSessionRequest, new(session_id: crate::SessionId)
);

same_params!(
    /// Params of `session/close`: v1's, unchanged. Closing a session with work
    /// in flight cancels it as `session/cancel` does.
    CloseSessionRequest => crate::CloseSessionRequest, new(session_id: crate::SessionId)
);

wire_struct! {
    /// Params of `session/resume`: reattach to a session, replaying its history
    /// first when `replayFrom` says so (v1's `session/load`).
    pub struct ResumeSessionRequest {
        /// The session.
        pub session_id: SessionId = "sessionId" (Req),
        /// The working directory.
        pub cwd: AbsolutePath = "cwd" (Req),
        /// The full list of additional directories (omitted when empty).
        pub additional_directories: Vec<AbsolutePath> = "additionalDirectories" (NullDfltNonEmpty),
        /// MCP servers to connect to (omitted when empty).
        pub mcp_servers: Vec<McpServer> = "mcpServers" (NullDfltNonEmpty),
        /// Where to replay the history from; `None`: no replay.
        pub replay_from: Option<ReplayFrom> = "replayFrom" (Opt),
        /// Instructions to add to or replace the agent's own (feature `v2-unstable`).
        pub system_prompt: Option<SystemPrompt> = "systemPrompt" (Opt) if "v2-unstable",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ResumeSessionRequest {
    /// Resumes `session_id` in `cwd`, without replay.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<AbsolutePath>) -> Self {
        ResumeSessionRequest {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: Vec::new(),
            mcp_servers: Vec::new(),
            replay_from: None,
            #[cfg(feature = "v2-unstable")]
            system_prompt: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ResumeSessionRequest {
    set { additional_directories: Vec<AbsolutePath>, mcp_servers: Vec<McpServer> }
    opt { replay_from: ReplayFrom, meta: Meta }
});

#[cfg(feature = "v2-unstable")]
feature_setter!(
    "v2-unstable",
    ResumeSessionRequest {
        system_prompt: SystemPrompt
    }
);

tagged_union! {
    /// Where `session/resume` replays the history from, tagged by `type`.
    pub enum ReplayFrom: tag "type" {
        /// The whole conversation.
        "start" => Start(ReplayFromStart),
    }
}

impl ReplayFrom {
    /// The whole conversation.
    pub fn start() -> Self {
        ReplayFrom::Start(ReplayFromStart::default())
    }
}

wire_struct! {
    /// Replay from the start of the conversation.
    #[derive(Default)]
    pub struct ReplayFromStart {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

setters!(ReplayFromStart { opt { meta: Meta } });

wire_struct! {
    /// The result of `session/resume` (after any replay, and after the agent
    /// sent the session's current state).
    #[derive(Default)]
    pub struct ResumeSessionResponse {
        /// The session's config options (omitted when empty).
        pub config_options: Vec<SessionConfigOption> = "configOptions" (ItemsNonEmpty),
        /// The commands it offers (omitted when empty).
        pub available_commands: Vec<AvailableCommand> = "availableCommands" (ItemsNonEmpty),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ResumeSessionResponse {
    /// Nothing to report.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ResumeSessionResponse {
    set { config_options: Vec<SessionConfigOption>, available_commands: Vec<AvailableCommand> }
    opt { meta: Meta }
});

wire_struct! {
    /// `session/cancel`: stop the session's foreground work. The agent still
    /// ends it with an idle `state_update` whose stop reason is `cancelled`.
    pub struct CancelSessionNotification {
        /// The session.
        pub session_id: SessionId = "sessionId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CancelSessionNotification {
    /// Cancels the work of `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        CancelSessionNotification {
            session_id: session_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CancelSessionNotification { opt { meta: Meta } });

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// Instructions for the agent's model on a session request (feature
    /// `v2-unstable`; only when the agent advertises `session.systemPrompt`).
    pub struct SystemPrompt {
        /// Whether they add to the agent's own or replace them.
        pub mode: SystemPromptMode = "mode" (Req),
        /// The instructions (never empty).
        pub content: Vec<ContentBlock> = "content" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl SystemPrompt {
    /// `content`, added to or replacing the agent's own instructions per `mode`.
    pub fn new(mode: SystemPromptMode, content: Vec<ContentBlock>) -> Self {
        SystemPrompt {
            mode,
            content,
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(SystemPrompt { opt { meta: Meta } });

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// Params of `session/fork`: a new session with the context of an existing
    /// one (feature `v2-unstable`).
    pub struct ForkSessionRequest {
        /// The session to fork.
        pub session_id: SessionId = "sessionId" (Req),
        /// The new session's working directory.
        pub cwd: AbsolutePath = "cwd" (Req),
        /// Its additional directories (omitted when empty).
        pub additional_directories: Vec<AbsolutePath> = "additionalDirectories" (NullDfltNonEmpty),
        /// MCP servers to connect to (omitted when empty).
        pub mcp_servers: Vec<McpServer> = "mcpServers" (NullDfltNonEmpty),
        /// Instructions to add to or replace the agent's own.
        pub system_prompt: Option<SystemPrompt> = "systemPrompt" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl ForkSessionRequest {
    /// Forks `session_id` into a session in `cwd`.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<AbsolutePath>) -> Self {
        ForkSessionRequest {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: Vec::new(),
            mcp_servers: Vec::new(),
            system_prompt: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(ForkSessionRequest {
    set { additional_directories: Vec<AbsolutePath>, mcp_servers: Vec<McpServer> }
    opt { system_prompt: SystemPrompt, meta: Meta }
});

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// The result of `session/fork` (feature `v2-unstable`).
    pub struct ForkSessionResponse {
        /// The new session's id.
        pub session_id: SessionId = "sessionId" (Req),
        /// Its config options (omitted when empty).
        pub config_options: Vec<SessionConfigOption> = "configOptions" (ItemsNonEmpty),
        /// The commands it offers (omitted when empty).
        pub available_commands: Vec<AvailableCommand> = "availableCommands" (ItemsNonEmpty),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl ForkSessionResponse {
    /// The new session `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        ForkSessionResponse {
            session_id: session_id.into(),
            config_options: Vec::new(),
            available_commands: Vec::new(),
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(ForkSessionResponse {
    set { config_options: Vec<SessionConfigOption>, available_commands: Vec<AvailableCommand> }
    opt { meta: Meta }
});

/// Declares the params of a request that names one session and nothing else.
#[cfg(feature = "v2-unstable")]
macro_rules! session_params {
    ($(#[$attr:meta])* $name:ident) => {
        wire_struct! {
            $(#[$attr])*
            pub struct $name {
                /// The session.
                pub session_id: SessionId = "sessionId" (Req),
                /// Extension metadata.
                pub meta: Option<Meta> = "_meta" (MetaField),
            }
        }

        impl $name {
            /// About `session_id`.
            pub fn new(session_id: impl Into<SessionId>) -> Self {
                $name {
                    session_id: session_id.into(),
                    meta: None,
                    extra: Default::default(),
                }
            }
        }

        setters!($name { opt { meta: Meta } });
    };
}

#[cfg(feature = "v2-unstable")]
session_params!(
    /// Params of `session/archive`: hide a session from the default list
    /// (feature `v2-unstable`).
    ArchiveSessionRequest
);
#[cfg(feature = "v2-unstable")]
session_params!(
    /// Params of `session/unarchive` (feature `v2-unstable`).
    UnarchiveSessionRequest
);
#[cfg(feature = "v2-unstable")]
session_params!(
    /// Params of `session/status`: ask for a session's state (feature
    /// `v2-unstable`).
    SessionStatusRequest
);
#[cfg(feature = "v2-unstable")]
super::auth::empty_object!(
    /// The result of `session/archive` (feature `v2-unstable`).
    ArchiveSessionResponse
);
#[cfg(feature = "v2-unstable")]
super::auth::empty_object!(
    /// The result of `session/unarchive` (feature `v2-unstable`).
    UnarchiveSessionResponse
);

#[cfg(feature = "v2-unstable")]
same_params!(
    /// Params of `session/set_title`: v1's, unchanged (feature `v2-unstable`).
    SetSessionTitleRequest => crate::SetSessionTitleRequest, new(session_id: crate::SessionId, title: String)
);

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// The result of `session/status` (feature `v2-unstable`).
    pub struct SessionStatusResponse {
        /// Whether the session is loaded.
        pub status: SessionStatus = "status" (Req),
        /// Its foreground state, when loaded.
        pub state: Option<StateUpdate> = "state" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl SessionStatusResponse {
    /// The status `status`.
    pub fn new(status: SessionStatus) -> Self {
        SessionStatusResponse {
            status,
            state: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(SessionStatusResponse { opt { state: StateUpdate, meta: Meta } });

#[cfg(feature = "v2-unstable")]
string_enum! {
    /// Whether a session is loaded (feature `v2-unstable`).
    pub enum SessionStatus {
        /// Loaded and ready for prompts.
        "open" => Open,
        /// Saved, not loaded.
        "saved" => Saved,
    }
}

#[cfg(feature = "v2-unstable")]
string_enum! {
    /// Which sessions `session/list` returns by archive state (feature
    /// `v2-unstable`).
    pub enum SessionArchiveFilter {
        /// Only sessions that are not archived (the default).
        "exclude" => Exclude,
        /// All sessions.
        "include" => Include,
        /// Only archived sessions.
        "only" => Only,
    }
}
