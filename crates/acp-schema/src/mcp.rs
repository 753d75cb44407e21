//! MCP servers: how the client tells the agent which Model Context Protocol
//! servers to connect to when it creates, loads or resumes a session.

#[cfg(feature = "unstable-mcp-over-acp")]
use crate::McpServerAcp;
use crate::util::{setters, tagged_union, wire_struct};
use crate::{EnvVariable, Meta};
use std::borrow::Cow;

tagged_union! {
    /// An MCP server to connect to. Tagged by `type`; a stdio server has no tag.
    pub enum McpServer: tag "type" {
        /// A server reached over streamable HTTP (needs `mcpCapabilities.http`).
        "http" => Http(McpServerHttp),
        /// A server reached over server-sent events (needs `mcpCapabilities.sse`).
        "sse" => Sse(McpServerSse),
        /// A server the client provides over the ACP connection (needs
        /// `mcpCapabilities.acp`).
        "acp" => Acp(McpServerAcp) if "unstable-mcp-over-acp",
    }
    default
    /// A server launched as a subprocess and spoken to over stdio (every agent
    /// supports it; written without a `type`).
    Stdio(McpServerStdio) also "stdio"
}

impl McpServer {
    /// The server's name (`None` only for an unknown transport without a string `name`).
    pub fn name(&self) -> Option<Cow<'_, str>> {
        match self {
            McpServer::Stdio(s) => Some(Cow::Borrowed(&s.name)),
            McpServer::Http(s) => Some(Cow::Borrowed(&s.name)),
            McpServer::Sse(s) => Some(Cow::Borrowed(&s.name)),
            #[cfg(feature = "unstable-mcp-over-acp")]
            McpServer::Acp(s) => Some(Cow::Borrowed(&s.name)),
            McpServer::Other(map) => map.get_str("name"),
        }
    }
}

impl From<McpServerStdio> for McpServer {
    fn from(s: McpServerStdio) -> Self {
        McpServer::Stdio(s)
    }
}

impl From<McpServerHttp> for McpServer {
    fn from(s: McpServerHttp) -> Self {
        McpServer::Http(s)
    }
}

#[cfg(feature = "unstable-mcp-over-acp")]
impl From<McpServerAcp> for McpServer {
    fn from(s: McpServerAcp) -> Self {
        McpServer::Acp(s)
    }
}

impl From<McpServerSse> for McpServer {
    fn from(s: McpServerSse) -> Self {
        McpServer::Sse(s)
    }
}

