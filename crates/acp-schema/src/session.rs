//! Sessions: creating, loading, resuming, listing, closing and deleting them,
//! their modes, and cancelling a running prompt turn.
//!
//! Paths (`cwd`, `additionalDirectories`) are absolute by the protocol's rules;
//! these types carry them as strings and leave checking to the receiver.

use crate::util::default_on_null;
use crate::util::object_default_on_error;
use crate::util::{
    default_on_error, id_type, meta, setters, skip_invalid_items, skip_invalid_items_opt,
};
use crate::{McpServer, Meta, SessionConfigOption};
use serde::{Deserialize, Serialize};

id_type!(
    /// Identifies a session (a conversation with its own context and history).
    SessionId
);

id_type!(
    /// Identifies a session mode.
    SessionModeId
);

/// The `session/new` request: start a conversation in a working directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NewSessionRequest {
    /// The session's working directory (absolute); relative paths resolve against it.
    pub cwd: String,
    /// More workspace roots (absolute), if the agent advertises
    /// `sessionCapabilities.additionalDirectories`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_directories: Option<Vec<String>>,
    /// MCP servers the agent should connect to (`null` reads as none).
    #[serde(deserialize_with = "default_on_null")]
    pub mcp_servers: Vec<McpServer>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl NewSessionRequest {
    /// A new session in `cwd` with no MCP servers.
    pub fn new(cwd: impl Into<String>) -> Self {
        NewSessionRequest {
            cwd: cwd.into(),
            additional_directories: None,
            mcp_servers: Vec::new(),
            meta: None,
        }
    }
}

setters!(NewSessionRequest {
    set { mcp_servers: Vec<McpServer> }
    opt { additional_directories: Vec<String>, meta: Meta }
});

/// The result of `session/new`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NewSessionResponse {
    /// The new session's id, used in every later request about it.
    pub session_id: SessionId,
    /// The available modes and the current one, if the agent has modes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "object_default_on_error"
    )]
    pub modes: Option<SessionModeState>,
    /// The session's config options and their values, if the agent has any.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "skip_invalid_items_opt"
    )]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl NewSessionResponse {
    /// The session `session_id` was created.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        NewSessionResponse {
            session_id: session_id.into(),
            modes: None,
            config_options: None,
            meta: None,
        }
    }
}

setters!(NewSessionResponse {
    opt { modes: SessionModeState, config_options: Vec<SessionConfigOption>, meta: Meta }
});

/// The `session/load` request: reopen a session and replay its history through
/// `session/update` (needs `loadSession`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LoadSessionRequest {
    /// MCP servers the agent should connect to (`null` reads as none).
    #[serde(deserialize_with = "default_on_null")]
    pub mcp_servers: Vec<McpServer>,
    /// The session's working directory (absolute).
    pub cwd: String,
    /// The complete list of extra workspace roots (absolute) to activate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_directories: Option<Vec<String>>,
    /// The session to load.
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl LoadSessionRequest {
    /// Load `session_id` in `cwd` with no MCP servers.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<String>) -> Self {
        LoadSessionRequest {
            mcp_servers: Vec::new(),
            cwd: cwd.into(),
            additional_directories: None,
            session_id: session_id.into(),
            meta: None,
        }
    }
}

setters!(LoadSessionRequest {
    set { mcp_servers: Vec<McpServer> }
    opt { additional_directories: Vec<String>, meta: Meta }
});

/// The result of `session/load`, sent after the history has been replayed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LoadSessionResponse {
    /// The available modes and the current one, if the agent has modes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "object_default_on_error"
    )]
    pub modes: Option<SessionModeState>,
    /// The session's config options and their values, if the agent has any.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "skip_invalid_items_opt"
    )]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
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

/// The `session/resume` request: reopen a session without replaying its history
/// (needs `sessionCapabilities.resume`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResumeSessionRequest {
    /// The session to resume.
    pub session_id: SessionId,
    /// The session's working directory (absolute).
    pub cwd: String,
    /// The complete list of extra workspace roots (absolute) to activate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_directories: Option<Vec<String>>,
    /// MCP servers the agent should connect to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<McpServer>>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl ResumeSessionRequest {
    /// Resume `session_id` in `cwd`.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<String>) -> Self {
        ResumeSessionRequest {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: None,
            mcp_servers: None,
            meta: None,
        }
    }
}

setters!(ResumeSessionRequest {
    opt { additional_directories: Vec<String>, mcp_servers: Vec<McpServer>, meta: Meta }
});

/// The result of `session/resume`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResumeSessionResponse {
    /// The available modes and the current one, if the agent has modes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "object_default_on_error"
    )]
    pub modes: Option<SessionModeState>,
    /// The session's config options and their values, if the agent has any.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "skip_invalid_items_opt"
    )]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
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

