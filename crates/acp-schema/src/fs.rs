//! File system access through the client: the agent reads and writes text files
//! as the editor sees them (unsaved changes included), if the client allows it.

use crate::util::{meta, setters};
use crate::{Meta, SessionId};
use serde::{Deserialize, Serialize};

/// Params of `fs/read_text_file` (needs the `fs.readTextFile` client capability).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadTextFileRequest {
    /// The session asking.
    pub session_id: SessionId,
    /// Absolute path of the file.
    pub path: String,
    /// First line to read, counting from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Most lines to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl ReadTextFileRequest {
    /// Reads the whole of `path`.
    pub fn new(session_id: impl Into<SessionId>, path: impl Into<String>) -> Self {
        ReadTextFileRequest {
            session_id: session_id.into(),
            path: path.into(),
            line: None,
            limit: None,
            meta: None,
        }
    }
}

setters!(ReadTextFileRequest { opt { line: u32, limit: u32, meta: Meta } });

/// Result of `fs/read_text_file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadTextFileResponse {
    /// The text read.
    pub content: String,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl ReadTextFileResponse {
    /// A response with `content`.
    pub fn new(content: impl Into<String>) -> Self {
        ReadTextFileResponse {
            content: content.into(),
            meta: None,
        }
    }
}

setters!(ReadTextFileResponse { opt { meta: Meta } });

/// Params of `fs/write_text_file` (needs the `fs.writeTextFile` client capability).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WriteTextFileRequest {
    /// The session asking.
    pub session_id: SessionId,
    /// Absolute path of the file.
    pub path: String,
    /// The complete new text of the file.
    pub content: String,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl WriteTextFileRequest {
    /// Writes `content` to `path`.
    pub fn new(
        session_id: impl Into<SessionId>,
        path: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        WriteTextFileRequest {
            session_id: session_id.into(),
            path: path.into(),
            content: content.into(),
            meta: None,
        }
    }
}

setters!(WriteTextFileRequest { opt { meta: Meta } });

/// Result of `fs/write_text_file`: nothing beyond success.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WriteTextFileResponse {
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl WriteTextFileResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(WriteTextFileResponse { opt { meta: Meta } });
