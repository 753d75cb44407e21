//! MCP servers: how the client tells the agent which Model Context Protocol
//! servers to connect to when it creates, loads or resumes a session.

use crate::util::{default_on_null, meta, setters, tagged_union};
use crate::{EnvVariable, Meta};
use serde::{Deserialize, Serialize};

tagged_union! {
    /// An MCP server to connect to. Tagged by `type`; a stdio server has no tag.
    pub enum McpServer: tag "type" {
        /// A server reached over streamable HTTP (needs `mcpCapabilities.http`).
        "http" => Http(McpServerHttp),
        /// A server reached over server-sent events (needs `mcpCapabilities.sse`).
        "sse" => Sse(McpServerSse),
    }
    default
    /// A server launched as a subprocess and spoken to over stdio (every agent
    /// supports it; written without a `type`).
    Stdio(McpServerStdio) also "stdio"
}

impl McpServer {
    /// The server's name (`None` only for an unknown transport without a string `name`).
    pub fn name(&self) -> Option<&str> {
        match self {
            McpServer::Stdio(s) => Some(&s.name),
            McpServer::Http(s) => Some(&s.name),
            McpServer::Sse(s) => Some(&s.name),
            McpServer::Other(map) => map.get("name").and_then(|v| v.as_str()),
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

impl From<McpServerSse> for McpServer {
    fn from(s: McpServerSse) -> Self {
        McpServer::Sse(s)
    }
}

/// An MCP server the agent starts as a subprocess.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpServerStdio {
    /// A name that identifies the server to people.
    pub name: String,
    /// Absolute path of the server executable.
    pub command: String,
    /// Command-line arguments (`null` reads as none).
    #[serde(deserialize_with = "default_on_null")]
    pub args: Vec<String>,
    /// Environment variables for the server process (`null` reads as none).
    #[serde(deserialize_with = "default_on_null")]
    pub env: Vec<EnvVariable>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
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
        }
    }
}

setters!(McpServerStdio {
    set { args: Vec<String>, env: Vec<EnvVariable> }
    opt { meta: Meta }
});

/// An MCP server reached over HTTP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpServerHttp {
    /// A name that identifies the server to people.
    pub name: String,
    /// The server's URL.
    pub url: String,
    /// Headers to send with every request (`null` reads as none).
    #[serde(deserialize_with = "default_on_null")]
    pub headers: Vec<HttpHeader>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl McpServerHttp {
    /// A server `name` at `url`, with no extra headers.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServerHttp {
            name: name.into(),
            url: url.into(),
            headers: Vec::new(),
            meta: None,
        }
    }
}

setters!(McpServerHttp {
    set { headers: Vec<HttpHeader> }
    opt { meta: Meta }
});

/// An MCP server reached over server-sent events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpServerSse {
    /// A name that identifies the server to people.
    pub name: String,
    /// The server's SSE endpoint URL.
    pub url: String,
    /// Headers to send with every request (`null` reads as none).
    #[serde(deserialize_with = "default_on_null")]
    pub headers: Vec<HttpHeader>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl McpServerSse {
    /// A server `name` at `url`, with no extra headers.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServerSse {
            name: name.into(),
            url: url.into(),
            headers: Vec::new(),
            meta: None,
        }
    }
}

setters!(McpServerSse {
    set { headers: Vec<HttpHeader> }
    opt { meta: Meta }
});

/// An HTTP header sent to an MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct HttpHeader {
    /// The header name.
    pub name: String,
    /// The header value.
    pub value: String,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl HttpHeader {
    /// The header `name: value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        HttpHeader {
            name: name.into(),
            value: value.into(),
            meta: None,
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

        let acp = r#"{"type":"acp","name":"a","id":"x"}"#;
        let s: McpServer = crate::decode(acp).unwrap();
        assert!(matches!(s, McpServer::Other(_)));
        assert_eq!(serde_json::to_string(&s).unwrap(), acp);
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