/// The `session/close` request: cancel the session's work and free its resources
/// (needs `sessionCapabilities.close`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CloseSessionRequest {
    /// The session to close.
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl CloseSessionRequest {
    /// Close `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        CloseSessionRequest {
            session_id: session_id.into(),
            meta: None,
        }
    }
}

setters!(CloseSessionRequest { opt { meta: Meta } });

/// The (empty) result of `session/close`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CloseSessionResponse {
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl CloseSessionResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(CloseSessionResponse { opt { meta: Meta } });

/// The `session/delete` request: remove a session from `session/list`
/// (needs `sessionCapabilities.delete`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DeleteSessionRequest {
    /// The session to delete.
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl DeleteSessionRequest {
    /// Delete `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        DeleteSessionRequest {
            session_id: session_id.into(),
            meta: None,
        }
    }
}

setters!(DeleteSessionRequest { opt { meta: Meta } });

/// The (empty) result of `session/delete`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DeleteSessionResponse {
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl DeleteSessionResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(DeleteSessionResponse { opt { meta: Meta } });

/// The `session/list` request: one page of known sessions
/// (needs `sessionCapabilities.list`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListSessionsRequest {
    /// Only sessions with this working directory (absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The `nextCursor` of the previous page; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl ListSessionsRequest {
    /// The first page of all sessions.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ListSessionsRequest { opt { cwd: String, cursor: String, meta: Meta } });

/// The result of `session/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListSessionsResponse {
    /// The sessions on this page.
    #[serde(deserialize_with = "skip_invalid_items")]
    pub sessions: Vec<SessionInfo>,
    /// Pass this as `cursor` to get the next page; absent on the last page.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub next_cursor: Option<String>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl ListSessionsResponse {
    /// A last page holding `sessions`.
    pub fn new(sessions: impl Into<Vec<SessionInfo>>) -> Self {
        ListSessionsResponse {
            sessions: sessions.into(),
            next_cursor: None,
            meta: None,
        }
    }
}

setters!(ListSessionsResponse { opt { next_cursor: String, meta: Meta } });

/// One session as reported by `session/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionInfo {
    /// The session's id.
    pub session_id: SessionId,
    /// The session's working directory (absolute).
    pub cwd: String,
    /// The session's complete, ordered list of extra workspace roots.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "skip_invalid_items_opt"
    )]
    pub additional_directories: Option<Vec<String>>,
    /// A title for display.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub title: Option<String>,
    /// When the session was last active (ISO 8601).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub updated_at: Option<String>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
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

/// A mode the agent can work in (for example "ask" or "code").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionMode {
    /// The mode's id, used in `session/set_mode`.
    pub id: SessionModeId,
    /// A name to show the user.
    pub name: String,
    /// More detail to show the user.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl SessionMode {
    /// Mode `id` shown as `name`.
    pub fn new(id: impl Into<SessionModeId>, name: impl Into<String>) -> Self {
        SessionMode {
            id: id.into(),
            name: name.into(),
            description: None,
            meta: None,
        }
    }
}

setters!(SessionMode { opt { description: String, meta: Meta } });

/// The modes a session offers and the one it is in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionModeState {
    /// The mode the agent is in now.
    pub current_mode_id: SessionModeId,
    /// Every mode the agent can switch to.
    #[serde(deserialize_with = "skip_invalid_items")]
    pub available_modes: Vec<SessionMode>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
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
        }
    }
}

setters!(SessionModeState { opt { meta: Meta } });

/// The `session/set_mode` request: switch a session to another mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetSessionModeRequest {
    /// The session to switch.
    pub session_id: SessionId,
    /// The mode to switch to (one of `availableModes`).
    pub mode_id: SessionModeId,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl SetSessionModeRequest {
    /// Switch `session_id` to `mode_id`.
    pub fn new(session_id: impl Into<SessionId>, mode_id: impl Into<SessionModeId>) -> Self {
        SetSessionModeRequest {
            session_id: session_id.into(),
            mode_id: mode_id.into(),
            meta: None,
        }
    }
}

setters!(SetSessionModeRequest { opt { meta: Meta } });

/// The (empty) result of `session/set_mode`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetSessionModeResponse {
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl SetSessionModeResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SetSessionModeResponse { opt { meta: Meta } });

/// The `session/cancel` notification: stop the session's running prompt turn.
/// The agent then ends the turn with stop reason `cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelNotification {
    /// The session whose turn to cancel.
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl CancelNotification {
    /// Cancel the turn running in `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        CancelNotification {
            session_id: session_id.into(),
            meta: None,
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
