//! File system access through the client: the agent reads and writes text files
//! as the editor sees them (unsaved changes included), if the client allows it.

use crate::util::{setters, wire_struct};
use crate::{Meta, SessionId};

wire_struct! {
    /// Params of `fs/read_text_file` (needs the `fs.readTextFile` client capability).
    pub struct ReadTextFileRequest {
        /// The session asking.
        pub session_id: SessionId = "sessionId" (Req),
        /// Absolute path of the file.
        pub path: String = "path" (Req),
        /// First line to read, counting from 1.
        pub line: Option<u32> = "line" (Opt),
        /// Most lines to read.
        pub limit: Option<u32> = "limit" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
            extra: Default::default(),
        }
    }
}

setters!(ReadTextFileRequest { opt { line: u32, limit: u32, meta: Meta } });

wire_struct! {
    /// Result of `fs/read_text_file`.
    pub struct ReadTextFileResponse {
        /// The text read.
        pub content: String = "content" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ReadTextFileResponse {
    /// A response with `content`.
    pub fn new(content: impl Into<String>) -> Self {
        ReadTextFileResponse {
            content: content.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ReadTextFileResponse { opt { meta: Meta } });

wire_struct! {
    /// Params of `fs/write_text_file` (needs the `fs.writeTextFile` client capability).
    pub struct WriteTextFileRequest {
        /// The session asking.
        pub session_id: SessionId = "sessionId" (Req),
        /// Absolute path of the file.
        pub path: String = "path" (Req),
        /// The complete new text of the file.
        pub content: String = "content" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
            extra: Default::default(),
        }
    }
}

setters!(WriteTextFileRequest { opt { meta: Meta } });

wire_struct! {
    /// Result of `fs/write_text_file`: nothing beyond success.
    #[derive(Default)]
    pub struct WriteTextFileResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl WriteTextFileResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(WriteTextFileResponse { opt { meta: Meta } });
