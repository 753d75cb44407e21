//! Where a session's output goes: the seam between the turn (and everything
//! else that shows the user something) and the protocol version the client
//! speaks.
//!
//! The agent's logic writes one vocabulary, v1's `SessionUpdate`s, and asks
//! permission with a [`PermissionAsk`]; an [`Output`] renders them for its
//! client. A v1 client is sent them as they are (byte for byte what the
//! agent sent before this seam existed). A v2 client gets them translated
//! (see [`v2`]): chunks grouped into messages with ids, tool calls
//! upserted by id, diffs as structured file changes, permission requests
//! with a title, a description and a subject.
//!
//! Only a v1 client can lend the agent its file system and terminals
//! ([`Output::editor`]); with a v2 client the tools always use the agent's
//! own (`acp-host`, see [`crate::tools::Local`]).

pub mod v2;

use acp::ConnectionError;
use acp::schema::*;
use std::path::PathBuf;
use std::sync::Arc;

/// Where a connection's session output goes.
#[derive(Clone)]
pub enum Output {
    /// A v1 client: updates and permission requests as v1 sends them.
    V1(acp::AgentSideConnection),
    /// A v2 client: everything translated (see [`v2`]).
    V2(Arc<v2::Sink>),
}

/// A permission question, in terms both versions can render.
#[derive(Debug, Clone)]
pub struct PermissionAsk {
    /// The session asking.
    pub session_id: SessionId,
    /// The tool call it is about (already shown to the client).
    pub tool_call_id: ToolCallId,
    /// The tool call's title, e.g. "Edit src/main.rs".
    pub title: String,
    /// What "always" would cover, in words.
    pub covers: String,
    /// The file change the call would make, when it changes a file.
    pub diff: Option<ToolCallContent>,
    /// The command the call would run, and where.
    pub command: Option<(String, PathBuf)>,
    /// The answers offered.
    pub options: Vec<PermissionOption>,
}

impl Output {
    /// Sends `update` for `session_id`. A failure means the client went
    /// away.
    pub async fn update(
        &self,
        session_id: &SessionId,
        update: SessionUpdate,
    ) -> Result<(), ConnectionError> {
        match self {
            Output::V1(conn) => {
                conn.session_notification(SessionNotification::new(session_id.clone(), update))
                    .await
            }
            Output::V2(sink) => sink.update(session_id, update).await,
        }
    }

    /// Asks the user `ask`; the chosen option's id, or `None` when the
    /// client cancelled the question.
    pub async fn request_permission(
        &self,
        ask: PermissionAsk,
    ) -> Result<Option<PermissionOptionId>, ConnectionError> {
        match self {
            Output::V1(conn) => {
                let mut tool_call = ToolCallUpdate::new(ask.tool_call_id);
                if let Some(d) = ask.diff {
                    tool_call = tool_call.content(vec![d]);
                }
                let req = RequestPermissionRequest::new(ask.session_id, tool_call, ask.options);
                let answer = conn.request_permission(req).await?;
                Ok(answer.outcome.selected_option().cloned())
            }
            Output::V2(sink) => sink.request_permission(ask).await,
        }
    }

    /// The client's connection when it can lend the agent its file system
    /// and terminals (a v1 client; which of them it offers is in its
    /// capabilities).
    pub fn editor(&self) -> Option<&acp::AgentSideConnection> {
        match self {
            Output::V1(conn) => Some(conn),
            Output::V2(_) => None,
        }
    }
}