wire_struct! {
    /// An MCP server the agent starts as a subprocess.
    pub struct McpServerStdio {
        /// A name that identifies the server to people.
        pub name: String = "name" (Req),
        /// Absolute path of the server executable.
        pub command: String = "command" (Req),
        /// Command-line arguments (`null` reads as none).
        pub args: Vec<String> = "args" (NullDflt),
        /// Environment variables for the server process (`null` reads as none).
        pub env: Vec<EnvVariable> = "env" (NullDflt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl McpServerStdio {
    /// A server `name` started by running `command` with no arguments or variables.
    pub fn new(name: impl Into<String>, command: impl Into<String>) -> Self {
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

setters!(McpServerStdio {
    set { args: Vec<String>, env: Vec<EnvVariable> }
    opt { meta: Meta }
});

wire_struct! {
    /// An MCP server reached over HTTP.
    pub struct McpServerHttp {
        /// A name that identifies the server to people.
        pub name: String = "name" (Req),
        /// The server's URL.
        pub url: String = "url" (Req),
        /// Headers to send with every request (`null` reads as none).
        pub headers: Vec<HttpHeader> = "headers" (NullDflt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl McpServerHttp {
    /// A server `name` at `url`, with no extra headers.
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

setters!(McpServerHttp {
    set { headers: Vec<HttpHeader> }
    opt { meta: Meta }
});

wire_struct! {
    /// An MCP server reached over server-sent events.
    pub struct McpServerSse {
        /// A name that identifies the server to people.
        pub name: String = "name" (Req),
        /// The server's SSE endpoint URL.
        pub url: String = "url" (Req),
        /// Headers to send with every request (`null` reads as none).
        pub headers: Vec<HttpHeader> = "headers" (NullDflt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl McpServerSse {
    /// A server `name` at `url`, with no extra headers.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServerSse {
            name: name.into(),
            url: url.into(),
            headers: Vec::new(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(McpServerSse {
    set { headers: Vec<HttpHeader> }
    opt { meta: Meta }
});

wire_struct! {
    /// An HTTP header sent to an MCP server.
    pub struct HttpHeader {
        /// The header name.
        pub name: String = "name" (Req),
        /// The header value.
        pub value: String = "value" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl HttpHeader {
    /// The header `name: value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        HttpHeader {
            name: name.into(),
            value: value.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(HttpHeader { opt { meta: Meta } });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_stdio_tag_is_the_stdio_server() {
        let tagged = r#"{"type":"stdio","name":"fs","command":"/bin/mcp","args":[],"env":[]}"#;
        let server: McpServer = crate::decode(tagged).unwrap();
        assert!(matches!(server, McpServer::Stdio(_)));
        assert_eq!(
            serde_json::to_string(&server).unwrap(),
            r#"{"name":"fs","command":"/bin/mcp","args":[],"env":[]}"#
        );
    }

    #[test]
    fn transports_round_trip() {
        let stdio =
            r#"{"name":"fs","command":"/bin/mcp","args":["-v"],"env":[{"name":"A","value":"1"}]}"#;
        let s: McpServer = crate::decode(stdio).unwrap();
        assert!(matches!(s, McpServer::Stdio(_)));
        assert_eq!(serde_json::to_string(&s).unwrap(), stdio);

        let http = r#"{"type":"http","name":"h","url":"https://x/mcp","headers":[{"name":"K","value":"V"}]}"#;
        let s: McpServer = crate::decode(http).unwrap();
        assert!(matches!(s, McpServer::Http(_)));
        assert_eq!(serde_json::to_string(&s).unwrap(), http);

        let sse = r#"{"type":"sse","name":"s","url":"https://x/sse","headers":[]}"#;
        let s: McpServer = crate::decode(sse).unwrap();
        assert!(matches!(s, McpServer::Sse(_)));
        assert_eq!(serde_json::to_string(&s).unwrap(), sse);

        // Without `unstable-mcp-over-acp`, `acp` is a transport this version does not know.
        #[cfg(not(feature = "unstable-mcp-over-acp"))]
        {
            let acp = r#"{"type":"acp","name":"a","id":"x"}"#;
            let s: McpServer = crate::decode(acp).unwrap();
            assert!(matches!(s, McpServer::Other(_)));
            assert_eq!(serde_json::to_string(&s).unwrap(), acp);
        }
        #[cfg(feature = "unstable-mcp-over-acp")]
        {
            let acp = r#"{"type":"acp","name":"a","serverId":"x"}"#;
            let s: McpServer = crate::decode(acp).unwrap();
            assert_eq!(s, McpServer::Acp(crate::McpServerAcp::new("a", "x")));
            assert_eq!(s.name().as_deref(), Some("a"));
            assert_eq!(serde_json::to_string(&s).unwrap(), acp);
        }
        let unknown = r#"{"type":"_pipe","name":"p","fd":3}"#;
        let s: McpServer = crate::decode(unknown).unwrap();
        assert!(matches!(s, McpServer::Other(_)));
        assert_eq!(s.name().as_deref(), Some("p"));
        assert_eq!(serde_json::to_string(&s).unwrap(), unknown);
    }

    #[test]
    fn null_lists_and_missing_lists() {
        let s: McpServerStdio =
            crate::decode(r#"{"name":"n","command":"c","args":null,"env":null}"#).unwrap();
        assert_eq!(s, McpServerStdio::new("n", "c"));
        let err = crate::decode::<McpServer>(r#"{"name":"n","command":"c","env":[]}"#).unwrap_err();
        assert!(err.message.contains("args"), "{err}");
        let err = crate::decode::<McpServer>(r#"{"name":"n","command":"c","args":[1],"env":[]}"#)
            .unwrap_err();
        assert_eq!(err.path, "args[0]");
    }
}
