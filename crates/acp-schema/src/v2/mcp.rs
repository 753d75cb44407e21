//! MCP servers in v2: every server carries its transport as `type` (stdio
//! included), SSE is gone, and empty lists may be left out.

use super::AbsolutePath;
#[cfg(feature = "v2-unstable")]
use crate::McpServerAcp;
use crate::util::{setters, tagged_union, wire_struct};
use crate::{EnvVariable, HttpHeader, Meta};

tagged_union! {
    /// An MCP server the agent should connect to, tagged by `type`.
    pub enum McpServer: tag "type" {
        /// A remote server over streamable HTTP (needs `session.mcp.http`).
        "http" => Http(McpServerHttp),
        /// A server the client provides over the ACP connection (needs
        /// `session.mcp.acp`; feature `v2-unstable`).
        "acp" => Acp(McpServerAcp) if "v2-unstable",
        /// A local server the agent starts (needs `session.mcp.stdio`).
        "stdio" => Stdio(McpServerStdio),
    }
}

impl McpServer {
    /// The server's name (`None` for a transport this version does not know
    /// whose `name` is not a string).
    pub fn name(&self) -> Option<String> {
        match self {
            McpServer::Http(s) => Some(s.name.clone()),
            #[cfg(feature = "v2-unstable")]
            McpServer::Acp(s) => Some(s.name.clone()),
            McpServer::Stdio(s) => Some(s.name.clone()),
            McpServer::Other(raw) => raw.get_str("name").map(|s| s.into_owned()),
        }
    }
}

impl From<McpServerHttp> for McpServer {
    fn from(s: McpServerHttp) -> Self {
        McpServer::Http(s)
    }
}

impl From<McpServerStdio> for McpServer {
    fn from(s: McpServerStdio) -> Self {
        McpServer::Stdio(s)
    }
}

wire_struct! {
    /// A remote MCP server over streamable HTTP.
    pub struct McpServerHttp {
        /// The server's name, unique within the session.
        pub name: String = "name" (Req),
        /// Its URL.
        pub url: String = "url" (Req),
        /// HTTP headers to send (omitted when empty).
        pub headers: Vec<HttpHeader> = "headers" (NullDfltNonEmpty),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl McpServerHttp {
    /// The server `name` at `url`.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServerHttp {
            name: name.into(),
            url: url.into(),
            headers: Vec::new(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(McpServerHttp { set { headers: Vec<HttpHeader> } opt { meta: Meta } });

wire_struct! {
    /// A local MCP server the agent starts as a subprocess.
    pub struct McpServerStdio {
        /// The server's name, unique within the session.
        pub name: String = "name" (Req),
        /// The program to run.
        pub command: AbsolutePath = "command" (Req),
        /// Its arguments (omitted when empty).
        pub args: Vec<String> = "args" (NullDfltNonEmpty),
        /// Environment variables to set (omitted when empty).
        pub env: Vec<EnvVariable> = "env" (NullDfltNonEmpty),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl McpServerStdio {
    /// The server `name`, run as `command`.
    pub fn new(name: impl Into<String>, command: impl Into<AbsolutePath>) -> Self {
        McpServerStdio {
            name: name.into(),
            command: command.into(),
            args: Vec::new(),
            env: Vec::new(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(McpServerStdio { set { args: Vec<String>, env: Vec<EnvVariable> } opt { meta: Meta } });

#[cfg(feature = "v2-unstable")]
super::same_params!(
    /// Params of the `mcp/message` request: v1's, unchanged (feature
    /// `v2-unstable`).
    MessageMcpRequest => crate::MessageMcpRequest,
    new(server_id: crate::McpServerAcpId, request_id: crate::McpRequestId, method: String)
);

#[cfg(feature = "v2-unstable")]
super::same_params!(
    /// Params of the `mcp/message` notification: v1's, unchanged (feature
    /// `v2-unstable`).
    MessageMcpNotification => crate::MessageMcpNotification,
    new(server_id: crate::McpServerAcpId, request_id: crate::McpRequestId, method: String)
);
