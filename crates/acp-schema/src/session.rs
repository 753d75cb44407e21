//! Sessions: creating, loading, resuming, listing, closing and deleting them,
//! their modes, and cancelling a running prompt turn.
//!
//! Paths (`cwd`, `additionalDirectories`) are absolute by the protocol's rules;
//! these types carry them as strings and leave checking to the receiver.

#[cfg(feature = "unstable-session-model")]
use crate::SessionModelState;
#[cfg(feature = "unstable-system-prompt")]
use crate::SystemPrompt;
use crate::util::{feature_setter, id_type, setters, wire_struct};
use crate::{McpServer, Meta, SessionConfigOption};

id_type!(
    /// Identifies a session (a conversation with its own context and history).
    SessionId
);

id_type!(
    /// Identifies a session mode.
    SessionModeId
);

wire_struct! {
    /// The `session/new` request: start a conversation in a working directory.
    pub struct NewSessionRequest {
        /// The session's working directory (absolute); relative paths resolve against it.
        pub cwd: String = "cwd" (Req),
        /// More workspace roots (absolute), if the agent advertises
        /// `sessionCapabilities.additionalDirectories`.
        pub additional_directories: Option<Vec<String>> = "additionalDirectories" (Opt),
        /// MCP servers the agent should connect to (`null` reads as none).
        pub mcp_servers: Vec<McpServer> = "mcpServers" (NullDflt),
        /// Instructions for the session (needs `sessionCapabilities.systemPrompt`).
        pub system_prompt: Option<SystemPrompt> = "systemPrompt" (Opt) if "unstable-system-prompt",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl NewSessionRequest {
    /// A new session in `cwd` with no MCP servers.
    pub fn new(cwd: impl Into<String>) -> Self {
        NewSessionRequest {
            cwd: cwd.into(),
            additional_directories: None,
            mcp_servers: Vec::new(),
            #[cfg(feature = "unstable-system-prompt")]
            system_prompt: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(NewSessionRequest {
    set { mcp_servers: Vec<McpServer> }
    opt { additional_directories: Vec<String>, meta: Meta }
});
feature_setter!(
    "unstable-system-prompt",
    NewSessionRequest {
        system_prompt: SystemPrompt
    }
);

wire_struct! {
    /// The result of `session/new`.
    pub struct NewSessionResponse {
        /// The new session's id, used in every later request about it.
        pub session_id: SessionId = "sessionId" (Req),
        /// The available modes and the current one, if the agent has modes.
        pub modes: Option<SessionModeState> = "modes" (Lenient),
        /// The models and the current one, if the agent offers a choice.
        pub models: Option<SessionModelState> = "models" (Lenient) if "unstable-session-model",
        /// The session's config options and their values, if the agent has any.
        pub config_options: Option<Vec<SessionConfigOption>> = "configOptions" (ItemsOpt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl NewSessionResponse {
    /// The session `session_id` was created.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        NewSessionResponse {
            session_id: session_id.into(),
            modes: None,
            #[cfg(feature = "unstable-session-model")]
            models: None,
            config_options: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(NewSessionResponse {
    opt { modes: SessionModeState, config_options: Vec<SessionConfigOption>, meta: Meta }
});
feature_setter!(
    "unstable-session-model",
    NewSessionResponse {
        models: SessionModelState
    }
);

wire_struct! {
    /// The `session/load` request: reopen a session and replay its history through
    /// `session/update` (needs `loadSession`).
    pub struct LoadSessionRequest {
        /// MCP servers the agent should connect to (`null` reads as none).
        pub mcp_servers: Vec<McpServer> = "mcpServers" (NullDflt),
        /// The session's working directory (absolute).
        pub cwd: String = "cwd" (Req),
        /// The complete list of extra workspace roots (absolute) to activate.
        pub additional_directories: Option<Vec<String>> = "additionalDirectories" (Opt),
        /// The session to load.
        pub session_id: SessionId = "sessionId" (Req),
        /// Instructions for the session (needs `sessionCapabilities.systemPrompt`).
        pub system_prompt: Option<SystemPrompt> = "systemPrompt" (Opt) if "unstable-system-prompt",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl LoadSessionRequest {
    /// Load `session_id` in `cwd` with no MCP servers.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<String>) -> Self {
        LoadSessionRequest {
            mcp_servers: Vec::new(),
            cwd: cwd.into(),
            additional_directories: None,
            session_id: session_id.into(),
            #[cfg(feature = "unstable-system-prompt")]
            system_prompt: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(LoadSessionRequest {
    set { mcp_servers: Vec<McpServer> }
    opt { additional_directories: Vec<String>, meta: Meta }
});
feature_setter!(
    "unstable-system-prompt",
    LoadSessionRequest {
        system_prompt: SystemPrompt
    }
);

wire_struct! {
    /// The result of `session/load`, sent after the history has been replayed.
    #[derive(Default)]
    pub struct LoadSessionResponse {
        /// The available modes and the current one, if the agent has modes.
        pub modes: Option<SessionModeState> = "modes" (Lenient),
        /// The models and the current one, if the agent offers a choice.
        pub models: Option<SessionModelState> = "models" (Lenient) if "unstable-session-model",
        /// The session's config options and their values, if the agent has any.
        pub config_options: Option<Vec<SessionConfigOption>> = "configOptions" (ItemsOpt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl LoadSessionResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(LoadSessionResponse {
    opt { modes: SessionModeState, config_options: Vec<SessionConfigOption>, meta: Meta }
});
feature_setter!(
    "unstable-session-model",
    LoadSessionResponse {
        models: SessionModelState
    }
);

wire_struct! {
    /// The `session/resume` request: reopen a session without replaying its history
    /// (needs `sessionCapabilities.resume`).
    pub struct ResumeSessionRequest {
        /// The session to resume.
        pub session_id: SessionId = "sessionId" (Req),
        /// The session's working directory (absolute).
        pub cwd: String = "cwd" (Req),
        /// The complete list of extra workspace roots (absolute) to activate.
        pub additional_directories: Option<Vec<String>> = "additionalDirectories" (Opt),
        /// MCP servers the agent should connect to.
        pub mcp_servers: Option<Vec<McpServer>> = "mcpServers" (Opt),
        /// Instructions for the session (needs `sessionCapabilities.systemPrompt`).
        pub system_prompt: Option<SystemPrompt> = "systemPrompt" (Opt) if "unstable-system-prompt",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ResumeSessionRequest {
    /// Resume `session_id` in `cwd`.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<String>) -> Self {
        ResumeSessionRequest {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: None,
            mcp_servers: None,
            #[cfg(feature = "unstable-system-prompt")]
            system_prompt: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ResumeSessionRequest {
    opt { additional_directories: Vec<String>, mcp_servers: Vec<McpServer>, meta: Meta }
});
feature_setter!(
    "unstable-system-prompt",
    ResumeSessionRequest {
        system_prompt: SystemPrompt
    }
);

wire_struct! {
    /// The result of `session/resume`.
    #[derive(Default)]
    pub struct ResumeSessionResponse {
        /// The available modes and the current one, if the agent has modes.
        pub modes: Option<SessionModeState> = "modes" (Lenient),
        /// The models and the current one, if the agent offers a choice.
        pub models: Option<SessionModelState> = "models" (Lenient) if "unstable-session-model",
        /// The session's config options and their values, if the agent has any.
        pub config_options: Option<Vec<SessionConfigOption>> = "configOptions" (ItemsOpt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ResumeSessionResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ResumeSessionResponse {
    opt { modes: SessionModeState, config_options: Vec<SessionConfigOption>, meta: Meta }
});
feature_setter!(
    "unstable-session-model",
    ResumeSessionResponse {
        models: SessionModelState
    }
);

wire_struct! {
    /// The `session/close` request: cancel the session's work and free its resources
    /// (needs `sessionCapabilities.close`).
    pub struct CloseSessionRequest {
        /// The session to close.
        pub session_id: SessionId = "sessionId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CloseSessionRequest {
    /// Close `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        CloseSessionRequest {
            session_id: session_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CloseSessionRequest { opt { meta: Meta } });

wire_struct! {
    /// The (empty) result of `session/close`.
    #[derive(Default)]
    pub struct CloseSessionResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CloseSessionResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(CloseSessionResponse { opt { meta: Meta } });

wire_struct! {
    /// The `session/delete` request: remove a session from `session/list`
    /// (needs `sessionCapabilities.delete`).
    pub struct DeleteSessionRequest {
        /// The session to delete.
        pub session_id: SessionId = "sessionId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl DeleteSessionRequest {
    /// Delete `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        DeleteSessionRequest {
            session_id: session_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(DeleteSessionRequest { opt { meta: Meta } });

wire_struct! {
    /// The (empty) result of `session/delete`.
    #[derive(Default)]
    pub struct DeleteSessionResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl DeleteSessionResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(DeleteSessionResponse { opt { meta: Meta } });

wire_struct! {
    /// The `session/list` request: one page of known sessions
    /// (needs `sessionCapabilities.list`).
    #[derive(Default)]
    pub struct ListSessionsRequest {
        /// Only sessions with this working directory (absolute).
        pub cwd: Option<String> = "cwd" (Opt),
        /// The `nextCursor` of the previous page; absent for the first page.
        pub cursor: Option<String> = "cursor" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ListSessionsRequest {
    /// The first page of all sessions.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ListSessionsRequest { opt { cwd: String, cursor: String, meta: Meta } });

wire_struct! {
    /// The result of `session/list`.
    #[derive(Default)]
    pub struct ListSessionsResponse {
        /// The sessions on this page.
        pub sessions: Vec<SessionInfo> = "sessions" (ItemsReq),
        /// Pass this as `cursor` to get the next page; absent on the last page.
        pub next_cursor: Option<String> = "nextCursor" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ListSessionsResponse {
    /// A last page holding `sessions`.
    pub fn new(sessions: impl Into<Vec<SessionInfo>>) -> Self {
        ListSessionsResponse {
            sessions: sessions.into(),
            next_cursor: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ListSessionsResponse { opt { next_cursor: String, meta: Meta } });

wire_struct! {
    /// One session as reported by `session/list`.
    pub struct SessionInfo {
        /// The session's id.
        pub session_id: SessionId = "sessionId" (Req),
        /// The session's working directory (absolute).
        pub cwd: String = "cwd" (Req),
        /// The session's complete, ordered list of extra workspace roots.
        pub additional_directories: Option<Vec<String>> = "additionalDirectories" (ItemsOpt),
        /// A title for display.
        pub title: Option<String> = "title" (Lenient),
        /// When the session was last active (ISO 8601).
        pub updated_at: Option<String> = "updatedAt" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionInfo {
    /// Session `session_id` working in `cwd`.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<String>) -> Self {
        SessionInfo {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: None,
            title: None,
            updated_at: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SessionInfo {
    opt {
        additional_directories: Vec<String>,
        title: String,
        updated_at: String,
        meta: Meta,
    }
});

wire_struct! {
    /// A mode the agent can work in (for example "ask" or "code").
    pub struct SessionMode {
        /// The mode's id, used in `session/set_mode`.
        pub id: SessionModeId = "id" (Req),
        /// A name to show the user.
        pub name: String = "name" (Req),
        /// More detail to show the user.
        pub description: Option<String> = "description" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionMode {
    /// Mode `id` shown as `name`.
    pub fn new(id: impl Into<SessionModeId>, name: impl Into<String>) -> Self {
        SessionMode {
            id: id.into(),
            name: name.into(),
            description: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SessionMode { opt { description: String, meta: Meta } });

wire_struct! {
    /// The modes a session offers and the one it is in.
    pub struct SessionModeState {
        /// The mode the agent is in now.
        pub current_mode_id: SessionModeId = "currentModeId" (Req),
        /// Every mode the agent can switch to.
        pub available_modes: Vec<SessionMode> = "availableModes" (ItemsReq),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionModeState {
    /// In mode `current_mode_id` out of `available_modes`.
    pub fn new(
        current_mode_id: impl Into<SessionModeId>,
        available_modes: impl Into<Vec<SessionMode>>,
    ) -> Self {
        SessionModeState {
            current_mode_id: current_mode_id.into(),
            available_modes: available_modes.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SessionModeState { opt { meta: Meta } });

wire_struct! {
    /// The `session/set_mode` request: switch a session to another mode.
    pub struct SetSessionModeRequest {
        /// The session to switch.
        pub session_id: SessionId = "sessionId" (Req),
        /// The mode to switch to (one of `availableModes`).
        pub mode_id: SessionModeId = "modeId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SetSessionModeRequest {
    /// Switch `session_id` to `mode_id`.
    pub fn new(session_id: impl Into<SessionId>, mode_id: impl Into<SessionModeId>) -> Self {
        SetSessionModeRequest {
            session_id: session_id.into(),
            mode_id: mode_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SetSessionModeRequest { opt { meta: Meta } });

wire_struct! {
    /// The (empty) result of `session/set_mode`.
    #[derive(Default)]
    pub struct SetSessionModeResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SetSessionModeResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SetSessionModeResponse { opt { meta: Meta } });

wire_struct! {
    /// The `session/cancel` notification: stop the session's running prompt turn.
    /// The agent then ends the turn with stop reason `cancelled`.
    pub struct CancelNotification {
        /// The session whose turn to cancel.
        pub session_id: SessionId = "sessionId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CancelNotification {
    /// Cancel the turn running in `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        CancelNotification {
            session_id: session_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CancelNotification { opt { meta: Meta } });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_session_request_wire_shape() {
        let req = NewSessionRequest::new("/work");
        assert_eq!(
            serde_json::to_string(&req).unwrap(),
            r#"{"cwd":"/work","mcpServers":[]}"#
        );
        let back: NewSessionRequest =
            crate::decode(r#"{"cwd":"/work","mcpServers":null}"#).unwrap();
        assert_eq!(back, req);
        let err = crate::decode::<NewSessionRequest>(r#"{"cwd":"/work"}"#).unwrap_err();
        assert!(err.message.contains("mcpServers"), "{err}");
    }

    #[test]
    fn list_response_drops_bad_sessions() {
        let resp: ListSessionsResponse = crate::decode(
            r#"{"sessions":[{"sessionId":"a","cwd":"/x","title":5},{"cwd":"/y"}],"nextCursor":3}"#,
        )
        .unwrap();
        assert_eq!(resp.sessions, vec![SessionInfo::new("a", "/x")]);
        assert_eq!(resp.next_cursor, None);
    }
}
